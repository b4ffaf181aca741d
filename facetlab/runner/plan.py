"""Expand a sweep (instances x probes x models x repeats) into trials.

A :class:`Trial` is everything needed to ask one question and record the answer:
the prompt is built here, once, so the trial id (a content address of model,
params, template, prompt and repeat) is known before any call is made. That id
names the record file and keys the response cache, which is what makes a sweep
resumable and a request never paid for twice.

Which probe fits which instance is the probe's own decision
(``probe.applies_to``): P3 runs on adversarial instances, P2 on the other
counterfactuals, C2 on instances with a perturbation file (one trial per
perturbed factor), P1 everywhere. Skipped pairs are returned so the caller can say
what it left out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from facetlab.backends.base import DEFAULT_DECLARATION, Declaration, SamplingParams
from facetlab.client.cache import cache_key
from facetlab.errors import ConfigError
from facetlab.probes import PROBE_NAMES, PROBES, WEIGHTED_PROBES, ProbeName
from facetlab.probes.base import ParseResult
from facetlab.records.schema import Trial

if TYPE_CHECKING:
    from facetlab.instances.schema import Instance
    from facetlab.probes.hint import PlantedHint

__all__ = ["Cell", "Plan", "PlannedCell", "ProbeSuite", "Skipped", "Trial", "plan_sweep"]


@dataclass(frozen=True)
class Cell:
    """One prompt a probe asks of one instance (C2: one per perturbed factor)."""

    prompt: str
    built_from: Instance
    """The instance the prompt shows (for C2: the anchor with one factor rewritten)."""
    factor: str | None = None
    """Positional label ("F3") of the perturbed factor, for per-factor probes."""
    hint_kind: str | None = None
    """H1: the kind of hint the prompt carries (``"unhinted"``: the control)."""
    hint: PlantedHint | None = None
    """H1: the hint the prompt carries (None: the control)."""
    variation: str | None = None
    """Another variant prompt's name, in its cell id (COTX: the intervention, ``truncate-2``)."""


class ProbeSuite(Protocol):
    """What the planner needs from :mod:`facetlab.probes` and :mod:`facetlab.instances`.

    The default, :class:`facetlab.runner.suite.FacetSuite`, wires the real modules;
    tests pass stubs.
    """

    def applies_to(self, probe: str, instance: Instance) -> bool:
        """Whether ``probe`` is run on ``instance``."""
        ...

    def cells(self, probe: str, instance: Instance, *, template: str) -> Sequence[Cell]:
        """The prompts ``probe`` asks of ``instance`` (one, or one per perturbed factor)."""
        ...

    def parse_reply(self, probe: str, text: str, n_factors: int, *, parser: str) -> ParseResult:
        """Parse a reply to a prompt of ``n_factors`` factors; must not raise on model output."""
        ...

    def base_of(self, instance: Instance) -> Instance | None:
        """A variant's base instance when it is not among the planned ones (for the
        backends' context), or None."""
        ...


@dataclass(frozen=True)
class Skipped:
    """A (probe, instance) pair the plan leaves out, and why."""

    probe: str
    instance_id: str
    reason: str


_PER_CELL = tuple(
    f.name for f in dataclasses.fields(Trial) if f.name not in ("trial_id", "key", "repeat", "seed")
)


@dataclass(frozen=True, slots=True)
class PlannedCell:
    """One cell asked of one model; its trials (one per repeat) are built when iterated.

    The prompt is built once per cell and shared by its models and repeats, so a plan
    holds one of these per (cell, model) however many repeats a sweep asks for.
    """

    trial: Trial
    """What every trial of the cell asks; its trial id, key, repeat and seed are per repeat."""
    repeats: int
    sweep_seed: int
    key_of: Callable[[int], str]
    """``repeat -> cache key`` (see :func:`_repeat_keys`)."""

    def trials(self) -> Iterator[Trial]:
        """The cell's trials, repeat 0 first."""
        shared = self.trial
        # the shared fields read once per cell: dataclasses.replace reads them all per
        # trial (half the time of a resume that makes no call)
        same = {f: getattr(shared, f) for f in _PER_CELL}
        for repeat in range(self.repeats):
            key = self.key_of(repeat)
            tid = _trial_id(shared.probe, shared.instance_id, repeat, key)
            yield Trial(trial_id=tid, key=key, repeat=repeat,
                        seed=derive_seed(self.sweep_seed, tid), **same)  # fmt: skip


@dataclass(frozen=True, repr=False)
class Plan:
    """The trials of a sweep (stable order, no duplicates) and the pairs it skipped.

    Iterating a plan builds its trials one at a time from its cells: a sweep of a million
    trials is planned in the memory of its cells, not of its trials. :attr:`trials`
    builds them all at once (convenient for small sweeps and tests).
    """

    cells: tuple[PlannedCell, ...]
    skipped: tuple[Skipped, ...]

    def __iter__(self) -> Iterator[Trial]:
        for cell in self.cells:
            yield from cell.trials()

    def __len__(self) -> int:
        return sum(cell.repeats for cell in self.cells)

    def __bool__(self) -> bool:
        return any(cell.repeats for cell in self.cells)

    @property
    def trials(self) -> tuple[Trial, ...]:
        """Every trial, built now (memory grows with the sweep: iterate the plan instead)."""
        return tuple(self)

    def __repr__(self) -> str:
        # short: the full repr of a million trials is gigabytes (asyncio may take it)
        return f"Plan({len(self)} trials, {len(self.skipped)} skipped)"

    def by_probe(self) -> dict[str, int]:
        """Number of trials per probe, in first-seen order."""
        counts: dict[str, int] = {}
        for cell in (c for c in self.cells if c.repeats):
            counts[cell.trial.probe] = counts.get(cell.trial.probe, 0) + cell.repeats
        return counts

    def probes(self) -> list[str]:
        """The probes with at least one trial, sorted."""
        return sorted(self.by_probe())

    def instance_ids(self) -> set[str]:
        """The instances the trials ask about (for C2: the anchors; for H1: the instance hinted)."""
        return {
            (t.base_instance_id or t.instance_id) if t.probe in ("c2", "h1") else t.instance_id
            for t in (c.trial for c in self.cells if c.repeats)
        }


def _repeat_keys(
    model: str,
    params: Mapping[str, Any],
    template: str,
    prompt: str,
    *,
    endpoint: str | None,
) -> Callable[[int], str]:
    """``repeat -> cache_key(model, params, template, prompt, repeat, endpoint=...)``, the
    prompt hashed once per cell instead of once per repeat (a million trials plan in half
    the time).

    The key's canonical JSON has its keys sorted, so ``"repeat"`` follows the prompt; the
    hash of everything before the repeat's value is computed once and copied. Checked
    against :func:`cache_key` for repeat 0 of every cell (else it is used throughout).
    """
    canonical = cache_key(model, params, template, prompt, 0, endpoint=endpoint)
    payload = json.dumps(
        {"model": model, "params": dict(params), "template": template, "prompt": prompt,
         "repeat": 0, **({"endpoint": endpoint} if endpoint else {})},
        sort_keys=True, ensure_ascii=False, separators=(",", ":"),
    )  # fmt: skip
    # an unescaped quote after a comma is JSON structure: the prompt cannot contain one
    cut = payload.rfind(',"repeat":0,"template":')
    if cut < 0:
        return lambda repeat: cache_key(model, params, template, prompt, repeat, endpoint=endpoint)
    head = hashlib.sha256(payload[: cut + len(',"repeat":')].encode("utf-8"))
    tail = payload[cut + len(',"repeat":0') :].encode("utf-8")

    def key(repeat: int) -> str:
        digest = head.copy()
        digest.update(str(repeat).encode() + tail)
        return digest.hexdigest()

    if key(0) != canonical:  # the canonical form changed: never guess a key
        return lambda repeat: cache_key(model, params, template, prompt, repeat, endpoint=endpoint)
    return key


def derive_seed(sweep_seed: int, trial_id: str) -> int:
    """A 31-bit seed that depends only on the sweep seed and the trial id."""
    digest = hashlib.sha256(f"{sweep_seed}:{trial_id}".encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def normalize_probes(probes: str | Sequence[str]) -> tuple[ProbeName, ...]:
    """``"p1,P2, c2"`` -> ``("p1", "p2", "c2")``; unknown names are a ConfigError.

    A probe must be in :data:`facetlab.probes.PROBES` and have a name a record holds
    (:data:`~facetlab.probes.base.ProbeName`): refused here, before any call is paid for.
    """
    items = probes.split(",") if isinstance(probes, str) else list(probes)
    out: list[ProbeName] = []
    for item in items:
        name = item.strip().lower()
        if not name:
            continue
        if name not in PROBES:
            raise ConfigError(
                f"unknown probe {item.strip()!r}; expected one of {', '.join(PROBES)}"
            )
        if name not in PROBE_NAMES:
            raise ConfigError(
                f"probe {name!r} is registered in facetlab.probes.PROBES but is not a "
                f"ProbeName ({', '.join(PROBE_NAMES)}): its records could not hold it"
            )
        probe = PROBES[name].name
        if probe not in out:
            out.append(probe)
    if not out:
        raise ConfigError("no probes given (e.g. --probes p1,p2,p3,c2)")
    return tuple(out)


def instance_variant(instance: Instance) -> str:
    """``"base"``, ``"counterfactual"`` or ``"adversarial"`` for an instance (by the flags
    the probes decide P2/P3 by)."""
    if instance.is_adversarial:
        return "adversarial"
    return "counterfactual" if instance.is_counterfactual else "base"


def yes_no_truth(instance: Instance) -> Literal["yes", "no"] | None:
    """The instance's ground-truth answer when it is yes/no, so records of any domain score."""
    answer = instance.ground_truth.answer.strip().lower()
    return "yes" if answer == "yes" else "no" if answer == "no" else None


def _trial_id(probe: str, cell_id: str, repeat: int, key: str) -> str:
    """Readable and unique: ``p2.facet-neg-cf-001.r0.<first 12 hex of the content key>``."""
    return f"{probe}.{cell_id}.r{repeat}.{key[:12]}"


RepeatsFor = Callable[[str, str, str, str | None], int]
"""``(model, probe, instance_id, factor) -> repeats``; lets a preset vary replication per cell."""


def plan_sweep(
    instances: Sequence[Instance],
    probes: str | Sequence[str],
    models: Sequence[str],
    *,
    suite: ProbeSuite,
    repeats: int | RepeatsFor = 1,
    template: str = "facet-v3",
    params: SamplingParams | Mapping[str, SamplingParams] | None = None,
    seed: int = 0,
    endpoints: Mapping[str, str | None] | None = None,
    declarations: Mapping[str, Declaration] | None = None,
) -> Plan:
    """All trials of a sweep, in a stable order, without duplicates.

    ``repeats`` is the number of repeats per (model, probe, instance[, factor]) cell,
    or a function giving it per cell. ``params`` is one :class:`SamplingParams` for
    every model or a mapping model -> params (a preset's per-model temperature).
    ``endpoints`` (model -> base URL without credentials) puts the server into each
    trial's key, so one model id on two servers never shares answers.
    ``declarations`` (model -> what its backend sends) keeps parameters a backend does
    not send out of the key: asking again with another unsent value pays nothing.
    """
    probe_names = normalize_probes(probes)
    if not models:
        raise ConfigError("no model given")
    if not instances:
        raise ConfigError("no instances given")
    # Per model, once: the params sent and their dict (part of every trial's cache key).
    declared = {m: (declarations or {}).get(m, DEFAULT_DECLARATION) for m in models}
    params_by_model = {model: _params_of(params, model) for model in models}
    params_dicts = {m: declared[m].sent(p).to_dict() for m, p in params_by_model.items()}
    structured = any(p.structured for p in params_by_model.values())

    def reps(model: str, probe: str, iid: str, factor: str | None) -> int:
        n = repeats(model, probe, iid, factor) if callable(repeats) else repeats
        if n < 0:
            raise ConfigError(f"repeats must be >= 0, got {n}")
        return n

    by_id = {i.instance_id: i for i in instances}
    cells: list[PlannedCell] = []
    skipped: list[Skipped] = []
    # Two cells asked of one model with the same id, prompt and settings are one cell
    # (an instance given twice): its trials would be the same trials.
    seen: set[tuple[str, str, str]] = set()
    for instance in instances:
        base_id = instance.base_instance_id
        base = (by_id.get(base_id) or suite.base_of(instance)) if base_id else None
        for probe in probe_names:
            if not suite.applies_to(probe, instance):
                skipped.append(Skipped(probe, instance.instance_id, _skip_reason(probe, instance)))
                continue
            for cell in suite.cells(probe, instance, template=template):
                asked = _cell_trial(probe, instance, base, cell, template)
                schema = _reply_schema(probe, cell) if structured else None
                for model in models:
                    endpoint = (endpoints or {}).get(model)
                    key_of = _repeat_keys(
                        model, params_dicts[model], template, cell.prompt, endpoint=endpoint
                    )
                    if (probe, asked.instance_id, key_of(0)) in seen:
                        continue
                    seen.add((probe, asked.instance_id, key_of(0)))
                    trial = dataclasses.replace(
                        asked,
                        model=model,
                        params=params_by_model[model],
                        declaration=declared[model],
                        endpoint=endpoint,
                        output_schema=schema if params_by_model[model].structured else None,
                    )
                    n = reps(model, probe, instance.instance_id, cell.factor)
                    cells.append(PlannedCell(trial, n, seed, key_of))
    return Plan(tuple(cells), tuple(skipped))


def _cell_trial(
    probe: ProbeName, instance: Instance, base: Instance | None, cell: Cell, template: str
) -> Trial:
    """What every trial of one cell asks, but for its model (and its repeat).

    A cell of one of an instance's variant prompts (C2: the anchor's factor K rewritten;
    H1: one hint kind, or the control) is keyed by that instance: ``<id>-c2-f3``,
    ``<id>-h1-metadata``.
    """
    shown = cell.built_from
    # C2: the factor rewritten; H1: the hint kind; COTX: the intervention
    variation = cell.variation or cell.factor or cell.hint_kind
    return Trial(
        trial_id="",
        key="",
        probe=probe,
        model="",
        instance_id=f"{instance.instance_id}-{probe}-{variation.lower()}"
        if variation
        else instance.instance_id,
        base_instance_id=instance.instance_id if variation else instance.base_instance_id,
        variant=probe if variation else instance_variant(instance),
        factor_of_interest=cell.factor or instance.neutralized_label,
        perturbed_factor=cell.factor,
        hint_kind=cell.hint_kind,
        hint=cell.hint,
        n_factors=len(shown.factors),
        repeat=0,
        template=template,
        prompt=cell.prompt,
        params=SamplingParams(),
        ground_truth=yes_no_truth(shown),
        weight_estimates=shown.weight_estimates() if probe in WEIGHTED_PROBES else None,
        instance=shown,
        base_instance=instance if variation else base,
    )


def _reply_schema(probe: ProbeName, cell: Cell) -> dict[str, Any]:
    """The JSON schema of ``probe``'s reply to ``cell`` (``--structured``); a probe without
    one is refused before any call."""
    schema = PROBES[probe].reply_schema(cell.built_from)
    if schema is None:
        raise ConfigError(
            f"--structured: {probe} has no JSON reply schema; ask it in a sweep without "
            "--structured (structured: true)"
        )
    return schema


def _params_of(
    params: SamplingParams | Mapping[str, SamplingParams] | None, model: str
) -> SamplingParams:
    """The sampling params of ``model``: the sweep's one set, or its entry in a mapping."""
    if params is None:
        return SamplingParams()
    if isinstance(params, SamplingParams):
        return params
    try:
        return params[model]
    except KeyError:
        raise ConfigError(f"no sampling params given for model {model!r}") from None


def _skip_reason(probe: str, instance: Instance) -> str:
    variant = instance_variant(instance)
    if probe == "p3":
        return f"P3 runs on adversarial instances; this one is {variant}"
    if probe == "p2":
        return (
            "P2 runs on non-adversarial counterfactuals, the 'anchor' probe on base instances; "
            f"this one is {variant}"
        )
    if probe == "anchor":
        return f"ANCHOR runs on base instances; this one is {variant}"
    if probe == "c2":
        return "C2 needs a perturbation file (perturbations/<id>-c2.json)"
    if probe == "c3":
        return "C3 needs a compliance file (compliance/<id>-c3.json)"
    return f"{probe.upper()} does not apply to this instance"
