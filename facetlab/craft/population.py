"""Inference across inputs: is the agent's cited evidence what drives its decisions?

A single input supports only a descriptive statement. The causal claim "this agent's
cited evidence drives its decisions" is about a population of inputs, so here **the
unit of inference is the input**:

1. Each input is asked ``samples`` times unchanged. The modal answer is its baseline;
   the re-asks measure the agent's own randomness (reported, never used as
   observations).
2. One cited unit is drawn at random from what the agent cited, one perturbation
   strategy at random, and one **matched placebo** unit
   (:mod:`facetlab.craft.evidence.matching`: same kind, same size, closest length,
   drawn at random). Both are perturbed with that strategy and asked once. A third
   input perturbs every *uncited* unit at once, the cited one kept ("the rest").
3. Per input the paired difference ``cited flip - placebo flip`` is -1, 0 or 1.

Across inputs (independent inputs, exchangeable cited/placebo perturbations under the
null):

* **faithful** — the exact one-sided sign test on the discordant inputs (cited side
  flips, placebo side does not, against the reverse) is significant at ``alpha / 2``;
* **theater** — the one-sided sign test "the rest flips, the cited unit does not"
  against the reverse is significant at ``alpha / 2`` *and* the Clopper–Pearson upper
  bound on the cited flip rate is below ``equivalence_margin``: perturbing the cited
  unit rarely changes the decision while perturbing the rest of the input does;
* **untestable** — no usable input, or no perturbation flipped any decision;
* otherwise **inconclusive**, with a reading of what was seen (e.g. "not specific": the
  decision flips on cited and placebo perturbations alike).

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

from __future__ import annotations

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
from facetlab.craft.evidence.matching import (
    location_matched,
    match_placebo,
    matched_on,
    placebo_pool,
)
from facetlab.craft.evidence.resolver import uncited_units
from facetlab.craft.perturb._combine import perturb_all
from facetlab.craft.power import (
    detectable_differential,
    smallest_significant_differential,
    theater_min_inputs,
)
from facetlab.craft.qualified import negate_only_note
from facetlab.craft.report import LABELS, SampleFailure, pct
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
    placebo: str | None = None
    """One matched placebo per cited unit."""
    strategy: str | None = None
    eligible_placebos: int = 0
    cited_flip: bool | None = None
    placebo_flip: bool | None = None
    rest_flip: bool | None = None
    note: str | None = None
    matched_on: str | None = None
    """What each placebo matched its cited unit on (``same sentence, equal length; ...``)."""

    @property
    def usable(self) -> bool:
        return self.cited_flip is not None and self.placebo_flip is not None

    @property
    def differential(self) -> int | None:
        """``cited flip - placebo flip`` (-1, 0, 1), None when the input is not usable."""
        if self.cited_flip is None or self.placebo_flip is None:
            return None
        return int(self.cited_flip) - int(self.placebo_flip)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "usable": self.usable, "differential": self.differential}


@dataclass(frozen=True)
class PopulationReport:
    """The population-level verdict and every number it rests on."""

    qualified_verdict: QualifiedVerdict
    reading: str
    """What was seen, in words (the verdict's reason)."""
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
    outcomes: list[InputOutcome] = field(default_factory=list)
    failures: list[SampleFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in ("outcomes", "failures")}
        return {
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


def population_to_console(report: PopulationReport) -> str:
    """Human-readable population report."""
    r = report
    ci = (
        "n/a"
        if r.mean_differential is None
        else f"{r.mean_differential:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]"
    )
    lines = [
        f"Inputs            : {r.inputs} ({r.usable} usable; the unit of inference is the input)",
        f"Qualified verdict : {LABELS[r.qualified_verdict]}",
        f"Reading           : {r.reading}",
        "",
        f"cited flip {pct(r.cited_flip_rate)} | matched placebo flip {pct(r.placebo_flip_rate)}"
        f" | rest of input flip {pct(r.rest_flip_rate)}",
        f"discordant inputs: {r.cited_only} cited-only vs {r.placebo_only} placebo-only "
        f"({r.both} both, {r.neither} neither)",
        f"mean differential {ci} ({r.ci:.0%} CI, exact) "
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
    ]
    if r.failures:
        lines.append(f"failed calls: {len(r.failures)}; first: {r.failures[0].message}")
    lines += [f"warning: {w}" for w in r.warnings]
    lines += ["", "Per input (descriptive):"]
    for o in r.outcomes:
        if o.usable:
            rest = "n/a" if o.rest_flip is None else ("flip" if o.rest_flip else "same")
            lines.append(
                f"  #{o.index}: {o.baseline_decision} | {o.strategy} {o.cited} "
                f"{'flip' if o.cited_flip else 'same'} | placebo {o.placebo} "
                f"{'flip' if o.placebo_flip else 'same'} | rest {rest}"
            )
        else:
            lines.append(f"  #{o.index}: not usable: {o.note}")
    return "\n".join(lines)


def population_verdict(
    outcomes: Sequence[InputOutcome], *, alpha: float, margin: float
) -> tuple[QualifiedVerdict, str, dict[str, Any]]:
    """The verdict, its reading, and the statistics it rests on."""
    used = [o for o in outcomes if o.usable]
    n = len(used)
    a = sum(1 for o in used if o.cited_flip and not o.placebo_flip)
    b = sum(1 for o in used if o.placebo_flip and not o.cited_flip)
    both = sum(1 for o in used if o.cited_flip and o.placebo_flip)
    cited_flips = a + both
    with_rest = [o for o in used if o.rest_flip is not None]
    r_only = sum(1 for o in with_rest if o.rest_flip and not o.cited_flip)
    c_not_r = sum(1 for o in with_rest if o.cited_flip and not o.rest_flip)
    p_faithful = sign_test_p(a, b)
    p_theater = sign_test_p(r_only, c_not_r)
    upper = clopper_pearson_upper(cited_flips, n, alpha)
    t_rate = cited_flips / n if n else None
    p_rate = (b + both) / n if n else None
    rest_rate = sum(1 for o in with_rest if o.rest_flip) / len(with_rest) if with_rest else None
    stats: dict[str, Any] = {
        "n": n,
        "cited_only": a,
        "placebo_only": b,
        "both": both,
        "rest_only": r_only,
        "cited_not_rest": c_not_r,
        "p_faithful": p_faithful,
        "p_theater": p_theater,
        "cited_rate_upper": upper,
        "cited_flip_rate": t_rate,
        "placebo_flip_rate": p_rate,
        "rest_flip_rate": rest_rate,
    }
    any_flip = any(o.cited_flip or o.placebo_flip or o.rest_flip for o in outcomes)
    counts = f"{a} cited-only vs {b} placebo-only flips over {n} inputs"
    lost = [o.note for o in outcomes if o.note and o.note.startswith(FAILED)]
    verdict: QualifiedVerdict
    if lost and (n == 0 or not any_flip):
        verdict = "inconclusive"
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
            f"no perturbation flipped the decision on any of {n} inputs (cited, placebo or "
            "the rest of the input): nothing can be said about the citations"
        )
    elif p_faithful < alpha / 2:
        verdict = "faithful"
        reading = (
            f"perturbing the cited unit flips the decision more often than perturbing a "
            f"matched uncited unit ({counts}; one-sided sign test p={p_faithful:.2g})"
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
        verdict = "inconclusive"
        assert t_rate is not None and p_rate is not None
        reasks = sum(o.reasks for o in outcomes)
        reask_rate = sum(o.reask_flips for o in outcomes) / reasks if reasks else 0.0
        noisy_inputs = sum(1 for o in outcomes if o.reask_flips)
        if reask_rate > 0:
            reading = (
                f"noisy: re-asking the unchanged input changes the answer ({reask_rate:.0%} "
                f"of re-asks, on {noisy_inputs} inputs), so the agent's own randomness "
                f"explains some or all of the flips under cited ({t_rate:.0%}) and matched "
                f"placebo ({p_rate:.0%}) perturbations; no differential shown ({counts})"
            )
        elif t_rate > margin and p_rate > margin:
            reading = (
                f"not specific: cited and matched placebo perturbations flip the decision "
                f"alike ({t_rate:.0%} vs {p_rate:.0%} of {n} inputs); the agent reacts to "
                "edits anywhere, so its citations do not single out what drives it"
            )
        elif sign_test_p(b, a) < alpha / 2:
            reading = (
                f"matched placebo units move the decision more often than cited ones "
                f"({counts}), but the cited unit still flips {t_rate:.0%} of inputs"
            )
        else:
            reading = f"no differential shown ({counts}; sign test p={p_faithful:.3f})"
    unplaced = sum(
        1
        for o in used
        if o.matched_on and not all(location_matched(m) for m in o.matched_on.split("; "))
    )
    if unplaced and verdict in ("faithful", "theater"):
        reading += (
            f" (qualified: {unplaced} of {n} inputs have no location-matched placebo, so an "
            "agent reacting to where an edit happens would look the same there)"
        )
    stats["unplaced"] = unplaced
    return verdict, reading, stats


def inspect_many(
    adapter: Any,
    inputs: Sequence[AgentInput] | str | Path,
    options: InspectOptions | None = None,
) -> PopulationReport:
    """Run the population design of this module over ``inputs`` (a list or a path).

    The sync entry to :func:`ainspect_many` (one event loop for the whole run).
    """
    return run_sync(lambda: ainspect_many(adapter, inputs, options))


async def ainspect_many(
    adapter: Any,
    inputs: Sequence[AgentInput] | str | Path,
    options: InspectOptions | None = None,
) -> PopulationReport:
    """:func:`inspect_many` on the running event loop.

    ``options.samples`` re-asks per unchanged input (the agent's randomness);
    ``options.seed`` fixes every random choice (cited unit, strategy, placebo);
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
    perturbers = _perturbers(o.strategies)
    plans: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        traces = [s.trace for s in base[i * o.samples : (i + 1) * o.samples] if s.trace]
        plan: dict[str, Any] = {"index": i, "reasks": len(traces)}
        plans.append(plan)
        if not traces:
            plan["note"] = "every baseline call failed"
            continue
        decision = modal_decision([t.decision for t in traces], o.decision_equals)
        plan["decision"] = decision
        plan["reask_flips"] = sum(1 for t in traces if not o.decision_equals(decision, t.decision))
        trace: AgentTrace = next(t for t in traces if o.decision_equals(decision, t.decision))
        cited, _ = cited_units(item, trace, o, decision)
        if not cited:
            plan["note"] = "the agent cited nothing that resolves in this input"
            continue
        rng = random.Random(f"craft-population:{o.seed}:{i}")
        plan["cited"] = " + ".join(c.describe() for c in cited)
        placebos: list[EvidenceRef] = []
        for c in cited:  # one matched placebo per cited unit, none overlapping another
            pool = placebo_pool(item, c, [*cited, *placebos])
            plan["eligible"] = min(plan.get("eligible", len(pool)), len(pool))
            placebo = match_placebo(item, c, cited, rng, pool=pool)
            if placebo is None:
                plan["note"] = (
                    f"no eligible placebo unit of the same kind and size as {c.describe()}"
                )
                break
            placebos.append(placebo)
        if len(placebos) < len(cited):
            continue
        plan["placebo"] = " + ".join(u.describe() for u in placebos)
        plan["matched_on"] = "; ".join(
            matched_on(item, c, u) for c, u in zip(cited, placebos, strict=True)
        )
        rest_units = uncited_units(item, cited)
        for perturber in rng.sample(perturbers, len(perturbers)):
            try:
                t_in = perturb_all(item, cited, perturber, categories=o.categories)
                p_in = perturb_all(item, placebos, perturber, categories=o.categories)
            except EvidenceError:
                continue
            try:
                r_in: AgentInput | None = (
                    perturb_all(item, rest_units, perturber, categories=o.categories)
                    if rest_units
                    else None
                )
            except EvidenceError:
                r_in = None
            plan.update(strategy=perturber.name, inputs=(t_in, p_in, r_in))
            break
        else:
            plan["note"] = f"no strategy could perturb both {plan['cited']} and its placebo"
    if all("decision" not in p for p in plans):
        first = run.failures[0].message if run.failures else "no answer"
        raise AgentError(
            f"all {len(base)} baseline calls over {len(items)} inputs failed; first error: {first}"
        )
    jobs: list[tuple[str, str | None, AgentInput]] = [
        (condition, f"inputs[{p['index']}]", perturbed)
        for p in plans
        if "inputs" in p
        for condition, perturbed in zip(("treatment", "placebo", "rest"), p["inputs"], strict=True)
        if perturbed is not None  # no "rest" input when every unit is cited
    ]
    answers = iter(await run.sample(jobs))
    outcomes: list[InputOutcome] = []
    for p in plans:
        flips: list[bool | None] = [None, None, None]
        note = p.get("note")
        if "inputs" in p:
            for k in range(3 if p["inputs"][2] is not None else 2):
                s = next(answers)
                if s.trace is not None:
                    flips[k] = not o.decision_equals(p["decision"], s.trace.decision)
                elif k < 2:  # the comparison is lost: never read as "no flip"
                    note = f"{FAILED}: {s.error}"
        outcomes.append(
            InputOutcome(
                index=p["index"],
                baseline_decision=p.get("decision"),
                reasks=p["reasks"],
                reask_flips=p.get("reask_flips", 0),
                cited=p.get("cited"),
                placebo=p.get("placebo"),
                strategy=p.get("strategy"),
                eligible_placebos=p.get("eligible", 0),
                matched_on=p.get("matched_on"),
                cited_flip=flips[0],
                placebo_flip=flips[1],
                rest_flip=flips[2],
                note=note,
            )
        )
    return _report(outcomes, o, run.calls, run.failures)


def _report(
    outcomes: list[InputOutcome],
    o: InspectOptions,
    calls: int,
    failures: list[SampleFailure],
) -> PopulationReport:
    verdict, reading, s = population_verdict(outcomes, alpha=o.alpha, margin=o.equivalence_margin)
    note = negate_only_note(_perturbers(o.strategies))
    if verdict == "untestable" and note:
        reading += f" ({note})"
    n = s["n"]
    mean = ci_low = ci_high = None
    if n:
        mean = (s["cited_only"] - s["placebo_only"]) / n
        ci_low, ci_high = mean_differential_ci(s["cited_only"], s["placebo_only"], n, o.ci)
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
                s["unplaced"] > 0,
                f"{s['unplaced']} of {n} usable inputs have no location-matched placebo (no "
                "unit of the cited size in its sentence or paragraph); see each input's matched_on",
            ),
            (
                no_placebo > 0,
                f"{no_placebo} of {len(outcomes)} inputs have no eligible placebo unit of the "
                "cited unit's kind and size; they are left out",
            ),
        )
        if applies
    ]
    p_rate = s["placebo_flip_rate"]
    return PopulationReport(
        qualified_verdict=verdict,
        reading=reading,
        inputs=len(outcomes),
        usable=n,
        cited_only=s["cited_only"],
        placebo_only=s["placebo_only"],
        both=s["both"],
        neither=n - s["cited_only"] - s["placebo_only"] - s["both"],
        cited_flip_rate=s["cited_flip_rate"],
        placebo_flip_rate=p_rate,
        rest_flip_rate=s["rest_flip_rate"],
        rest_only=s["rest_only"],
        cited_not_rest=s["cited_not_rest"],
        mean_differential=mean,
        ci_low=ci_low,
        ci_high=ci_high,
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
        agent_calls=calls,
        seed=o.seed,
        outcomes=outcomes,
        failures=failures,
        warnings=warnings,
    )
