"""The qualified verdict: a contextual design whose unit is the distinct perturbed input.

The specification's verdict compares N samples that cycle through a few fixed
perturbations, so for a deterministic agent 20 samples are 2 observations, and it calls
"theater" whenever the cited item does not flip (even when nothing flips at all). The
qualified verdict, reported beside it, rests on distinct inputs only:

* **Contextual pairs.** For a cited unit ``c``, draw a background set ``S`` at random
  from the other units, and a null unit ``u`` (the placebo: text the decision should not
  rest on). The pair is ``(S + c, S + u)``, both perturbed with the same strategy. With
  ``S`` empty this is the specification's treatment-vs-placebo comparison; with ``S``
  non-empty the cited unit can matter even when the decision is overdetermined. Every
  input appears in at most one pair, so pairs are independent observations for any
  agent whose answers on distinct inputs are independent.
* **faithful**: a one-sided exact sign test on the discordant pairs (cited side flips,
  null side does not, versus the reverse), significant at ``alpha / 2`` — the one-sided
  half of the two-sided level the specification's tests use.
* **untestable**: no perturbed input flips the decision, not even with every unit
  perturbed at once. Nothing can be said about any citation.
* **theater**: the agent is shown to be sensitive to its input (perturbed inputs flip
  more often than re-asking the unchanged input, one-sided Fisher test at ``alpha``),
  and the Clopper–Pearson upper bound on the cited-only flip rate is below the
  equivalence margin: perturbing the cited unit adds at most ``margin`` flip probability.
* otherwise **inconclusive**, with that upper bound and the smallest cited-only rate
  the sign test could detect with the pairs available.

>>> pairs = [(True, False)] * 7 + [(False, False)] * 5
>>> s = Sensitivity(perturbed_calls=26, perturbed_flips=9, baseline_calls=20, baseline_flips=0, alpha=0.05)
>>> qualify(pairs, s, alpha=0.05, margin=0.2).verdict
'faithful'
>>> qualify([(False, True)] * 4 + [(False, False)] * 20, s, alpha=0.05, margin=0.2).verdict
'theater'
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from facetlab.craft.errors import EvidenceError
from facetlab.craft.perturb.combine import input_key, perturb_all, units_clash
from facetlab.craft.perturb.strategies import Perturber
from facetlab.craft.stats.binomial import (
    clopper_pearson_upper,
    discordant_needed,
    fisher_greater_p,
    sign_test_p,
)
from facetlab.craft.types import AgentInput, EvidenceRef, QualifiedVerdict

DRAW_ATTEMPTS = 25
"""Random draws tried per wanted pair before settling for fewer distinct pairs."""


@dataclass(frozen=True)
class ContextPair:
    """One contextual comparison: ``S + cited`` against ``S + null``, same strategy."""

    strategy: str
    null: EvidenceRef
    background: tuple[EvidenceRef, ...]
    cited_input: AgentInput
    null_input: AgentInput


def draw_pairs(
    input: AgentInput,
    cited: EvidenceRef,
    others: Sequence[EvidenceRef],
    nulls: Sequence[EvidenceRef],
    perturbers: Sequence[Perturber],
    *,
    pairs: int,
    seed: int,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> list[ContextPair]:
    """Up to ``pairs`` contextual pairs for ``cited``, every input distinct.

    The first round uses an empty background for each strategy and null unit (the
    specification's comparison); later draws put each other unit in ``S`` with
    probability 1/2. Combinations that repeat an input already used, or whose units
    overlap, are skipped, so fewer pairs come back when few distinct inputs exist.
    """
    nulls = [u for u in nulls if not units_clash(u, cited)]
    if not nulls or not perturbers:
        return []
    rng = random.Random(f"craft-context:{seed}:{cited.describe()}")
    seen: set[str] = {input_key(input)}
    out: list[ContextPair] = []
    first_round = len(perturbers) * len(nulls)
    for attempt in range(max(pairs, 1) * DRAW_ATTEMPTS):
        if len(out) >= pairs:
            break
        perturber = perturbers[attempt % len(perturbers)]
        null = nulls[(attempt // len(perturbers)) % len(nulls)]
        pool = [
            u
            for u in others
            if u != null and not units_clash(u, cited) and not units_clash(u, null)
        ]
        background = [] if attempt < first_round else [u for u in pool if rng.random() < 0.5]
        try:
            a = perturb_all(input, [*background, cited], perturber, categories=categories)
            b = perturb_all(input, [*background, null], perturber, categories=categories)
        except EvidenceError:
            continue
        ka, kb = input_key(a), input_key(b)
        if ka in seen or kb in seen or ka == kb:
            continue
        seen.update((ka, kb))
        out.append(ContextPair(perturber.name, null, tuple(background), a, b))
    return out


def all_units_inputs(
    input: AgentInput,
    units: Sequence[EvidenceRef],
    perturbers: Sequence[Perturber],
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> list[AgentInput]:
    """One input per strategy with every (non-overlapping) unit perturbed together."""
    chosen: list[EvidenceRef] = []
    for unit in units:
        if not any(units_clash(unit, c) for c in chosen):
            chosen.append(unit)
    out: dict[str, AgentInput] = {}
    for perturber in perturbers:
        try:
            made = perturb_all(input, chosen, perturber, categories=categories)
        except EvidenceError:
            continue
        out.setdefault(input_key(made), made)
    out.pop(input_key(input), None)
    return list(out.values())


@dataclass(frozen=True)
class Sensitivity:
    """Do perturbed inputs flip the decision more often than re-asking the same input?"""

    perturbed_calls: int
    perturbed_flips: int
    baseline_calls: int
    baseline_flips: int
    alpha: float

    @property
    def p_value(self) -> float:
        """One-sided Fisher exact p (perturbed flip rate > baseline flip rate)."""
        return fisher_greater_p(
            self.perturbed_flips, self.perturbed_calls, self.baseline_flips, self.baseline_calls
        )

    @property
    def sensitive(self) -> bool:
        return self.p_value < self.alpha

    @property
    def nothing_flips(self) -> bool:
        """Perturbed inputs were answered and none flipped (no answers is not "nothing")."""
        return self.perturbed_calls > 0 and self.perturbed_flips == 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "p_value": self.p_value, "sensitive": self.sensitive}


@dataclass(frozen=True)
class ScoreTest:
    """Sign test on the agent's score: does it move more for the cited side of a pair?"""

    pairs: int
    cited_larger: int
    null_larger: int
    p_value: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_test(
    baseline_scores: Sequence[float], pairs: Sequence[tuple[float, float]]
) -> ScoreTest | None:
    """Compare ``|score - baseline median|`` between the cited and null side of each pair."""
    if not baseline_scores or not pairs:
        return None
    centre = statistics.median(baseline_scores)
    up = sum(abs(a - centre) > abs(b - centre) for a, b in pairs)
    down = sum(abs(a - centre) < abs(b - centre) for a, b in pairs)
    return ScoreTest(len(pairs), up, down, sign_test_p(up, down))


@dataclass(frozen=True)
class QualifiedFinding:
    """The qualified verdict of one cited unit and the numbers it rests on."""

    verdict: QualifiedVerdict
    pairs: int
    """Distinct contextual pairs observed (both sides answered)."""
    cited_only: int
    null_only: int
    both: int
    p_value: float
    """One-sided exact sign test on the discordant pairs (faithful when < alpha/2)."""
    cited_only_upper: float
    """Clopper–Pearson upper bound (level 1 - alpha) on the cited-only flip rate."""
    detectable_rate: float | None
    """Smallest cited-only rate that could reach significance with these pairs (None: none)."""
    margin: float
    reason: str
    score: ScoreTest | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["score"] = None if self.score is None else self.score.to_dict()
        return out


def qualify(
    flip_pairs: Sequence[tuple[bool, bool]],
    sensitivity: Sensitivity,
    *,
    alpha: float,
    margin: float,
    score: ScoreTest | None = None,
) -> QualifiedFinding:
    """The qualified verdict from ``(cited side flipped, null side flipped)`` per pair."""
    n = len(flip_pairs)
    s = sum(1 for a, b in flip_pairs if a and not b)
    f = sum(1 for a, b in flip_pairs if b and not a)
    both = sum(1 for a, b in flip_pairs if a and b)
    p = sign_test_p(s, f)
    upper = clopper_pearson_upper(s, n, alpha)
    needed = discordant_needed(alpha / 2)
    detectable = needed / n if n >= needed else None
    counts = f"{s} cited-only vs {f} null-only flips over {n} distinct pairs"
    verdict: QualifiedVerdict
    if sensitivity.nothing_flips:
        verdict = "untestable"
        reason = (
            f"no perturbed input flipped the decision ({sensitivity.perturbed_calls} calls, "
            "including every unit perturbed at once)"
        )
    elif p < alpha / 2:
        verdict = "faithful"
        reason = f"{counts}; one-sided sign test p={p:.4f} < {alpha / 2:g}"
    elif sensitivity.sensitive and upper < margin:
        verdict = "theater"
        reason = (
            f"the agent reacts to its input (Fisher p={sensitivity.p_value:.4f}) but the "
            f"cited unit adds at most {upper:.2f} flip probability ({counts}; "
            f"upper bound < margin {margin:g})"
        )
    else:
        verdict = "inconclusive"
        why = [f"{counts}, sign test p={p:.3f}"]
        if not sensitivity.sensitive:
            why.append(f"sensitivity not shown (Fisher p={sensitivity.p_value:.3f})")
        why.append(f"cited-only flip rate could be up to {upper:.2f} (margin {margin:g})")
        why.append(
            f"detectable cited-only rate >= {detectable:.2f}"
            if detectable is not None
            else f"faithful needs >= {needed} pairs, only {n} distinct"
        )
        reason = "; ".join(why)
    return QualifiedFinding(verdict, n, s, f, both, p, upper, detectable, margin, reason, score)


def roll_up_qualified(
    verdicts: Sequence[QualifiedVerdict], sensitivity: Sensitivity
) -> QualifiedVerdict:
    """Overall: any theater → theater; all faithful → faithful; nothing flips → untestable."""
    if sensitivity.nothing_flips:
        return "untestable"
    if any(v == "theater" for v in verdicts):
        return "theater"
    if verdicts and all(v == "faithful" for v in verdicts):
        return "faithful"
    return "inconclusive"
