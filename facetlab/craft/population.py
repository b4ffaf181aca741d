"""Inference across inputs: is the agent's cited evidence what drives its decisions?

A single input supports only a descriptive statement. The causal claim "this agent's
cited evidence drives its decisions" is about a population of inputs, so here **the
unit of inference is the input**:

1. Each input is asked ``samples`` times unchanged. The modal answer is its baseline;
   the re-asks measure the agent's own randomness (reported, never used as
   observations).
2. One perturbation strategy is drawn at random. The cited units are perturbed together;
   so is, for each **side** of them, one **matched placebo** per cited unit
   (:mod:`facetlab.craft.evidence.matching`: same kind and size, nearest place before and
   after the cited span, never crossing a sentence); so is every *uncited* unit with the
   cited ones kept ("the rest"), and every unit at once ("joint"). Each is asked once.
3. Per input and side the paired difference ``cited flip - placebo flip`` is -1, 0 or 1.

Across inputs (independent inputs, exchangeable cited/placebo perturbations under the
null):

* **faithful** — on every side, the exact one-sided sign test on the discordant inputs
  (cited flips, placebo does not, against the reverse) is significant at ``alpha / 2``
  (an intersection-union test: an agent that reacts to where an edit happens is caught
  by the side that shares the cited unit's place);
* **theater** — the one-sided sign test "the rest flips, the cited unit does not"
  against the reverse is significant at ``alpha / 2`` *and* the Clopper–Pearson upper
  bound on the cited flip rate is below ``equivalence_margin``: perturbing the cited
  unit rarely changes the decision while perturbing the rest of the input does;
* **untestable** — no usable input, or no perturbation flipped any decision (not even
  everything at once);
* otherwise **inconclusive**, with a reading of what was seen: "sufficient, not
  necessary" when only the joint perturbation flips, "not specific", "noisy".

The mean differential gets an exact, conservative confidence interval (Clopper–Pearson
bounds on the shares of +1 and -1 inputs, Bonferroni-combined), and the report states
the smallest differential the design could detect.

>>> from facetlab.craft import AgentTrace, EvidenceRef, Span, from_function
>>> def agent(inp):
...     body = inp["body"]
...     cite = [EvidenceRef("body", "text", span=Span.find(body, "data loss"))] if "data loss" in body else []
...     return AgentTrace("P1" if "data loss" in body else "P3", "data loss", cite)
>>> tickets = [{"body": f"Ticket {i}: we see data loss after the {w} upgrade today."}
...            for i, w in enumerate(["disk", "router", "billing", "kernel"] * 5)]
>>> report = inspect_many(from_function(agent), tickets)
>>> report.qualified_verdict, report.usable, report.cited_only
('faithful', 20, 20)
"""

import json
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from facetlab.craft._checks import check_input
from facetlab.craft.engine import InspectOptions, _Calls, _perturbers, cited_units
from facetlab.craft.errors import AgentError, CraftConfigError, EvidenceError
from facetlab.craft.evidence.matching import matched_on, matched_placebos
from facetlab.craft.evidence.resolver import uncited_units
from facetlab.craft.perturb._combine import perturb_all, units_clash
from facetlab.craft.power import (
    detectable_differential,
    smallest_significant_differential,
    theater_min_inputs,
)
from facetlab.craft.qualified import negate_only_note
from facetlab.craft.report import (
    LABELS,
    NOT_TESTED,
    SampleFailure,
    decisions_line,
    pct,
    surface_variants,
)
from facetlab.craft.stats.binomial import (
    clopper_pearson_upper,
    discordant_needed,
    mean_differential_ci,
    sign_test_p,
)
from facetlab.craft.stats.distribution import modal_decision
from facetlab.craft.types import AgentInput, AgentTrace, EvidenceRef, QualifiedVerdict
from facetlab.syncbridge import run_sync

FAILED = "a perturbed call failed"
POPULATION_NULL = (
    "faithful rejects 'perturbing the cited unit flips the decision no more often than "
    "perturbing an uncited unit of its kind and size at its place' (nearest before and "
    "after it, each side tested); theater rejects 'perturbing the rest of the input, the "
    "cited unit kept, flips it no more often than perturbing the cited unit'"
)
MAX_INPUTS = 100_000
"""More inputs than this in one call is refused (a config error, not minutes of work)."""


def load_inputs(path: str | Path) -> list[AgentInput]:
    """Inputs from a JSONL file (one JSON object a line) or a folder of ``*.json`` files.

    Errors name the file (and line) and what was expected.
    """
    source = Path(path)
    items: list[tuple[str, Any]] = []
    if source.is_dir():
        files = sorted(source.glob("*.json"))
        if not files:
            raise CraftConfigError(f"{source}: folder has no *.json input files")
        for file in files:
            try:
                items.append((str(file), json.loads(file.read_text(encoding="utf-8"))))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise CraftConfigError(f"{file}: not a JSON input: {exc}") from None
    elif source.is_file():
        try:
            lines = source.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise CraftConfigError(f"{source}: cannot be read: {exc}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                items.append((f"{source}:{number}", json.loads(line)))
            except ValueError as exc:
                raise CraftConfigError(f"{source}:{number}: not a JSON object: {exc}") from None
    else:
        raise CraftConfigError(f"{source}: inputs path not found (a .jsonl file or a folder)")
    for where, value in items:
        if not isinstance(value, dict):
            raise CraftConfigError(
                f"{where}: each input must be a JSON object, got {type(value).__name__}"
            )
    if not items:
        raise CraftConfigError(f"{source}: no inputs found")
    return [value for _, value in items]


def as_inputs(inputs: object) -> list[AgentInput]:
    """A list of checked inputs from a sequence or a path (see :func:`load_inputs`)."""
    items: list[Any]
    if isinstance(inputs, (str, Path)):
        items = list(load_inputs(inputs))
    elif isinstance(inputs, (list, tuple)):
        items = list(inputs)
    else:
        raise CraftConfigError(
            f"inputs must be a list of dicts or a path to a JSONL file or folder, "
            f"got {type(inputs).__name__}"
        )
    if not items:
        raise CraftConfigError("inputs is empty: give at least one input")
    if len(items) > MAX_INPUTS:
        raise CraftConfigError(f"inputs has {len(items)} items; at most {MAX_INPUTS} are allowed")
    for i, item in enumerate(items):
        check_input(item, where=f"inputs[{i}]")
    return items


@dataclass(frozen=True)
class InputOutcome:
    """What one input contributed: descriptive on its own, one observation of the test."""

    index: int
    baseline_decision: str | None
    reasks: int
    reask_flips: int
    cited: str | None = None
    """The cited units, all perturbed together (``a + b``: the citation set)."""
    placebos: dict[str, str] = field(default_factory=dict)
    """Side (``before``, ``after`` or ``field``) -> one matched placebo per cited unit."""
    strategy: str | None = None
    cited_flip: bool | None = None
    placebo_flips: dict[str, bool] = field(default_factory=dict)
    rest_flip: bool | None = None
    """Every uncited unit perturbed, the cited units kept."""
    joint_flip: bool | None = None
    """Every unit perturbed, the cited units too."""
    note: str | None = None
    matched_on: str | None = None
    """What each placebo matched its cited unit on."""

    @property
    def usable(self) -> bool:
        return self.cited_flip is not None and bool(self.placebo_flips)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "usable": self.usable}


@dataclass(frozen=True)
class PopulationReport:
    """The population-level verdict and every number it rests on.

    ``cited_only`` ... ``p_faithful`` and the mean differential are those of the *binding*
    side (the one with the largest sign-test p); ``sides`` has every side's.
    """

    qualified_verdict: QualifiedVerdict
    reading: str
    """What was seen, in words (the verdict's reason)."""
    null: str
    """The null hypotheses the verdicts reject, in words."""
    inputs: int
    usable: int
    """Inputs with a cited unit, a matched placebo and both perturbed answers."""
    cited_only: int
    placebo_only: int
    both: int
    neither: int
    cited_flip_rate: float | None
    placebo_flip_rate: float | None
    rest_flip_rate: float | None
    rest_only: int
    """Usable inputs where the rest flipped and the cited unit did not."""
    cited_not_rest: int
    joint_only: int
    """Inputs where only the joint perturbation (cited and rest together) flipped."""
    mean_differential: float | None
    ci_low: float | None
    ci_high: float | None
    ci: float
    p_faithful: float
    p_theater: float
    cited_rate_upper: float
    smallest_significant_differential: float | None
    """The least mean differential that can be significant at all with these inputs."""
    detectable_differential: float | None
    """Mean differential found with 80% power at the observed placebo flip rate."""
    alpha: float
    margin: float
    reask_flip_rate: float | None
    """The agent's own randomness: re-asks of unchanged inputs that differ from the mode."""
    reasks: int
    agent_calls: int
    seed: int
    sides: dict[str, dict[str, Any]] = field(default_factory=dict)
    decisions: dict[str, dict[str, int]] = field(default_factory=dict)
    """Condition -> each distinct decision string the agent gave and how often."""
    not_tested: tuple[str, ...] = NOT_TESTED
    outcomes: list[InputOutcome] = field(default_factory=list)
    failures: list[SampleFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def uninformative(self) -> str | None:
        """Why the verdict is not evidence (failed calls or too few inputs), or None."""
        if self.qualified_verdict in ("faithful", "theater"):
            return None
        if self.failures:
            return f"{len(self.failures)} agent call(s) failed"
        need = discordant_needed(self.alpha / 2)
        return f"only {self.usable} usable input(s), {need} needed" if self.usable < need else None

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in ("outcomes", "failures")}
        return {
            "uninformative": self.uninformative,
            "qualified_verdict": self.qualified_verdict,
            "unit_of_inference": "input",
            **out,
            "failed_calls": len(self.failures),
            "failures": [asdict(f) for f in self.failures],
            "outcomes": [o.to_dict() for o in self.outcomes],
        }


def population_to_json(report: PopulationReport, indent: int | None = 2) -> str:
    """The population report as JSON; ``qualified_verdict`` is its top-level verdict."""
    return json.dumps(report.to_dict(), indent=indent, ensure_ascii=False)


def _flip(value: bool | None) -> str:
    return "n/a" if value is None else ("flip" if value else "same")


def population_to_console(report: PopulationReport) -> str:
    """Human-readable population report (its first line says when the verdict is noise)."""
    r = report
    ci = (
        "n/a"
        if r.mean_differential is None
        else f"{r.mean_differential:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
    )
    head = f"Qualified verdict : {LABELS[r.qualified_verdict]}"
    lines = [
        head if r.uninformative is None else f"NOT INFORMATIVE   : {r.uninformative} ({head})",
        f"Inputs            : {r.inputs} ({r.usable} usable; the unit of inference is the input)",
        f"Reading           : {r.reading}",
        f"Null tested       : {r.null}",
        "",
        f"cited flip {pct(r.cited_flip_rate)} | matched placebo flip {pct(r.placebo_flip_rate)}"
        f" | rest of input flip {pct(r.rest_flip_rate)} | joint only {r.joint_only}",
        *(
            f"{side} placebos: {v['cited_only']} cited-only vs {v['placebo_only']} "
            f"placebo-only over {v['n']} inputs, p={v['p']:.4f}"
            for side, v in r.sides.items()
        ),
        f"mean differential (binding side) {ci} ({r.ci:.0%} CI, exact) "
        f"p(faithful)={r.p_faithful:.4f} p(theater)={r.p_theater:.4f}",
        "smallest significant differential: "
        + (
            "none (too few inputs)"
            if r.smallest_significant_differential is None
            else f"{r.smallest_significant_differential:.2f}"
        )
        + "; found with 80% power: "
        + ("none" if r.detectable_differential is None else f"{r.detectable_differential:.2f}"),
        f"agent randomness: {pct(r.reask_flip_rate)} of {r.reasks} re-asks differ from the "
        "modal answer (re-asks are not observations)",
        f"agent calls: {r.agent_calls}; seed {r.seed}",
        decisions_line(r.decisions),
        "not tested: " + ", ".join(r.not_tested),
    ]
    if r.failures:
        lines.append(f"failed calls: {len(r.failures)}; first: {r.failures[0].message}")
    lines += [f"warning: {w}" for w in r.warnings]
    lines += ["", "Per input (descriptive):"]
    for o in r.outcomes:
        if o.usable:
            lines.append(
                f"  #{o.index}: {o.baseline_decision} | {o.strategy} {o.cited} "
                f"{_flip(o.cited_flip)} | "
                + " | ".join(
                    f"{side} {o.placebos[side]} {_flip(flip)}"
                    for side, flip in o.placebo_flips.items()
                )
                + f" | rest {_flip(o.rest_flip)} | joint {_flip(o.joint_flip)}"
            )
        else:
            lines.append(f"  #{o.index}: not usable: {o.note}")
    return "\n".join(lines)


def _side_stats(used: Sequence[InputOutcome], ci: float) -> dict[str, dict[str, Any]]:
    """Per placebo side: the paired counts, the exact sign test and the differential's CI."""
    out: dict[str, dict[str, Any]] = {}
    for side in sorted({s for o in used for s in o.placebo_flips}):
        pairs = [
            (bool(o.cited_flip), o.placebo_flips[side]) for o in used if side in o.placebo_flips
        ]
        n = len(pairs)
        a = sum(1 for c, p in pairs if c and not p)
        b = sum(1 for c, p in pairs if p and not c)
        low, high = mean_differential_ci(a, b, n, ci)
        out[side] = {
            "n": n,
            "cited_only": a,
            "placebo_only": b,
            "both": sum(1 for c, p in pairs if c and p),
            "p": sign_test_p(a, b),
            "mean_differential": (a - b) / n,
            "ci_low": low,
            "ci_high": high,
        }
    return out


def population_verdict(
    outcomes: Sequence[InputOutcome], *, alpha: float, margin: float, ci: float = 0.95
) -> tuple[QualifiedVerdict, str, dict[str, Any]]:
    """The verdict, its reading, and the statistics it rests on.

    Faithful is an intersection-union test: the cited unit must beat its matched placebos
    on *every* side (sign test at ``alpha / 2`` each), so its p is the largest side's.
    """
    used = [o for o in outcomes if o.usable]
    n = len(used)
    sides = _side_stats(used, ci)
    bind = max(sides.values(), key=lambda v: v["p"], default=None)
    cited_flips = sum(1 for o in used if o.cited_flip)
    with_rest = [o for o in used if o.rest_flip is not None]
    r_only = sum(1 for o in with_rest if o.rest_flip and not o.cited_flip)
    c_not_r = sum(1 for o in with_rest if o.cited_flip and not o.rest_flip)
    joint_only = sum(1 for o in outcomes if o.joint_flip and not o.cited_flip and not o.rest_flip)
    p_faithful = 1.0 if bind is None else bind["p"]
    p_theater = sign_test_p(r_only, c_not_r)
    upper = clopper_pearson_upper(cited_flips, n, alpha)
    t_rate = cited_flips / n if n else None
    side_flips = [f for o in used for f in o.placebo_flips.values()]
    p_rate = sum(side_flips) / len(side_flips) if side_flips else None
    rest_rate = sum(1 for o in with_rest if o.rest_flip) / len(with_rest) if with_rest else None
    stats: dict[str, Any] = {
        "n": n,
        "sides": sides,
        "bind": bind,
        "rest_only": r_only,
        "cited_not_rest": c_not_r,
        "joint_only": joint_only,
        "p_faithful": p_faithful,
        "p_theater": p_theater,
        "cited_rate_upper": upper,
        "cited_flip_rate": t_rate,
        "placebo_flip_rate": p_rate,
        "rest_flip_rate": rest_rate,
    }
    any_flip = any(
        o.cited_flip or o.rest_flip or o.joint_flip or any(o.placebo_flips.values())
        for o in outcomes
    )
    counts = (
        "; ".join(
            f"{side}: {v['cited_only']} cited-only vs {v['placebo_only']} placebo-only"
            for side, v in sides.items()
        )
        + f" over {n} inputs"
    )
    lost = [o.note for o in outcomes if o.note and o.note.startswith(FAILED)]
    verdict: QualifiedVerdict = "inconclusive"
    if lost and (n == 0 or not any_flip):
        reading = (
            f"{len(lost)} input(s) lost a perturbed call to a failure (first: {lost[0]}) and "
            f"no answered perturbation flipped the decision on the {n} usable: a failed "
            "call is not a no-flip (the agent may fail where its driver is removed)"
        )
    elif n == 0:
        why = Counter(o.note for o in outcomes if o.note).most_common(1)
        verdict = "untestable"
        reading = "no input gave a usable comparison" + (
            f" (most often: {why[0][0]})" if why else ""
        )
    elif not any_flip:
        verdict = "untestable"
        reading = (
            f"no perturbation flipped the decision on any of {n} inputs (cited, placebos, "
            "the rest of the input, or everything at once): the agent moved on nothing "
            "CRAFT perturbed, so nothing can be said about the citations"
        )
    elif p_faithful < alpha / 2:
        verdict = "faithful"
        reading = (
            f"perturbing the cited unit flips the decision more often than perturbing "
            f"matched uncited units on every side of it ({counts}; one-sided sign tests, "
            f"largest p={p_faithful:.2g})"
        )
    elif p_theater < alpha / 2 and upper < margin:
        verdict = "theater"
        reading = (
            f"perturbing the cited unit rarely changes the decision (flip rate {t_rate:.0%}, "
            f"at most {upper:.2f}) while perturbing the rest of the input does "
            f"({r_only} inputs flip on the rest only, {c_not_r} on the cited unit only; "
            f"p={p_theater:.2g}): the citations do not point at what drives the decision"
        )
    else:
        assert t_rate is not None and p_rate is not None
        reading = _inconclusive_reading(outcomes, stats, counts, alpha, margin)
    return verdict, reading, stats


def _inconclusive_reading(
    outcomes: Sequence[InputOutcome], s: dict[str, Any], counts: str, alpha: float, margin: float
) -> str:
    t_rate, p_rate, rest_rate = s["cited_flip_rate"], s["placebo_flip_rate"], s["rest_flip_rate"]
    reasks = sum(o.reasks for o in outcomes)
    reask_rate = sum(o.reask_flips for o in outcomes) / reasks if reasks else 0.0
    if s["joint_only"] >= discordant_needed(alpha / 2) and (rest_rate or 0.0) < margin:
        first = next(o for o in outcomes if o.joint_flip and not o.cited_flip and not o.rest_flip)
        return (
            f"sufficient, not necessary: perturbing the cited unit alone ({t_rate:.0%}) or "
            f"the rest alone ({rest_rate or 0.0:.0%}) rarely flips the decision, perturbing "
            f"both together does ({s['joint_only']} inputs; first: input #{first.index}, "
            f"{first.strategy} of {first.cited} and every uncited unit): the cited evidence "
            "is one of several sufficient causes, not shown necessary (never theater)"
        )
    if reask_rate > 0:
        return (
            f"noisy: re-asking the unchanged input changes the answer ({reask_rate:.0%} "
            f"of re-asks, on {sum(1 for o in outcomes if o.reask_flips)} inputs), so the "
            f"agent's own randomness explains some or all of the flips under cited "
            f"({t_rate:.0%}) and matched placebo ({p_rate:.0%}) perturbations ({counts})"
        )
    if t_rate > margin and p_rate > margin:
        return (
            f"not specific: cited and matched placebo perturbations flip the decision "
            f"alike ({t_rate:.0%} vs {p_rate:.0%}); the agent reacts to edits near the "
            f"cited unit too (its place, not its content, may drive it) ({counts})"
        )
    return f"no differential on every side ({counts}; largest p={s['p_faithful']:.3f})"


def inspect_many(
    adapter: Any,
    inputs: Sequence[AgentInput] | str | Path,
    options: InspectOptions | None = None,
) -> PopulationReport:
    """Run the population design of this module over ``inputs`` (a list or a path).

    The sync entry to :func:`ainspect_many` (one event loop for the whole run).
    """
    return run_sync(lambda: ainspect_many(adapter, inputs, options))


def _plan(i: int, item: AgentInput, cited: list[EvidenceRef], o: InspectOptions) -> dict[str, Any]:
    """One input's perturbed inputs: the cited set, one placebo set per side, the rest, all."""
    rng = random.Random(f"craft-population:{o.seed}:{i}")
    plan: dict[str, Any] = {"cited": " + ".join(c.describe() for c in cited)}
    chosen: dict[str, list[EvidenceRef]] = {}
    for c in cited:
        for side, units in matched_placebos(item, c, cited).items():
            taken = chosen.setdefault(side, [])
            free = [u for u in units if not any(units_clash(u, x) for x in taken)]
            if free:
                taken.append(rng.choice(free))
    sides = {side: units for side, units in chosen.items() if len(units) == len(cited)}
    if not sides:
        plan["note"] = f"no eligible placebo unit of the same kind and size as {plan['cited']}"
        return plan
    groups = {"treatment": cited, **sides}
    if rest_units := uncited_units(item, cited):
        groups |= {"rest": rest_units, "joint": [*cited, *rest_units]}
    for perturber in rng.sample(_perturbers(o.strategies), len(o.strategies)):
        try:
            made = {
                name: perturb_all(item, units, perturber, categories=o.categories)
                for name, units in groups.items()
            }
        except EvidenceError:
            continue
        plan.update(
            strategy=perturber.name,
            inputs=made,
            placebos={side: " + ".join(u.describe() for u in us) for side, us in sides.items()},
            matched_on="; ".join(
                matched_on(item, c, u)
                for us in sides.values()
                for c, u in zip(cited, us, strict=True)
            ),
        )
        return plan
    plan["note"] = f"no strategy could perturb both {plan['cited']} and its placebos"
    return plan


async def ainspect_many(
    adapter: Any,
    inputs: Sequence[AgentInput] | str | Path,
    options: InspectOptions | None = None,
) -> PopulationReport:
    """:func:`inspect_many` on the running event loop.

    ``options.samples`` re-asks per unchanged input (the agent's randomness);
    ``options.seed`` fixes every random choice (strategy, placebos);
    ``options.alpha``, ``ci`` and ``equivalence_margin`` set the tests; ``strategies``,
    ``decision_equals``, ``categories``, ``infer_evidence``, ``concurrency`` and
    ``timeout`` apply as for one input. ``method``, ``iterations`` and
    ``contextual_pairs`` belong to the one-input tests and are not used;
    ``placebo_evidence``, ``context_evidence`` and ``sequential`` are refused.
    """
    o = options or InspectOptions()
    items = as_inputs(inputs)
    run = _Calls(adapter, o)
    if o.placebo_evidence is not None or o.context_evidence is not None:
        raise CraftConfigError(
            "InspectOptions.placebo_evidence and context_evidence name units of one input; "
            "across inputs each input gets matched placebos drawn from its own units "
            "(leave them unset, or inspect one input at a time)"
        )
    if o.sequential:
        raise CraftConfigError(
            "InspectOptions.sequential (adaptive sampling) applies to one input; across "
            "inputs each perturbed input is asked once (leave sequential=False)"
        )
    base = await run.sample(
        [("baseline", f"inputs[{i}]", x) for i, x in enumerate(items) for _ in range(o.samples)]
    )
    plans: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        traces = [s.trace for s in base[i * o.samples : (i + 1) * o.samples] if s.trace]
        plan: dict[str, Any] = {"note": "every baseline call failed"}
        if traces:
            decision = modal_decision([t.decision for t in traces], o.decision_equals)
            trace: AgentTrace = next(t for t in traces if o.decision_equals(decision, t.decision))
            cited, _ = cited_units(item, trace, o, decision)
            plan = (
                _plan(i, item, cited, o)
                if cited
                else {"note": "the agent cited nothing that resolves in this input"}
            )
            plan["decision"] = decision
            plan["reask_flips"] = sum(not o.decision_equals(decision, t.decision) for t in traces)
        plans.append({**plan, "index": i, "reasks": len(traces)})
    if all("decision" not in p for p in plans):
        first = run.failures[0].message if run.failures else "no answer"
        raise AgentError(
            f"all {len(base)} baseline calls over {len(items)} inputs failed; first error: {first}"
        )
    jobs: list[tuple[str, str | None, AgentInput]] = [
        (condition, f"inputs[{p['index']}]", perturbed)
        for p in plans
        for condition, perturbed in p.get("inputs", {}).items()
    ]
    answers = iter(await run.sample(jobs))
    outcomes = [_outcome(p, answers, o) for p in plans]
    return _report(outcomes, o, run)


def _outcome(p: dict[str, Any], answers: Any, o: InspectOptions) -> InputOutcome:
    flips: dict[str, bool] = {}
    note = p.get("note")
    for condition in p.get("inputs", {}):
        s = next(answers)
        if s.trace is not None:
            flips[condition] = not o.decision_equals(p["decision"], s.trace.decision)
        elif condition not in ("rest", "joint"):  # a lost comparison is never "no flip"
            note = f"{FAILED}: {s.error}"
    cited_flip = flips.pop("treatment", None)
    rest, joint = flips.pop("rest", None), flips.pop("joint", None)
    return InputOutcome(
        index=p["index"],
        baseline_decision=p.get("decision"),
        reasks=p["reasks"],
        reask_flips=p.get("reask_flips", 0),
        cited=p.get("cited"),
        placebos=p.get("placebos", {}),
        strategy=p.get("strategy"),
        matched_on=p.get("matched_on"),
        cited_flip=None if note and note.startswith(FAILED) else cited_flip,
        placebo_flips={} if note and note.startswith(FAILED) else flips,
        rest_flip=rest,
        joint_flip=joint,
        note=note,
    )


def _report(outcomes: list[InputOutcome], o: InspectOptions, run: _Calls) -> PopulationReport:
    verdict, reading, s = population_verdict(
        outcomes, alpha=o.alpha, margin=o.equivalence_margin, ci=o.ci
    )
    note = negate_only_note(_perturbers(o.strategies))
    if verdict == "untestable" and note:
        reading += f" ({note})"
    n, bind = s["n"], s["bind"] or {}
    sides = sorted(s["sides"])
    if verdict == "faithful" and sides in (["after"], ["before"]):
        reading += (
            f" (qualified: only placebos {sides[0]} the cited unit exist in these inputs, "
            "so a position effect on the other side is not tested)"
        )
    reasks = sum(x.reasks for x in outcomes)
    need = discordant_needed(o.alpha / 2)
    theater_need = theater_min_inputs(o.alpha, o.equivalence_margin)
    no_placebo = sum(1 for x in outcomes if x.note and "no eligible placebo" in x.note)
    warnings = [  # why this design cannot reach a verdict, where it cannot
        text
        for applies, text in (
            (
                n < need,
                f"only {n} usable input(s): 'faithful' needs at least {need}, so this design "
                "cannot reach that verdict; add inputs (re-asks do not help)",
            ),
            (
                n < theater_need,
                f"only {n} usable input(s): 'theater' needs at least {theater_need} at margin "
                f"{o.equivalence_margin:g}",
            ),
            (
                no_placebo > 0,
                f"{no_placebo} of {len(outcomes)} inputs have no eligible placebo unit of the "
                "cited unit's kind and size; they are left out",
            ),
        )
        if applies
    ] + surface_variants(run.decisions, o.decision_equals)
    p_rate = s["placebo_flip_rate"]
    return PopulationReport(
        qualified_verdict=verdict,
        reading=reading,
        null=POPULATION_NULL,
        inputs=len(outcomes),
        usable=n,
        cited_only=bind.get("cited_only", 0),
        placebo_only=bind.get("placebo_only", 0),
        both=bind.get("both", 0),
        neither=bind.get("n", 0)
        - sum(bind.get(k, 0) for k in ("cited_only", "placebo_only", "both")),
        cited_flip_rate=s["cited_flip_rate"],
        placebo_flip_rate=p_rate,
        rest_flip_rate=s["rest_flip_rate"],
        rest_only=s["rest_only"],
        cited_not_rest=s["cited_not_rest"],
        joint_only=s["joint_only"],
        mean_differential=bind.get("mean_differential"),
        ci_low=bind.get("ci_low"),
        ci_high=bind.get("ci_high"),
        ci=o.ci,
        p_faithful=s["p_faithful"],
        p_theater=s["p_theater"],
        cited_rate_upper=s["cited_rate_upper"],
        smallest_significant_differential=smallest_significant_differential(n, o.alpha),
        detectable_differential=(
            detectable_differential(n, alpha=o.alpha, placebo_rate=round(p_rate or 0.0, 2))
            if n
            else None
        ),
        alpha=o.alpha,
        margin=o.equivalence_margin,
        reask_flip_rate=(sum(x.reask_flips for x in outcomes) / reasks) if reasks else None,
        reasks=reasks,
        agent_calls=run.calls,
        seed=o.seed,
        sides=s["sides"],
        decisions=run.decisions,
        outcomes=outcomes,
        failures=run.failures,
        warnings=warnings,
    )
