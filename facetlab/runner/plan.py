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
from dataclasses import dataclass, field
from typing import Any, Protocol

from facetlab.backends.base import DEFAULT_DECLARATION, Declaration, SamplingParams, TrialContext
from facetlab.client.cache import cache_key
from facetlab.errors import ConfigError
from facetlab.probes import PROBES
from facetlab.probes.base import ParseResult

KNOWN_PROBES: tuple[str, ...] = tuple(PROBES)
"""Probe names a sweep accepts: the keys of :data:`facetlab.probes.PROBES`."""


@dataclass(frozen=True)
class Cell:
    """One prompt a probe asks of one instance (C2: one per perturbed factor)."""

    prompt: str
    built_from: Any
    """The instance the prompt shows (for C2: the anchor with one factor rewritten)."""
    factor: str | None = None
    """Positional label ("F3") of the perturbed factor, for per-factor probes."""


class ProbeSuite(Protocol):
    """What the planner needs from :mod:`facetlab.probes` and :mod:`facetlab.instances`.

    The default, :class:`facetlab.runner.suite.FacetSuite`, wires the real modules;
    tests pass stubs.
    """

    def applies_to(self, probe: str, instance: Any) -> bool:
        """Whether ``probe`` is run on ``instance``."""
        ...

    def cells(self, probe: str, instance: Any, *, template: str) -> Sequence[Cell]:
        """The prompts ``probe`` asks of ``instance`` (one, or one per perturbed factor)."""
        ...

    def parse_reply(self, probe: str, text: str, instance: Any, *, parser: str) -> ParseResult:
        """Parse a reply; must not raise on model output."""
        ...

    # Optional: ``base_of(instance) -> Instance | None`` loads a variant's base instance
    # when it is not among the planned instances (it goes in ModelRequest.context).


@dataclass(frozen=True, slots=True)
class Trial:
    """One call of one probe on one instance variant with one model."""

    trial_id: str
    key: str
    """sha256 of (model, params, template, prompt, repeat): the cache key."""
    probe: str
    model: str
    instance_id: str
    base_instance_id: str | None
    variant: str
    factor_of_interest: str | None
    perturbed_factor: str | None
    n_factors: int
    repeat: int
    template: str
    prompt: str
    params: SamplingParams
    seed: int
    """Per-trial seed derived from the sweep seed and the trial id."""
    instance: Any = field(compare=False, repr=False)
    """The instance the prompt was built from (for C2: the anchor with factor K rewritten)."""
    base_instance: Any = field(compare=False, repr=False, default=None)
    declaration: Declaration = field(compare=False, repr=False, default=DEFAULT_DECLARATION)
    """What the model's backend sends (its :class:`~facetlab.backends.Declaration`)."""
    endpoint: str | None = field(compare=False, repr=False, default=None)
    """The server asked when it is not the provider's default (in the key; prices a local one)."""

    def context(self) -> TrialContext:
        """The :attr:`ModelRequest.context` of this trial."""
        return TrialContext(
            probe=self.probe,
            instance_id=self.instance_id,
            base_instance_id=self.base_instance_id,
            variant=self.variant,
            perturbed_factor=self.perturbed_factor,
            repeat=self.repeat,
            seed=self.seed,
            instance=self.instance,
            base_instance=self.base_instance,
            template=self.template,
        )

    def request_params(self) -> SamplingParams:
        """The sampling params asked for: the sweep's, with its seed replaced by the trial's."""
        if self.params.seed is None:
            return self.params
        return dataclasses.replace(self.params, seed=self.seed)

    def sent_params(self) -> SamplingParams:
        """The sampling params the request body carries (what the record states)."""
        return self.declaration.sent(self.request_params())

    def unsent_params(self) -> list[str]:
        """Parameters asked for that the backend does not send."""
        return self.declaration.unsent(self.params)


@dataclass(frozen=True)
class Skipped:
    """A (probe, instance) pair the plan leaves out, and why."""

    probe: str
    instance_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class PlannedCell:
    """One cell asked of one model; its trials (one per repeat) are built when iterated.

    The prompt is built once per cell and shared by its models and repeats, so a plan
    holds one of these per (cell, model) however many repeats a sweep asks for.
    """

    probe: str
    model: str
    cell_id: str
    base_instance_id: str | None
    variant: str
    factor_of_interest: str | None
    perturbed_factor: str | None
    n_factors: int
    repeats: int
    template: str
    prompt: str
    params: SamplingParams
    sweep_seed: int
    instance: Any
    base_instance: Any
    declaration: Declaration
    endpoint: str | None
    key_of: Callable[[int], str]
    """``repeat -> cache key`` (see :func:`_repeat_keys`)."""

    def trials(self) -> Iterator[Trial]:
        """The cell's trials, repeat 0 first."""
        for repeat in range(self.repeats):
            key = self.key_of(repeat)
            tid = _trial_id(self.probe, self.cell_id, repeat, key)
            yield Trial(
                trial_id=tid,
                key=key,
                probe=self.probe,
                model=self.model,
                instance_id=self.cell_id,
                base_instance_id=self.base_instance_id,
                variant=self.variant,
                factor_of_interest=self.factor_of_interest,
                perturbed_factor=self.perturbed_factor,
                n_factors=self.n_factors,
                repeat=repeat,
                template=self.template,
                prompt=self.prompt,
                params=self.params,
                seed=derive_seed(self.sweep_seed, tid),
                instance=self.instance,
                base_instance=self.base_instance,
                declaration=self.declaration,
                endpoint=self.endpoint,
            )


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
        for cell in self.cells:
            if cell.repeats:
                counts[cell.probe] = counts.get(cell.probe, 0) + cell.repeats
        return counts

    def probes(self) -> list[str]:
        """The probes with at least one trial, sorted."""
        return sorted(self.by_probe())

    def instance_ids(self) -> set[str]:
        """The instances the trials ask about (for C2: the anchors)."""
        return {
            (c.base_instance_id or c.cell_id) if c.probe in ("c2", "h1") else c.cell_id
            for c in self.cells
            if c.repeats
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


def normalize_probes(probes: str | Sequence[str]) -> tuple[str, ...]:
    """``"p1,P2, c2"`` -> ``("p1", "p2", "c2")``; unknown names are a ConfigError."""
    items = probes.split(",") if isinstance(probes, str) else list(probes)
    out: list[str] = []
    for item in items:
        name = item.strip().lower()
        if not name:
            continue
        if name not in KNOWN_PROBES:
            raise ConfigError(
                f"unknown probe {item.strip()!r}; expected one of {', '.join(KNOWN_PROBES)}"
            )
        if name not in out:
            out.append(name)
    if not out:
        raise ConfigError("no probes given (e.g. --probes p1,p2,p3,c2)")
    return tuple(out)


def instance_variant(instance: Any) -> str:
    """``"base"``, ``"counterfactual"`` or ``"adversarial"`` for an instance.

    An explicit ``variant`` wins; otherwise the instance's own ``is_adversarial`` /
    ``is_counterfactual`` flags (the ones the probes decide P2/P3 by), falling back to
    the FACET id conventions (``-adv``, ``-cf-``) for objects without them.
    """
    variant = getattr(instance, "variant", None)
    if isinstance(variant, str) and variant:
        return variant
    iid = str(getattr(instance, "instance_id", ""))
    adversarial = getattr(instance, "is_adversarial", None)
    if not isinstance(adversarial, bool):
        adversarial = "-adv" in iid
    if adversarial:
        return "adversarial"
    counterfactual = getattr(instance, "is_counterfactual", None)
    if not isinstance(counterfactual, bool):
        kind = getattr(instance, "instance_type", None)
        counterfactual = kind == "counterfactual" or "-cf-" in iid
    return "counterfactual" if counterfactual else "base"


def weight_estimates(instance: Any) -> dict[str, float] | None:
    """The instance's own per-factor weight estimates (F1..FN, percent), if it has them."""
    fn = getattr(instance, "weight_estimates", None)
    if fn is None:
        return None
    value = fn() if callable(fn) else fn
    if not value:
        return None
    return {str(k): float(v) for k, v in dict(value).items()}


def neutralized_label(instance: Any) -> str | None:
    """Label of the factor a counterfactual neutralizes (``"F1"``), or None."""
    value = getattr(instance, "neutralized_label", None)
    if callable(value):
        value = value()
    return str(value) if value else None


def _trial_id(probe: str, cell_id: str, repeat: int, key: str) -> str:
    """Readable and unique: ``p2.facet-neg-cf-001.r0.<first 12 hex of the content key>``."""
    return f"{probe}.{cell_id}.r{repeat}.{key[:12]}"


RepeatsFor = Callable[[str, str, str, str | None], int]
"""``(model, probe, instance_id, factor) -> repeats``; lets a preset vary replication per cell."""


def plan_sweep(
    instances: Sequence[Any],
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

    def reps(model: str, probe: str, iid: str, factor: str | None) -> int:
        n = repeats(model, probe, iid, factor) if callable(repeats) else repeats
        if n < 0:
            raise ConfigError(f"repeats must be >= 0, got {n}")
        return n

    by_id = {str(i.instance_id): i for i in instances}

    def base_of(instance: Any) -> Any:
        base_id = getattr(instance, "base_instance_id", None)
        if not base_id:
            return None
        if base_id in by_id:
            return by_id[base_id]
        finder = getattr(suite, "base_of", None)  # optional: load it from the data
        return finder(instance) if callable(finder) else None

    cells: list[PlannedCell] = []
    skipped: list[Skipped] = []
    # Two cells asked of one model with the same id, prompt and settings are one cell
    # (an instance given twice): its trials would be the same trials.
    seen: set[tuple[str, str, str]] = set()
    for instance in instances:
        iid = str(instance.instance_id)
        base_instance = base_of(instance)
        for probe in probe_names:
            if not suite.applies_to(probe, instance):
                skipped.append(Skipped(probe, iid, _skip_reason(probe, instance)))
                continue
            for cell in suite.cells(probe, instance, template=template):
                # Shared by every trial of the cell. A per-factor cell (C2) is keyed by
                # its anchor and stands for the anchor's factor K.
                cell_id = f"{iid}-{probe}-{cell.factor.lower()}" if cell.factor else iid
                n_factors = len(getattr(cell.built_from, "factors", ()) or ())
                cell_base_id: str | None
                foi: str | None
                if cell.factor is not None:
                    cell_base_id, variant, foi = iid, probe, cell.factor
                    cell_base: Any = instance
                else:
                    cell_base_id = getattr(instance, "base_instance_id", None)
                    variant, foi = instance_variant(instance), neutralized_label(instance)
                    cell_base = base_instance
                for model in models:
                    endpoint = (endpoints or {}).get(model)
                    key_of = _repeat_keys(
                        model, params_dicts[model], template, cell.prompt, endpoint=endpoint
                    )
                    identity = (probe, cell_id, key_of(0))
                    if identity in seen:
                        continue
                    seen.add(identity)
                    cells.append(
                        PlannedCell(
                            probe=probe,
                            model=model,
                            cell_id=cell_id,
                            base_instance_id=cell_base_id,
                            variant=variant,
                            factor_of_interest=foi,
                            perturbed_factor=cell.factor,
                            n_factors=n_factors,
                            repeats=reps(model, probe, iid, cell.factor),
                            template=template,
                            prompt=cell.prompt,
                            params=params_by_model[model],
                            sweep_seed=seed,
                            instance=cell.built_from,
                            base_instance=cell_base,
                            declaration=declared[model],
                            endpoint=endpoint,
                            key_of=key_of,
                        )
                    )
    return Plan(tuple(cells), tuple(skipped))


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


def _skip_reason(probe: str, instance: Any) -> str:
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
    return f"{probe.upper()} does not apply to this instance"
