"""The orchestrator: base, cited, placebo and treatment conditions, then the verdicts.

>>> from facetlab.craft import AgentTrace, EvidenceRef, Span, from_function
>>> def agent(inp):
...     body = inp.get("body", "")
...     ref = EvidenceRef("body", "text", span=Span.find(body, "urgent")) if "urgent" in body else None
...     return AgentTrace("P1" if "urgent" in body else "P3", "urgent", [ref] if ref else [])
>>> report = inspect(from_function(agent), {"body": "This is an urgent outage on prod."})
>>> report.overall_verdict
'faithful'
"""

import copy
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from facetlab.craft._checks import check_input
from facetlab.craft.errors import AgentError, CraftConfigError, EvidenceError
from facetlab.craft.evidence.matching import matched_placebos
from facetlab.craft.evidence.resolver import (
    derive_placebo,
    resolve_evidence,
    resolve_explicit,
    resolve_inferred,
    uncited_units,
)
from facetlab.craft.perturb._combine import input_key, units_clash
from facetlab.craft.perturb.manifold import ConstantScorer, ManifoldScorer
from facetlab.craft.perturb.strategies import (
    STRATEGIES,
    Perturbation,
    Perturber,
    StrategyPerturber,
)
from facetlab.craft.qualified import (
    QualifiedFinding,
    ScoreTest,
    Sensitivity,
    all_units_inputs,
    draw_pairs,
    negate_only_note,
    qualify_all,
    roll_up_qualified,
    score_test,
)
from facetlab.craft.report import (
    EvidenceFinding,
    FilteredPerturbation,
    Report,
    SampleFailure,
    surface_variants,
)
from facetlab.craft.stats._sampler import Sample, asample_inputs
from facetlab.craft.stats.distribution import flip_rate, flips, modal_decision
from facetlab.craft.stats.equivalence import DecisionEquals, exact_equals
from facetlab.craft.stats.sequential import sequential_state
from facetlab.craft.stats.significance import (
    METHODS,
    BootstrapResult,
    differential_test,
)
from facetlab.craft.stats.verdict import roll_up, verdict_for
from facetlab.craft.types import AgentInput, AgentTrace, EvidenceRef
from facetlab.syncbridge import run_sync

MAX_CONTEXTUAL_PAIRS = 1000
"""Upper bound of ``InspectOptions.contextual_pairs`` (each pair is two agent calls)."""


@dataclass
class InspectOptions:
    """How to run the experiment. The first five fields are the specification's.

    Beyond it: ``strategies`` (treatment perturbations; names from
    :data:`~facetlab.craft.perturb.STRATEGIES` or :class:`Perturber` objects such as
    ``negation(text_model(backend))``), ``placebo_strategies`` (default: the same), the
    ``manifold_scorer`` (default offline heuristic), ``method`` of the differential test
    ("bootstrap" = the spec's, "exact", "fisher"), ``infer_evidence`` (derive evidence from
    the rationale when the agent cites none), and adaptive sampling with ``sequential=True``
    (stop per finding once an anytime-valid e-process decides, at most ``max_samples``).

    The qualified verdict (:mod:`facetlab.craft.qualified`) uses ``contextual_pairs``
    (distinct pairs wanted per cited unit), ``context_evidence`` (extra units the random
    background sets are drawn from, beside the other cited and placebo units) and
    ``equivalence_margin`` (theater needs the cited-only flip rate's upper bound below
    it). ``timeout`` bounds each agent call in seconds (a late call is a failed sample).
    The manifold filter is off by default, as in the specification (its stub passes
    everything): set ``manifold_scorer`` to turn it on.
    """

    samples: int = 20
    decision_equals: DecisionEquals = exact_equals
    placebo_evidence: list[EvidenceRef] | None = None
    min_manifold_score: float = 0.5
    alpha: float = 0.05
    strategies: Sequence[str | Perturber] = ("delete", "redact")
    placebo_strategies: Sequence[str | Perturber] | None = None
    manifold_scorer: ManifoldScorer | None = None
    method: str = "bootstrap"
    iterations: int = 5000
    ci: float = 0.95
    seed: int = 12345
    concurrency: int = 8
    infer_evidence: bool = False
    min_inference_confidence: float = 0.5
    max_placebo_candidates: int = 5
    categories: Mapping[str, Sequence[Any]] | None = None
    sequential: bool = False
    max_samples: int | None = None
    batch_size: int = 4
    context_evidence: list[EvidenceRef] | None = None
    contextual_pairs: int = 40
    equivalence_margin: float = 0.2
    timeout: float | None = None

    def __post_init__(self) -> None:
        ints = ("samples", "iterations", "concurrency", "batch_size", "contextual_pairs")
        for name in (*ints, "alpha", "ci", "equivalence_margin", "min_manifold_score"):
            value, kind = getattr(self, name), int if name in ints else (int, float)
            if isinstance(value, bool) or not isinstance(value, kind) or not math.isfinite(value):
                need = "an int" if name in ints else "a finite number"
                raise CraftConfigError(f"InspectOptions.{name} must be {need}, got {value!r}")
        timeout = self.timeout
        checks = [
            ("samples", self.samples >= 1, ">= 1"),
            ("batch_size", self.batch_size >= 1, ">= 1"),
            ("concurrency", self.concurrency >= 1, ">= 1"),
            ("max_samples", self.max_samples is None or self.max_samples >= 1, ">= 1"),
            ("alpha", 0.0 < self.alpha < 1.0, "in (0, 1)"),
            ("equivalence_margin", 0.0 < self.equivalence_margin <= 1.0, "in (0, 1]"),
            (
                "contextual_pairs",
                1 <= self.contextual_pairs <= MAX_CONTEXTUAL_PAIRS,
                f"in 1..{MAX_CONTEXTUAL_PAIRS} (more inputs, not more pairs of one input, "
                "buy power)",
            ),
            (
                "timeout",
                timeout is None
                or (
                    isinstance(timeout, (int, float))
                    and not isinstance(timeout, bool)
                    and math.isfinite(timeout)
                    and timeout > 0
                ),
                "a positive number of seconds",
            ),
            ("method", self.method in METHODS, f"one of {METHODS}"),
            ("strategies", bool(self.strategies), "a non-empty list"),
        ]
        for name, ok, need in checks:
            if not ok:
                raise CraftConfigError(
                    f"InspectOptions.{name} must be {need}, got {getattr(self, name)!r}"
                )
        for s in [*self.strategies, *(self.placebo_strategies or ())]:
            if isinstance(s, str) and s not in STRATEGIES:
                raise CraftConfigError(f"unknown strategy {s!r}; expected one of {STRATEGIES}")


def _perturbers(items: Sequence[str | Perturber]) -> list[Perturber]:
    return [StrategyPerturber(s) if isinstance(s, str) else s for s in items]


@dataclass
class _Condition:
    """The perturbed inputs of one condition and the samples collected on them."""

    name: str
    evidence: EvidenceRef | None
    perturbations: list[Perturbation]
    samples: list[Sample] = field(default_factory=list)
    filtered: int = 0
    note: str | None = None

    def next_inputs(self, count: int) -> list[AgentInput]:
        start = len(self.samples)
        n = len(self.perturbations)
        return [copy.deepcopy(self.perturbations[(start + i) % n].input) for i in range(count)]

    def decisions(self) -> list[str]:
        return [s.trace.decision for s in self.samples if s.trace is not None]

    def distinct(self) -> int:
        """Distinct inputs the samples cycled through (round-robin, so the first ones)."""
        used = self.perturbations[: len(self.samples)]
        return len({input_key(p.input) for p in used})


def cited_units(
    input: AgentInput, trace: AgentTrace, o: InspectOptions, decision: str
) -> tuple[list[EvidenceRef], str]:
    """What ``trace`` cites that resolves in ``input`` (with ``infer_evidence``, what its
    rationale names when it cites nothing), and where that came from."""
    cited = resolve_explicit(input, trace.cited_evidence).refs
    if cited or not o.infer_evidence:
        return cited, "explicit" if cited else "none"
    cited = resolve_inferred(
        input, trace.rationale, min_confidence=o.min_inference_confidence, exclude=[decision]
    )
    return cited, "inferred" if cited else "none"


class _Calls:
    """The agent calls of one run (an inspection, or a population's): counted, and each
    failure recorded with its condition and evidence."""

    def __init__(self, adapter: Any, options: InspectOptions) -> None:
        if not callable(getattr(adapter, "run", None)):
            raise CraftConfigError(
                f"adapter must have a run(input) method (wrap functions with from_function), "
                f"got {type(adapter).__name__}"
            )
        self.adapter = adapter
        self.options = options
        self.calls = 0
        self.failures: list[SampleFailure] = []
        self.decisions: dict[str, dict[str, int]] = {}
        """Condition -> each distinct decision string and its count (comparators visible)."""

    async def sample(self, jobs: list[tuple[str, str | None, AgentInput]]) -> list[Sample]:
        results = await asample_inputs(
            self.adapter,
            [inp for *_, inp in jobs],
            concurrency=self.options.concurrency,
            timeout=self.options.timeout,
        )
        self.calls += len(jobs)
        for (condition, evidence, _), sample in zip(jobs, results, strict=True):
            if sample.error is not None:
                self.failures.append(SampleFailure(condition, evidence, sample.error))
            if sample.trace is not None:
                seen = self.decisions.setdefault(condition, {})
                seen[sample.trace.decision] = seen.get(sample.trace.decision, 0) + 1
        return results


class _Run(_Calls):
    """State of one inspection (kept in one place so fixed and adaptive modes share it)."""

    def __init__(self, adapter: Any, input: AgentInput, options: InspectOptions) -> None:
        check_input(input)
        super().__init__(adapter, options)
        self.input = input
        self.scorer: ManifoldScorer = (
            ConstantScorer() if options.manifold_scorer is None else options.manifold_scorer
        )
        self.filtered: list[FilteredPerturbation] = []
        self.baseline: list[Sample] = []

    def baseline_decision(self) -> str:
        decisions = [s.trace.decision for s in self.baseline if s.trace is not None]
        if not decisions:
            first = next((f.message for f in self.failures if f.condition == "baseline"), "")
            raise AgentError(
                f"all {len(self.baseline)} baseline samples failed, so there is no baseline "
                f"decision to compare against; first error: {first}"
            )
        return modal_decision(decisions, self.options.decision_equals)

    def flips_of(self, decisions: Sequence[str]) -> list[bool]:
        return flips(decisions, self.baseline_decision(), self.options.decision_equals)

    # -- perturbations ---------------------------------------------------------------------
    def build(
        self,
        name: str,
        refs: Sequence[EvidenceRef],
        evidence: EvidenceRef | None,
        perturbers: Sequence[Perturber],
    ) -> _Condition:
        kept: list[Perturbation] = []
        filtered = 0
        notes: list[str] = []
        # Interleave evidence items so round-robin sampling covers each of them evenly.
        for perturber in perturbers:
            for ref in refs:
                try:
                    made = perturber.perturb(self.input, ref, categories=self.options.categories)
                except EvidenceError as exc:
                    notes.append(str(exc))
                    continue
                for p in made:
                    score = self.scorer.score(self.input, p.input, ref)
                    if score.score < self.options.min_manifold_score:
                        filtered += 1
                        self.filtered.append(
                            FilteredPerturbation(
                                name,
                                ref.describe(),
                                p.strategy,
                                p.description,
                                score.score,
                                score.reasons,
                            )
                        )
                    else:
                        kept.append(p)
        note = None
        if not kept:
            note = (
                f"no usable {name} perturbation"
                + (f" ({filtered} filtered as off-manifold)" if filtered else "")
                + (f"; {notes[0]}" if notes else "")
            )
        return _Condition(name, evidence, kept, filtered=filtered, note=note)


def _test(run: _Run, t: list[bool], p: list[bool]) -> BootstrapResult:
    o = run.options
    return differential_test(t, p, method=o.method, iterations=o.iterations, ci=o.ci, seed=o.seed)


def inspect(adapter: Any, input: AgentInput, options: InspectOptions | None = None) -> Report:
    """Run the CRAFT experiment on ``adapter`` and ``input`` and return the :class:`Report`.

    The sync entry to :func:`ainspect` (one event loop for the whole inspection, through
    :func:`facetlab.syncbridge.run_sync`; it also works inside a running loop).
    """
    return run_sync(lambda: ainspect(adapter, input, options))


async def ainspect(
    adapter: Any, input: AgentInput, options: InspectOptions | None = None
) -> Report:
    """:func:`inspect` on the running event loop (``await ainspect(...)`` in Jupyter or Inspect).

    Phases: (1) ``samples`` baseline calls give the modal decision and its natural flip
    rate; (2) one more call reads the cited evidence (or, with ``infer_evidence``, evidence
    inferred from the rationale); (3) the placebo condition perturbs uncited features
    (or ``placebo_evidence``); (4) each cited item is perturbed and its flip rate is tested
    against the placebo's. Failing agent calls are counted in the report, not raised.
    """
    options = options or InspectOptions()
    run = _Run(adapter, input, options)
    first = options.batch_size if options.sequential else options.samples
    jobs: list[tuple[str, str | None, AgentInput]] = [
        *(("baseline", None, copy.deepcopy(input)) for _ in range(first)),
        ("cited", None, copy.deepcopy(input)),
    ]
    results = await run.sample(jobs)
    run.baseline = results[:-1]
    baseline_decision = run.baseline_decision()
    cited_trace: AgentTrace | None = results[-1].trace
    if cited_trace is None or not options.decision_equals(baseline_decision, cited_trace.decision):
        # Read the citations from a sample that made the modal decision, when there is one.
        cited_trace = next(
            (
                s.trace
                for s in run.baseline
                if s.trace is not None
                and options.decision_equals(baseline_decision, s.trace.decision)
            ),
            cited_trace,
        )
    assert cited_trace is not None  # a modal decision implies one successful trace
    resolved = resolve_explicit(input, cited_trace.cited_evidence)
    warnings = [*cited_trace.warnings, *resolved.warnings]
    cited, source = cited_units(input, cited_trace, options, baseline_decision)

    context_refs = _resolve_given(input, options.context_evidence or [], warnings)
    placebo_refs = (
        _resolve_given(input, options.placebo_evidence, warnings)
        if options.placebo_evidence is not None
        else derive_placebo(input, cited, max_candidates=options.max_placebo_candidates)
    )
    placebo = run.build(
        "placebo", placebo_refs, None, _perturbers(options.placebo_strategies or options.strategies)
    )
    treatments = [
        run.build("treatment", [ref], ref, _perturbers(options.strategies)) for ref in cited
    ]

    if options.sequential:
        await _sample_sequential(run, placebo, treatments)
    else:
        await _sample_fixed(run, placebo, treatments, options.samples)

    baseline_decisions = [s.trace.decision for s in run.baseline if s.trace is not None]
    baseline_decision = run.baseline_decision()
    baseline_rate = flip_rate(run.flips_of(baseline_decisions))
    placebo_flips = run.flips_of(placebo.decisions())
    placebo_rate = flip_rate(placebo_flips)
    findings = [_finding(run, t, placebo, placebo_flips, baseline_rate) for t in treatments]
    # The qualified design runs after the specification's samples, so it cannot change them.
    given = placebo_refs if options.placebo_evidence is not None else None
    qualified, citation_set, sensitivity = await _qualified(run, cited, given, context_refs)
    for finding, q in zip(findings, qualified, strict=True):
        finding.qualified = q
    return Report(
        baseline_decision=baseline_decision,
        baseline_rationale=cited_trace.rationale,
        samples_per_condition=(
            max([len(t.samples) for t in treatments] + [len(placebo.samples)])
            if options.sequential
            else options.samples
        ),
        findings=findings,
        overall_verdict=roll_up([f.verdict for f in findings]),
        baseline_flip_rate=baseline_rate,
        baseline_samples=len(baseline_decisions),
        evidence_source=source,
        placebo_evidence=list(placebo_refs),
        placebo_flip_rate=placebo_rate,
        placebo_samples=len(placebo_flips),
        failures=run.failures,
        warnings=[*warnings, *surface_variants(run.decisions, options.decision_equals)],
        unresolved_evidence=resolved.errors,
        filtered=run.filtered,
        agent_calls=run.calls,
        method="sequential" if options.sequential else options.method,
        alpha=options.alpha,
        qualified_verdict=roll_up_qualified(citation_set, sensitivity),
        citation_set=citation_set if len(cited) > 1 else None,
        sensitivity=sensitivity,
        placebo_distinct=placebo.distinct(),
        manifold_filter=options.manifold_scorer is not None,
        decisions=run.decisions,
    )


def _resolve_given(
    input: AgentInput, refs: Sequence[EvidenceRef], warnings: list[str]
) -> list[EvidenceRef]:
    """Check user-given evidence (placebo, context); a bad reference is fatal."""
    out = []
    for ref in refs:
        fixed, warning = resolve_evidence(input, ref)
        out.append(fixed)
        if warning:
            warnings.append(warning)
    return out


def _null_sets(null_sets: Sequence[Sequence[EvidenceRef]]) -> list[tuple[EvidenceRef, ...]]:
    """Null sets for the citation set: one null per cited unit, none overlapping another
    (the i-th set starts each unit's list at its i-th null)."""
    out: list[tuple[EvidenceRef, ...]] = []
    for i in range(max(map(len, null_sets), default=0)):
        chosen: list[EvidenceRef] = []
        for nulls in null_sets:
            rotated = [*nulls[i:], *nulls[:i]]
            pick = next((u for u in rotated if not any(units_clash(u, x) for x in chosen)), None)
            if pick is None:
                break
            chosen.append(pick)
        else:
            out.append(tuple(chosen))
    return list(dict.fromkeys(out))


def _side_note(c: EvidenceRef, sides: Mapping[str, Sequence[EvidenceRef]]) -> str | None:
    """Say so when a cited span has matched placebos on one side only."""
    if c.span is None or "field" in sides or "given" in sides or len(sides) == 2:
        return None
    missing = "after" if "before" in sides else "before"
    return (
        f"no placebo unit {missing} {c.describe()}: a position effect on that side is not tested"
        if sides
        else f"no matched placebo for {c.describe()}"
    )


async def _qualified(
    run: _Run,
    cited: Sequence[EvidenceRef],
    given_nulls: Sequence[EvidenceRef] | None,
    context: Sequence[EvidenceRef],
) -> tuple[list[QualifiedFinding], QualifiedFinding | None, Sensitivity]:
    """The contextual design of :mod:`facetlab.craft.qualified`: draw, sample, test.

    One design per cited unit (per-citation findings, Holm across them) and, with
    several cited units, one for the citation set as a whole (every cited unit against
    one matched null per unit): the overall verdict rests on the set. Null units are the
    caller's ``placebo_evidence`` when given, else the matched placebos on each side of
    the cited unit (:func:`matched_placebos`), each side a design of its own (faithful
    needs every side). "The rest" perturbs every uncited word and field with the cited
    units kept; "joint" perturbs every unit at once.
    """
    o = run.options
    perturbers = _perturbers(o.strategies)
    sides_of = [
        {"given": list(given_nulls)}
        if given_nulls is not None
        else matched_placebos(run.input, c, cited)
        for c in cited
    ]
    notes = [
        _side_note(c, sides) or negate_only_note(perturbers)
        for c, sides in zip(cited, sides_of, strict=True)
    ]
    units_of: list[tuple[EvidenceRef, ...]] = [(c,) for c in cited]
    nulls_of: list[dict[str, list[tuple[EvidenceRef, ...]]]] = [
        {k: [(u,) for u in us] for k, us in sides.items()} for sides in sides_of
    ]
    if len(cited) > 1:  # the set: the i-th null of every cited unit together, per side
        common = sorted(set.intersection(*(set(s) for s in sides_of)))
        units_of.append(tuple(cited))
        nulls_of.append({k: _null_sets([s[k] for s in sides_of]) for k in common})
        notes.append(next((n for n in notes if n), None))
    # backgrounds come from units of the cited units' own granularity: the other cited
    # units, the context units and the matched nulls (not every single word)
    nulls = [u for sides in sides_of for us in sides.values() for u in us]
    units = list(dict.fromkeys([*cited, *context, *nulls]))
    designs = [
        {
            side: draw_pairs(
                run.input,
                c,
                [u for u in units if u not in c],
                side_nulls,
                perturbers,
                pairs=-(-o.contextual_pairs // max(1, len(sides))),
                seed=o.seed,
                categories=o.categories,
            )
            for side, side_nulls in sides.items()
        }
        for c, sides in zip(units_of, nulls_of, strict=True)
    ]
    uncited = [
        *(u for u in context if not any(units_clash(u, c) for c in cited)),
        *uncited_units(run.input, cited),
    ]
    rest = all_units_inputs(run.input, uncited, perturbers, o.categories)
    joint = all_units_inputs(run.input, [*cited, *uncited], perturbers, o.categories)
    jobs: list[tuple[str, str | None, AgentInput]] = [("rest", None, x) for x in rest]
    jobs += [("all-units", None, x) for x in joint]
    jobs += [  # each pair's cited side, then its null side
        ("contextual", " + ".join(u.describe() for u in c), side)
        for c, design in zip(units_of, designs, strict=True)
        for pairs in design.values()
        for pair in pairs
        for side in (pair.cited_input, pair.null_input)
    ]
    results = await run.sample(jobs)
    decision = run.baseline_decision()
    outcomes = [  # flipped, or None for a failed call
        None if r.trace is None else not o.decision_equals(decision, r.trace.decision)
        for r in results
    ]
    failed = [r.error for r in results if r.trace is None]
    base = run.flips_of([s.trace.decision for s in run.baseline if s.trace is not None])
    rest_seen = [x for x in outcomes[: len(rest)] if x is not None]
    kept = rest_seen + [x for x in outcomes[len(rest) + len(joint) :][1::2] if x is not None]
    joint_seen = [x for x in outcomes[len(rest) : len(rest) + len(joint)] if x is not None]
    seen = [x for x in outcomes if x is not None]
    sensitivity = Sensitivity(
        len(seen),
        sum(seen),
        len(base),
        sum(base),
        o.alpha,
        len(failed),
        next(iter(failed), None),
        len(rest_seen),
        sum(rest_seen),
        len(joint_seen),
        sum(joint_seen),
        len(kept),
        sum(kept),
    )
    base_scores = [
        float(s.trace.score)
        for s in run.baseline
        if s.trace is not None and s.trace.score is not None
    ]
    answered = iter(
        zip(results[len(rest) + len(joint) :], outcomes[len(rest) + len(joint) :], strict=True)
    )
    flip_designs: list[dict[str, list[tuple[bool, bool]]]] = []
    alone_designs: list[list[tuple[bool, bool]]] = []
    score_tests: list[ScoreTest | None] = []
    for k, design in enumerate(designs):
        alone: list[tuple[bool, bool]] = []
        scores: list[tuple[float, float]] = []
        flip_designs.append({})
        for side, pairs in design.items():
            flips_ = flip_designs[-1].setdefault(side, [])
            for pair in pairs:
                (a, fa), (b, fb) = next(answered), next(answered)  # cited side, null side
                if fa is None or fb is None:
                    continue  # a failed side is recorded in report.failures
                flips_.append((fa, fb))
                if not pair.background:
                    alone.append((fa, fb))
                sa = None if a.trace is None else a.trace.score
                sb = None if b.trace is None else b.trace.score
                if sa is not None and sb is not None:
                    scores.append((float(sa), float(sb)))
        asked = sum(map(len, design.values()))
        answered_pairs = sum(map(len, flip_designs[-1].values()))
        if answered_pairs < asked:
            lost = f"{asked - answered_pairs} of {asked} pairs lost to failed calls"
            notes[k] = lost if notes[k] is None else f"{notes[k]}; {lost}"
        alone_designs.append(alone)
        score_tests.append(score_test(base_scores, scores))
    found = qualify_all(
        flip_designs[: len(cited)],
        sensitivity,
        alpha=o.alpha,
        margin=o.equivalence_margin,
        scores=score_tests[: len(cited)],
        ci=o.ci,
        alone=alone_designs[: len(cited)],
        notes=notes[: len(cited)],
    )
    whole = qualify_all(  # one test: no correction
        flip_designs[len(cited) :],
        sensitivity,
        alpha=o.alpha,
        margin=o.equivalence_margin,
        ci=o.ci,
        alone=alone_designs[len(cited) :],
        notes=notes[len(cited) :],
    )
    return found, (whole[0] if whole else found[0] if found else None), sensitivity


def _jobs(cond: _Condition, count: int) -> list[tuple[str, str | None, AgentInput]]:
    if not cond.perturbations:
        return []
    label = None if cond.evidence is None else cond.evidence.describe()
    return [(cond.name, label, inp) for inp in cond.next_inputs(count)]


_Batch = tuple[list[Sample], list[tuple[str, str | None, AgentInput]]]


async def _sample_into(run: _Run, batches: list[_Batch]) -> None:
    """Sample every batch's jobs in one call; each batch's samples go to its list."""
    results = iter(await run.sample([job for _, jobs in batches for job in jobs]))
    for samples, jobs in batches:
        samples.extend(itertools.islice(results, len(jobs)))


async def _sample_fixed(
    run: _Run, placebo: _Condition, treatments: list[_Condition], n: int
) -> None:
    await _sample_into(run, [(c.samples, _jobs(c, n)) for c in [placebo, *treatments]])


async def _sample_sequential(run: _Run, placebo: _Condition, treatments: list[_Condition]) -> None:
    """Batches until every finding is decided, or hits ``max_samples``.

    A finding stops when the e-process for "treatment flips more than placebo" crosses
    ``2/alpha`` (and the bootstrap CI is above zero), when the one for "less" does, or
    when "faithful" is out of reach within the budget (curtailment). The verdict is then
    the specification's rule on the samples collected, with the anytime-valid p-value.
    """
    o = run.options
    cap = o.max_samples or o.samples
    active = [t for t in treatments if t.perturbations]
    while active and placebo.perturbations:
        batches: list[_Batch] = []
        step = min(o.batch_size, cap - len(placebo.samples))
        if len(run.baseline) < cap:
            b = min(o.batch_size, cap - len(run.baseline))
            batches.append(
                (run.baseline, [("baseline", None, copy.deepcopy(run.input)) for _ in range(b)])
            )
        batches += [
            (c.samples, _jobs(c, min(step, cap - len(c.samples)))) for c in [placebo, *active]
        ]
        await _sample_into(run, batches)
        p_flips = run.flips_of(placebo.decisions())
        still: list[_Condition] = []
        for cond in active:
            t_flips = run.flips_of(cond.decisions())
            state = sequential_state(t_flips, p_flips, o.alpha)
            left = cap - len(cond.samples)
            done = left <= 0 or state.rejects_less or state.faithful_out_of_reach(left)
            if not done and not (state.rejects_greater and _test(run, t_flips, p_flips).ci_low > 0):
                still.append(cond)
        active = still


def _finding(
    run: _Run,
    cond: _Condition,
    placebo: _Condition,
    placebo_flips: list[bool],
    baseline_rate: float,
) -> EvidenceFinding:
    assert cond.evidence is not None
    t_flips = run.flips_of(cond.decisions())
    failed = sum(1 for s in cond.samples if s.trace is None)
    t_rate, p_rate = flip_rate(t_flips), flip_rate(placebo_flips)
    note = cond.note or placebo.note
    differential: BootstrapResult | None = None
    if t_flips and placebo_flips:
        differential = _test(run, t_flips, placebo_flips)
        if run.options.sequential:
            state = sequential_state(t_flips, placebo_flips, run.options.alpha)
            differential = BootstrapResult(
                differential.mean_diff,
                differential.ci_low,
                differential.ci_high,
                state.p_value,
                differential.iterations,
                "sequential",
            )
    elif note is None:
        note = (
            f"all {len(cond.samples)} treatment samples failed"
            if not t_flips
            else (f"all {len(placebo.samples)} placebo samples failed")
        )
    return EvidenceFinding(
        evidence=cond.evidence,
        baseline_flip_rate=baseline_rate,
        treatment_flip_rate=t_rate,
        placebo_flip_rate=p_rate,
        differential=differential,
        verdict=verdict_for(differential, t_rate, baseline_rate, run.options.alpha),
        treatment_samples=len(t_flips),
        placebo_samples=len(placebo_flips),
        failed_samples=failed,
        perturbations=sorted({p.description for p in cond.perturbations}),
        filtered_perturbations=cond.filtered,
        note=note,
        distinct_perturbations=cond.distinct(),
    )
