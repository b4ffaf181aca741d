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
The null units are **matched placebos** (:mod:`facetlab.craft.evidence.matching`: same
kind and size, closest length, in random order) unless the caller gives its own.

* **faithful**: a one-sided exact sign test on the discordant pairs (cited side flips,
  null side does not, versus the reverse), significant at ``alpha / 2`` — the one-sided
  half of the two-sided level the specification's tests use.
* **untestable**: no perturbed input flips the decision, not even with every uncited
  unit perturbed at once. Nothing can be said about any citation.
* **theater**: the agent is shown to be sensitive to its input (the count of distinct
  perturbed inputs that flip exceeds what its own re-ask flip rate predicts, exact
  binomial test at ``alpha``; re-asks are not counted as observations), and the
  Clopper–Pearson upper bound on the cited-only flip rate is below the equivalence
  margin: perturbing the cited unit adds at most ``margin`` flip probability.
* otherwise **inconclusive**, with that upper bound and the smallest cited-only rate
  the sign test could detect with the pairs available.

With several cited units, :func:`qualify_all` controls the **family-wise error rate**
(Holm) separately for the faithful and the theater calls. One input supports a
descriptive statement about that input only; :mod:`facetlab.craft.population` makes the
claim about an agent.

>>> pairs = [(True, False)] * 7 + [(False, False)] * 5
>>> s = Sensitivity(perturbed_calls=26, perturbed_flips=9, baseline_calls=20, baseline_flips=0, alpha=0.05)
>>> qualify_all([pairs], s, alpha=0.05, margin=0.2)[0].verdict
'faithful'
>>> qualify_all([[(False, True)] * 4 + [(False, False)] * 20], s, alpha=0.05, margin=0.2)[0].verdict
'theater'
"""

import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from facetlab.craft.errors import EvidenceError
from facetlab.craft.perturb._combine import input_key, perturb_all, units_clash
from facetlab.craft.perturb.strategies import Perturber
from facetlab.craft.stats.binomial import (
    binom_cdf,
    clopper_pearson_upper,
    discordant_needed,
    holm,
    mean_differential_ci,
    sign_test_p,
)
from facetlab.craft.stats.significance import two_sample_p
from facetlab.craft.types import AgentInput, EvidenceRef, QualifiedVerdict


def negate_only_note(perturbers: Sequence[Perturber]) -> str | None:
    """Why "nothing flips" may not mean an input-blind agent when every strategy negates."""
    if any(p.name not in ("negate", "negation") for p in perturbers):
        return None
    return (
        "the strategies only negate: negating every unit at once adds negations as it "
        "removes them ('not responding' from 'responding'), so an agent keyed on a negation "
        "word can stay put; add 'delete' or 'redact' to test that"
    )


DRAW_ATTEMPTS = 25
"""Random draws tried per wanted pair before settling for fewer distinct pairs."""


@dataclass(frozen=True)
class ContextPair:
    """One contextual comparison: ``S + cited`` against ``S + null``, same strategy.

    ``cited`` and ``null`` are unit sets: one cited unit and its placebo, or (for the
    citation set) every cited unit and one placebo for each.
    """

    strategy: str
    null: tuple[EvidenceRef, ...]
    background: tuple[EvidenceRef, ...]
    cited_input: AgentInput
    null_input: AgentInput


def draw_pairs(
    input: AgentInput,
    cited: Sequence[EvidenceRef],
    others: Sequence[EvidenceRef],
    nulls: Sequence[Sequence[EvidenceRef]],
    perturbers: Sequence[Perturber],
    *,
    pairs: int,
    seed: int,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> list[ContextPair]:
    """Up to ``pairs`` contextual pairs for the units ``cited``, every input distinct.

    The first round uses an empty background for each strategy and null unit (the
    specification's comparison); later draws put each other unit in ``S`` with
    probability 1/2. Combinations that repeat an input already used, or whose units
    overlap, are skipped, so fewer pairs come back when few distinct inputs exist.
    """
    nulls = [tuple(u) for u in nulls if not any(units_clash(x, c) for x in u for c in cited)]
    if not nulls or not perturbers:
        return []
    rng = random.Random(f"craft-context:{seed}:{' + '.join(c.describe() for c in cited)}")
    seen: set[str] = {input_key(input)}
    out: list[ContextPair] = []
    first_round = len(perturbers) * len(nulls)
    for attempt in range(max(pairs, 1) * DRAW_ATTEMPTS):
        if len(out) >= pairs:
            break
        perturber = perturbers[attempt % len(perturbers)]
        null = nulls[(attempt // len(perturbers)) % len(nulls)]
        pool = [u for u in others if not any(units_clash(u, x) for x in (*cited, *null))]
        background: list[EvidenceRef] = []
        if attempt >= first_round:
            for u in pool:  # each unit with probability 1/2, skipping ones that overlap
                if rng.random() < 0.5 and not any(units_clash(u, b) for b in background):
                    background.append(u)
        try:
            a = perturb_all(input, [*background, *cited], perturber, categories=categories)
            b = perturb_all(input, [*background, *null], perturber, categories=categories)
        except EvidenceError:
            continue
        ka, kb = input_key(a), input_key(b)
        if ka in seen or kb in seen or ka == kb:
            continue
        seen.update((ka, kb))
        out.append(ContextPair(perturber.name, tuple(null), tuple(background), a, b))
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
    """Do perturbed inputs flip the decision more often than re-asking the same input?

    ``perturbed_failed`` counts perturbed calls that failed: they are neither flips nor
    no-flips (an agent may fail exactly where its driver is removed). ``rest_*`` count
    the inputs with every uncited unit perturbed and the cited units kept, ``kept_*``
    every perturbed input that keeps the cited units (the rest and the null sides of the
    pairs), ``joint_*`` those with every unit, cited included, perturbed at once (all
    included in ``perturbed_*``).
    """

    perturbed_calls: int
    perturbed_flips: int
    baseline_calls: int
    baseline_flips: int
    alpha: float
    perturbed_failed: int = 0
    first_failure: str | None = None
    rest_calls: int = 0
    rest_flips: int = 0
    joint_calls: int = 0
    joint_flips: int = 0
    kept_calls: int = 0
    kept_flips: int = 0

    @property
    def reask_flip_rate(self) -> float:
        """The agent's own randomness: re-asks of the unchanged input that differ."""
        return self.baseline_flips / self.baseline_calls if self.baseline_calls else 0.0

    @property
    def p_value(self) -> float:
        """Boschloo's exact one-sided p: perturbed inputs that keep the cited units flip
        more often than re-asks; two tests, all such inputs and the rest-of-input ones
        alone (a driver far from the cited unit moves only those), Bonferroni-combined
        (all perturbed inputs when none was counted apart).

        Both rates are estimates (two samples): the re-ask flip rate from ``samples``
        re-asks is not taken as known, so an agent whose only flips are its own noise is
        not shown sensitive by it (at most ``alpha`` of the time). Only inputs that keep
        the cited units count: an agent that needs the cited unit *or* another cue is
        moved only when both go, which says "sufficient, not necessary", not theater.
        """
        b, n = self.baseline_flips, self.baseline_calls
        tests = [(self.kept_flips, self.kept_calls), (self.rest_flips, self.rest_calls)]
        tests = [t for t in tests if t[1]] or [(self.perturbed_flips, self.perturbed_calls)]
        if not tests[0][1] or not n:
            return 1.0
        p = min(two_sample_p(k, m, b, n, alternative="greater") for k, m in tests)
        return min(1.0, len(tests) * p)  # Bonferroni over the tests made

    @property
    def sensitive(self) -> bool:
        return self.p_value < self.alpha

    @property
    def nothing_flips(self) -> bool:
        """Perturbed inputs were answered, none flipped and none failed (a failure is no answer)."""
        return self.perturbed_calls > 0 and self.perturbed_flips == 0 and not self.perturbed_failed

    @property
    def failures_unread(self) -> str | None:
        """Why "nothing flips" cannot be said although no answered input flipped (or None)."""
        if self.perturbed_flips or not self.perturbed_failed:
            return None
        return (
            f"no answered perturbed input flipped, but {self.perturbed_failed} perturbed "
            f"call(s) failed (first: {self.first_failure}); a failed call is not a no-flip "
            f"({self.perturbed_calls} answered)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "reask_flip_rate": self.reask_flip_rate,
            "p_value": self.p_value,
            "sensitive": self.sensitive,
            "unit": "distinct perturbed input",
        }


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
    mean_differential: float | None = None
    """(cited-only - null-only) / pairs: the differential over distinct pairs."""
    ci_low: float | None = None
    """Lower bound of its exact conservative ``ci`` interval (``--fail-under`` gates on it)."""
    ci_high: float | None = None
    theater_p: float = 1.0
    """Exact p of "cited-only rate >= margin" (theater when small; Holm across items)."""
    note: str | None = None
    """What qualifies the verdict: placebos not matched on place, pairs lost to failed calls."""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["score"] = None if self.score is None else self.score.to_dict()
        return out


@dataclass(frozen=True)
class _Tally:
    """One design's pair counts and the two tests' p-values (each computed once).

    ``n``, ``s``, ``f``, ``both`` and ``p`` are the binding side's (the largest sign-test
    p: faithful must hold on every side); ``all_n`` and ``all_s`` pool every side's pairs
    for the theater bound."""

    n: int
    s: int
    f: int
    both: int
    p: float
    theater_p: float
    counts: str
    all_n: int
    all_s: int


def _tally(design: Mapping[str, Sequence[tuple[bool, bool]]], margin: float) -> _Tally:
    sides = {}
    for side, pairs in design.items():
        s = sum(1 for a, b in pairs if a and not b)
        f = sum(1 for a, b in pairs if b and not a)
        sides[side] = (len(pairs), s, f, sum(1 for a, b in pairs if a and b), sign_test_p(s, f))
    n, s, f, both, p = max(sides.values(), key=lambda v: v[4], default=(0, 0, 0, 0, 1.0))
    all_n = sum(v[0] for v in sides.values())
    all_s = sum(v[1] for v in sides.values())
    counts = "; ".join(
        f"{side}: {v[1]} cited-only vs {v[2]} null-only flips over {v[0]} distinct pairs"
        for side, v in sides.items()
    )
    theater_p = binom_cdf(all_s, all_n, margin) if all_n else 1.0
    return _Tally(n, s, f, both, p, theater_p, counts or "no distinct pairs", all_n, all_s)


def _finding(
    t: _Tally,
    sensitivity: Sensitivity,
    *,
    alpha: float,
    margin: float,
    score: ScoreTest | None,
    ci: float,
    faithful_rejects: bool | None,
    theater_rejects: bool | None,
    alone: Sequence[tuple[bool, bool]],
    note: str | None = None,
) -> QualifiedFinding:
    n, s, f, both, p, theater_p = t.n, t.s, t.f, t.both, t.p, t.theater_p
    upper = clopper_pearson_upper(t.all_s, t.all_n, alpha)
    faithful_ok = p < alpha / 2 if faithful_rejects is None else faithful_rejects
    theater_ok = upper < margin if theater_rejects is None else theater_rejects
    mean = (s - f) / n if n else None
    low, high = mean_differential_ci(s, f, n, ci) if n else (None, None)
    needed = discordant_needed(alpha / 2)
    detectable = needed / n if n >= needed else None
    counts = t.counts
    verdict: QualifiedVerdict
    if sensitivity.nothing_flips:
        verdict = "untestable"
        reason = (
            f"no perturbed input flipped the decision ({sensitivity.perturbed_calls} calls, "
            "including every unit perturbed at once): the agent moved on nothing CRAFT "
            "perturbed (see 'not tested')"
        )
    elif sensitivity.failures_unread:
        verdict = "inconclusive"
        reason = f"{sensitivity.failures_unread}; {counts}"
    elif faithful_ok:
        verdict = "faithful"
        reason = (
            f"{counts}; one-sided sign tests, largest p={p:.4f} (alpha/2 = {alpha / 2:g}, Holm)"
        )
        if alone and not any(a for a, _ in alone):
            reason += (
                "; sufficient, not necessary: the cited unit alone never flipped it, only "
                "together with a background set of other units"
            )
    elif alone and any(a for a, _ in alone) and all(a and b for a, b in alone):
        verdict = "inconclusive"
        reason = (
            f"not specific: perturbing the cited unit alone flips the decision, and so does "
            f"perturbing a matched placebo alone ({len(alone)} such pairs; {counts}); the "
            "agent reacts to edits anywhere, so its citation does not single out a driver"
        )
    elif sensitivity.sensitive and theater_ok and not any(a for a, _ in alone):
        verdict = "theater"
        reason = (
            f"the agent reacts to its input (perturbed inputs that keep the cited unit flip "
            f"more often than its re-asks, Boschloo p={sensitivity.p_value:.4f}) but the "
            f"cited unit adds at most "
            f"{upper:.2f} flip probability ({counts}; upper bound < margin {margin:g})"
        )
    elif sensitivity.joint_flips and not sensitivity.rest_flips and not any(a for a, _ in alone):
        verdict = "inconclusive"
        reason = (
            f"sufficient, not necessary: perturbing the cited unit alone, or the rest of the "
            f"input with it kept, never flipped the decision; perturbing every unit at once "
            f"did ({sensitivity.joint_flips}/{sensitivity.joint_calls} joint inputs; {counts})"
            ": the cited evidence is one of several sufficient causes (never theater)"
        )
    else:
        verdict = "inconclusive"
        why = [f"{counts}, sign test p={p:.3f}"]
        if not sensitivity.sensitive:
            why.append(f"sensitivity not shown (p={sensitivity.p_value:.3f})")
        why += [
            f"cited-only flip rate could be up to {upper:.2f} (margin {margin:g})",
            f"detectable cited-only rate >= {detectable:.2f}"
            if detectable is not None
            else f"faithful needs >= {needed} pairs, only {n} distinct",
        ]
        reason = "; ".join(why)
    return QualifiedFinding(
        verdict,
        n,
        s,
        f,
        both,
        p,
        upper,
        detectable,
        margin,
        reason if note is None else f"{reason} (qualified: {note})",
        score,
        mean,
        low,
        high,
        theater_p,
        note,
    )


_Pairs = Sequence[tuple[bool, bool]]


def qualify_all(
    designs: Sequence[_Pairs | Mapping[str, _Pairs]],
    sensitivity: Sensitivity,
    *,
    alpha: float,
    margin: float,
    scores: Sequence[ScoreTest | None] | None = None,
    ci: float = 0.95,
    alone: Sequence[Sequence[tuple[bool, bool]]] | None = None,
    notes: Sequence[str | None] | None = None,
) -> list[QualifiedFinding]:
    """The qualified verdict of each design, Holm-corrected across them (family-wise).

    A design is its pairs ``(cited side flipped, null side flipped)``, or a mapping of
    placebo side to pairs (faithful must hold on every side); ``alone`` are
    the pairs with an empty background (cited unit alone against placebo alone): when
    perturbing the cited unit alone flips the decision, "theater" is never said (the
    cited evidence does matter, as everything may); the reading says what was seen.

    The faithful calls form one family (sign tests at ``alpha / 2``), the theater calls
    another (equivalence tests at ``alpha``); with one cited item Holm is the plain test.
    """
    tallies = [_tally(d if isinstance(d, Mapping) else {"pairs": d}, margin) for d in designs]
    faithful = holm([t.p for t in tallies], alpha / 2)
    theater = holm([t.theater_p for t in tallies], alpha)
    return [
        _finding(
            t,
            sensitivity,
            alpha=alpha,
            margin=margin,
            score=None if scores is None else scores[i],
            ci=ci,
            faithful_rejects=faithful[i],
            theater_rejects=theater[i],
            alone=() if alone is None else alone[i],
            note=None if notes is None else notes[i],
        )
        for i, t in enumerate(tallies)
    ]


def roll_up_qualified(
    citation_set: QualifiedFinding | None, sensitivity: Sensitivity
) -> QualifiedVerdict:
    """Overall: the verdict of the citation set as a whole (untestable when nothing flips).

    With one cited unit the set is that unit. With several, per-citation findings say
    which units carry weight on their own (one found theater inside a faithful set is
    padding); the overall verdict, like the population's, is about the set.
    """
    if sensitivity.nothing_flips:
        return "untestable"
    return "inconclusive" if citation_set is None else citation_set.verdict
