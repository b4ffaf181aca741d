"""What every probe provides: build a prompt for a trial, parse a reply.

One module per probe lives beside this file (``single_factor.py`` P1,
``weighted_rank.py`` P2/P3/anchors, ``ablation.py`` C2, ``outcome.py`` C0,
``compliance.py`` C3, ``hint.py`` H1) and registers itself in ``facetlab.probes.PROBES``.
Parsers never raise on model output: whatever is wrong is reported in
:attr:`ParseResult.status` and :attr:`ParseResult.problems`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from facetlab.errors import ConfigError

if TYPE_CHECKING:
    from facetlab.instances.schema import Instance, PerturbationSet

ProbeName = Literal["p1", "p2", "p3", "c2", "c0", "c3", "anchor", "h1", "cot", "cotx"]
"""Every probe's name: the one list (a record's ``probe``, :data:`facetlab.probes.PROBES`'
keys). A :class:`Probe` named otherwise cannot be made, so no trial is planned, and
paid for, that its record could not hold."""

PROBE_NAMES: tuple[str, ...] = get_args(ProbeName)

ParseStatus = Literal["ok", "repaired", "malformed", "empty", "not_parsed"]
"""How a reply parsed; recorded as a trial record's ``parse_status``."""


class Parsed(BaseModel):
    """What a probe's parser extracted from the reply.

    ``weights`` uses positional labels ``F1..FN`` (see CONVENTIONS: the i-th factor
    is ``F<i>``); ``label`` is the P1 factor label; ``answer`` is "yes"/"no"/None.
    """

    model_config = ConfigDict(extra="allow")

    weights: dict[str, float] | None = None
    weight_sum: float | None = None
    answer: Literal["yes", "no"] | None = None
    label: str | None = None
    problems: list[str] = Field(default_factory=list)


@dataclass(frozen=True)
class ParseResult:
    """A parsed reply. ``weights`` are keyed by positional label F1..FN."""

    status: ParseStatus
    weights: dict[str, float] | None = None
    weight_sum: float | None = None
    answer: Literal["yes", "no"] | None = None
    label: str | None = None
    problems: tuple[str, ...] = field(default_factory=tuple)
    requirements: dict[str, Literal["yes", "no"]] | None = None
    """C3 only: the per-requirement answers ``{"R1": "yes", ...}``."""

    def to_parsed(self) -> Parsed:
        extra: dict[str, Any] = {}
        if self.requirements is not None:
            extra["requirements"] = dict(self.requirements)
        return Parsed(
            weights=self.weights,
            weight_sum=self.weight_sum,
            answer=self.answer,
            label=self.label,
            problems=list(self.problems),
            **extra,
        )


EMPTY_REPLY = ParseResult(status="empty", problems=("empty reply",))
"""What every parser returns for a missing or blank reply."""


def is_blank(text: object) -> bool:
    """True for a reply that is not a string or holds only whitespace."""
    return not isinstance(text, str) or not text.strip()


@dataclass(frozen=True)
class Probe:
    """One way of asking: which instances it fits, how its prompt is built, how replies parse.

    Instances of this class live in :data:`facetlab.probes.PROBES`. ``per_factor``
    probes (C2) are run once per perturbed factor: :meth:`factors` lists them.
    ``_parse(text, n_factors, parser=...)``: a reply's parse depends on the number of
    factors only, so records and logs parse without the instance files.
    """

    name: ProbeName
    title: str
    reply_format: str
    per_factor: bool
    _applies: Callable[..., bool] = field(repr=False)
    _build: Callable[..., str] = field(repr=False)
    _parse: Callable[..., ParseResult] = field(repr=False)
    _factors: Callable[..., tuple[str, ...]] | None = field(default=None, repr=False)
    _schema: Callable[[Any], dict[str, Any]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.name not in PROBE_NAMES:
            raise ConfigError(
                f"probe {self.name!r} is not in facetlab.probes.base.ProbeName "
                f"({', '.join(PROBE_NAMES)}): add it there, so its records can hold it"
            )

    def applies_to(
        self,
        instance: Instance,
        *,
        perturbations_available: bool = False,
        compliance_available: bool = False,
    ) -> bool:
        """Whether this probe is run on ``instance`` (see each probe module for the rule)."""
        return self._applies(
            instance,
            perturbations_available=perturbations_available,
            compliance_available=compliance_available,
        )

    def build_prompt(
        self,
        instance: Instance,
        *,
        template: str = "facet-v3",
        factor: str | None = None,
        perturbations: PerturbationSet | None = None,
        **extra: Any,
    ) -> str:
        """The prompt text for one trial; raises a :class:`facetlab.errors.FacetlabError` subclass."""
        return self._build(
            instance, template=template, factor=factor, perturbations=perturbations, **extra
        )

    def parse(self, text: str, n_factors: int, *, parser: str = "strict") -> ParseResult:
        """Parse a reply to a prompt of ``n_factors`` factors; never raises on model output."""
        return self._parse(text, n_factors, parser=parser)

    def reply_schema(self, instance: Instance) -> dict[str, Any] | None:
        """The JSON schema of a reply to this probe on ``instance`` (structured output);
        None for a probe that has none. Its parser reads such a reply."""
        return self._schema(instance) if self._schema is not None else None

    def factors(
        self, instance: Instance, perturbations: PerturbationSet | None = None
    ) -> tuple[str | None, ...]:
        """Factor ids (``"f1"``...) a trial is built for; ``(None,)`` for whole-instance probes."""
        if self._factors is None:
            return (None,)
        return self._factors(instance, perturbations)


def every_instance(instance: Any, **_: bool) -> bool:
    """The ``_applies`` rule of a probe that runs on every instance."""
    return True


def whole_instance_prompt(prompt: Callable[[Any, str], str]) -> Callable[..., str]:
    """A probe's ``_build`` from ``prompt(instance, template)``.

    For probes whose prompt depends on the instance and the template only (no
    perturbed factor, no perturbation or compliance set).
    """

    def build(instance: Any, *, template: str = "facet-v3", **_: Any) -> str:
        return prompt(instance, template)

    return build
