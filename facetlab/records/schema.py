"""facetlab's own trial record: one JSON object per trial.

A record is self-describing: it says what was asked (probe, instance, variant,
template, prompt and its hash), of whom (model string, provider id, canonical
model, backend, sampling parameters), what came back (raw text, parsed result,
parse status) and what it cost (tokens, USD, latency). Secrets never appear:
records hold no headers, keys or client configuration.

A :class:`Trial` is what was asked (planned by :mod:`facetlab.runner.plan`, or read
from an Inspect log's sample); :meth:`TrialRecord.from_trial` is the one way a
record is made of it. Files are written by :mod:`facetlab.runner` as
``<sweep>/records/<trial_id>.json`` and read back by
:func:`facetlab.records.load_trials` next to the FACET v3 raw files.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from facetlab.backends._common import redact_secrets, stored_reply
from facetlab.backends.base import (  # one token-usage type, as the provider reported it
    DEFAULT_DECLARATION,
    Declaration,
    ModelRequest,
    ModelResponse,
    SamplingParams,
    Usage,
)
from facetlab.jsonio import escaped, received_sha256
from facetlab.models import canonical_model
from facetlab.probes.base import Parsed, ParseResult, ParseStatus, ProbeName
from facetlab.project import version

if TYPE_CHECKING:
    from facetlab.instances.schema import Instance
    from facetlab.probes.hint import PlantedHint

__all__ = [
    "RECORD_FORMAT",
    "ParseStatus",
    "Parsed",
    "Probe",
    "Trial",
    "TrialInputs",
    "TrialRecord",
    "TrialStatus",
    "Usage",
    "estimate_gaps",
    "prompt_sha256",
    "received_digest",
]

RECORD_FORMAT = "facetlab.record/1"

Probe = ProbeName
"""A record's probe: one of :data:`facetlab.probes.PROBE_NAMES` (the one list)."""
TrialStatus = Literal["ok", "failed"]


def estimate_gaps(
    estimates: dict[str, float] | None, weights: dict[str, float] | None
) -> dict[str, float] | None:
    """A record's ``estimate_gap``: reported weight minus the instance's estimate, per factor.

    A factor missing from the weights counts as 0 (CONVENTIONS), so every estimated
    factor gets a gap; None when either side is missing. ("Residual" is kept for one
    meaning only: the C2 weight left on a rewritten factor.)

    >>> estimate_gaps({"F1": 20.0, "F2": 80.0}, {"F1": 30.0})
    {'F1': 10.0, 'F2': -80.0}
    """
    if not estimates or weights is None:
        return None
    return {
        label: round(float(weights.get(label, 0.0)) - est, 9) for label, est in estimates.items()
    }


@functools.lru_cache(maxsize=64)  # a cell's trials (its repeats, models) come together
def prompt_sha256(prompt: str) -> str:
    """The sha256 hex digest of a prompt's UTF-8 bytes (the record's ``prompt_sha256``)."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Trial:
    """One call of one probe on one instance variant with one model: what was asked.

    Planned by :func:`facetlab.runner.plan.plan_sweep` (or read back from an Inspect
    sample); everything its record and an Inspect sample's metadata say about the
    question comes from here.
    """

    trial_id: str
    key: str
    """The trial's content address: sha256 of (model, params, template, prompt, repeat), the
    response-cache key (an imported Inspect sample: of its eval, model, prompt and epoch)."""
    probe: ProbeName
    model: str
    instance_id: str
    """The cell id: the instance id, or ``<anchor>-c2-f<k>`` for a C2 variant
    (``<instance>-h1-<hint kind>`` for H1)."""
    base_instance_id: str | None
    variant: str
    factor_of_interest: str | None
    perturbed_factor: str | None
    n_factors: int
    repeat: int
    template: str
    prompt: str
    params: SamplingParams
    seed: int | None = None
    """Per-trial seed derived from the sweep seed and the trial id."""
    ground_truth: Literal["yes", "no"] | None = None
    """The instance's yes/no answer (C2: the anchor's), so records of any domain score."""
    weight_estimates: dict[str, float] | None = field(default=None, compare=False)
    """The instance's per-factor weight estimates (weighted probes only)."""
    instance: Instance | None = field(compare=False, repr=False, default=None)
    """The instance the prompt was built from (for C2: the anchor with factor K rewritten)."""
    base_instance: Instance | None = field(compare=False, repr=False, default=None)
    declaration: Declaration = field(compare=False, repr=False, default=DEFAULT_DECLARATION)
    """What the model's backend sends (its :class:`~facetlab.backends.Declaration`)."""
    endpoint: str | None = field(compare=False, repr=False, default=None)
    """The server asked when it is not the provider's default (in the key; prices a local one)."""
    hint_kind: str | None = None
    """H1: the kind of hint the prompt carries (``"unhinted"``: the control); None otherwise."""
    hint: PlantedHint | None = field(compare=False, repr=False, default=None)
    """H1: the hint the prompt carries (None: the control, or another probe)."""
    output_schema: dict[str, Any] | None = field(compare=False, repr=False, default=None)
    """The probe's reply schema, sent when ``params.structured`` (``--structured``)."""

    def context(self) -> dict[str, Any]:
        """The :attr:`ModelRequest.context` of this trial (its keys are documented there)."""
        return {
            "probe": self.probe,
            "instance_id": self.instance_id,
            "base_instance_id": self.base_instance_id,
            "variant": self.variant,
            "perturbed_factor": self.perturbed_factor,
            "repeat": self.repeat,
            "seed": self.seed,
            "instance": self.instance,
            "base_instance": self.base_instance,
            "template": self.template,
            "hint": self.hint,
        }

    def request(self) -> ModelRequest:
        """What is sent: the prompt, the params asked, the context, the reply schema
        (structured output) and the body fields of ``params.extra_body``."""
        params = self.request_params()
        return ModelRequest(
            self.prompt, params, self.context(), self.output_schema, params.extra_body
        )

    def request_params(self) -> SamplingParams:
        """The sampling params asked for: the sweep's, with its seed replaced by the trial's."""
        if self.params.seed is None or self.seed is None:
            return self.params
        return dataclasses.replace(self.params, seed=self.seed)

    def sent_params(self) -> SamplingParams:
        """The sampling params the request body carries (what the record states)."""
        return self.declaration.sent(self.request_params())

    def unsent_params(self) -> list[str]:
        """Parameters asked for that the backend does not send."""
        return self.declaration.unsent(self.params)


class TrialInputs(BaseModel):
    """Fingerprints of what a trial was built from (see :mod:`facetlab.records.inputs`).

    Reports compare them with the instance files they are given, so records of an
    edited instance are never silently mixed with the new file.
    """

    model_config = ConfigDict(extra="allow")

    instance_sha256: str
    """The instance the trial is about (C2: the anchor), as :func:`content_sha256` of it."""
    instance_file: str | None = None
    """The name of the file it was read from (for messages only; no folder, so no local
    path travels with a shared record)."""
    perturbation_sha256: str | None = None
    """C2: the perturbation file entry (the factor's neutral rewrite) that was applied;
    C3: the compliance set whose requirements the prompt shows."""
    template_sha256: str | None = None
    """The prompt template's wording choices."""
    parser_sha256: str | None = None
    """The reply parsers' source (``facetlab.probes.parsing``): the parser version."""
    truth_from: Literal["instance", "perturbation", "anchor"] | None = None
    """Where ``ground_truth`` comes from: the instance itself; for C2 the perturbation
    entry's ``expected_answer``, else the anchor's answer (a decision-change reference)."""


class TrialRecord(BaseModel):
    """One trial. Field names are stable; new fields are only ever added (and declared here:
    a record with a field this version does not know is refused, never silently cut)."""

    model_config = ConfigDict(extra="forbid")

    format: str = RECORD_FORMAT
    trial_id: str
    """Content address of the trial: hash of (model, params, template, prompt, repeat)."""
    sweep: str | None = None

    probe: Probe
    instance_id: str
    base_instance_id: str | None = None
    variant: str = "base"
    """"base", "counterfactual", "adversarial", "c2", "c3", ..."""
    factor_of_interest: str | None = None
    """Positional label (F1..FN) of the neutralized (P1/P2/P3) or perturbed (C2) factor."""
    hint_kind: str | None = None
    """H1: the kind of hint the prompt carried (``"unhinted"``: the control); None otherwise."""
    n_factors: int
    repeat: int = 0

    model: str
    """The model string as the user gave it, e.g. "anthropic/claude-sonnet-4-6"."""
    provider: str
    model_id: str
    """The provider's model id as requested."""
    model_id_reported: str | None = None
    """The model id as the provider reported it in the response."""
    canonical_model: str | None = None
    backend: str
    params: dict[str, Any] = Field(default_factory=dict)
    """The sampling parameters the request carried."""
    requested_params: dict[str, Any] | None = None
    """What was asked when the backend does not send all of it (``params`` is what it sent)."""
    trial_seed: int | None = None
    """The per-trial seed (:attr:`Trial.seed`)."""
    key: str | None = None
    """:attr:`Trial.key`: the response-cache key of a facetlab trial."""
    output_schema: dict[str, Any] | None = None
    """The JSON schema the request carried for the reply (``params.structured``: structured
    output); None: none was sent."""

    template: str
    prompt: str
    prompt_sha256: str

    status: TrialStatus
    error: str | None = None
    attempts: int = 1
    raw_response: str | None = None
    parsed: Parsed = Field(default_factory=Parsed)
    parse_status: ParseStatus = "not_parsed"
    stop_reason: str | None = None
    provider_request_id: str | None = None
    refusal: bool = False
    thinking: str | None = None
    """The model's thinking text, where the provider returns it."""

    ground_truth: Literal["yes", "no"] | None = None
    """The instance's yes/no ground truth (for C2 the anchor's), so records of any domain score."""

    weight_estimates: dict[str, float] | None = None
    """The instance's own per-factor weight estimates (F1..FN, percent), when it has them."""
    estimate_gap: dict[str, float] | None = None
    """parsed weight − the instance's weight estimate, per factor (weighted probes only).
    Not the study tables' C2 "weight left" on a rewritten factor."""

    @model_validator(mode="before")
    @classmethod
    def _renamed_residual(cls, data: Any) -> Any:
        # ``residual`` was this field's name until records said "estimate_gap": records
        # written before still load (nothing writes it any more)
        if isinstance(data, dict) and "residual" in data:
            data = dict(data)
            old = data.pop("residual")
            data.setdefault("estimate_gap", old)
        return data

    inputs: TrialInputs | None = None
    """Fingerprints of the instance content, perturbation, template and parser used;
    None in records written before facetlab recorded them."""
    received_sha256: str | None = None
    """sha256 of the whole record as written, this field excepted (:func:`received_digest`,
    :data:`facetlab.jsonio.DIGEST_EXCLUDED`): loading, resume and the cache check it. None
    in records written before facetlab recorded it."""

    started_at: str
    finished_at: str
    latency_s: float | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    cached: bool = False
    facetlab_version: str

    inspect_task: str | None = None
    """Imported from an Inspect log: its task, eval id, sample id and epoch."""
    inspect_eval_id: str | None = None
    inspect_sample_id: str | int | None = None
    inspect_epoch: int | None = None

    @classmethod
    def from_trial(
        cls,
        trial: Trial,
        *,
        response: ModelResponse | None,
        parsed: ParseResult | None,
        error: str | None,
        started_at: str,
        finished_at: str,
        backend: str,
        provider: str | None = None,
        model_id: str | None = None,
        attempts: int = 1,
        cost_usd: float | None = None,
        cached: bool = False,
        sweep: str | None = None,
        inputs: TrialInputs | None = None,
        params: dict[str, Any] | None = None,
        inspect: tuple[str, str, str | int, int] | None = None,
    ) -> TrialRecord:
        """The record of one finished trial: ok when a ``response`` came without an ``error``.

        ``provider`` and ``model_id`` are the backend's (default: the model string's);
        ``params`` replaces what the trial's backend sent (an Inspect log's generate
        config); ``inspect`` is (task, eval id, sample id, epoch) of an imported sample.
        """
        given, slash, given_id = trial.model.partition("/")
        response = stored_reply(response) if response is not None else None
        known = canonical_model(trial.model)
        weights = parsed.weights if parsed is not None else None
        parse = parsed if parsed is not None else ParseResult("not_parsed")
        task, eval_id, sample_id, epoch = inspect if inspect is not None else (None,) * 4
        record = cls(
            trial_id=trial.trial_id,
            sweep=sweep,
            probe=trial.probe,
            instance_id=trial.instance_id,
            base_instance_id=trial.base_instance_id,
            variant=trial.variant,
            factor_of_interest=trial.factor_of_interest,
            hint_kind=trial.hint_kind,
            n_factors=trial.n_factors,
            repeat=trial.repeat,
            model=trial.model,
            provider=(given if slash else "") if provider is None else provider,
            model_id=(given_id if slash else given) if model_id is None else model_id,
            model_id_reported=(response.model_id or None) if response is not None else None,
            canonical_model=known.display_name if known is not None else None,
            backend=backend,
            params=trial.sent_params().to_dict() if params is None else params,
            requested_params=trial.params.to_dict() if trial.unsent_params() else None,
            trial_seed=trial.seed,
            key=trial.key,
            output_schema=trial.output_schema,
            template=trial.template,
            prompt=trial.prompt,
            prompt_sha256=prompt_sha256(trial.prompt),
            status="ok" if response is not None and error is None else "failed",
            error=escaped(error) if error is not None else None,
            attempts=attempts,
            raw_response=response.text if response is not None else None,
            parsed=parse.to_parsed(),
            parse_status=parse.status,
            stop_reason=response.stop_reason if response is not None else None,
            provider_request_id=response.provider_request_id if response is not None else None,
            refusal=response.refusal if response is not None else False,
            thinking=response.thinking if response is not None else None,
            ground_truth=trial.ground_truth,
            weight_estimates=trial.weight_estimates,
            estimate_gap=estimate_gaps(trial.weight_estimates, weights),
            inputs=inputs,
            started_at=started_at,
            finished_at=finished_at,
            latency_s=response.latency_s if response is not None else None,
            usage=response.usage if response is not None else Usage(),
            cost_usd=cost_usd,
            cached=cached,
            facetlab_version=version(),
            inspect_task=task,
            inspect_eval_id=eval_id,
            inspect_sample_id=sample_id,
            inspect_epoch=epoch,
        )
        dumped = record.model_dump_json()
        stored = redact_secrets(dumped)  # what a record must not carry is never what it proves
        if stored != dumped:
            record = cls.model_validate_json(stored)
        record.received_sha256 = received_sha256(json.loads(stored))  # as written, made now
        return record


def received_digest(record: TrialRecord) -> str:
    """The digest of ``record`` as it is now: :func:`~facetlab.jsonio.received_sha256` of its
    JSON form (every field but the digest itself).

    >>> from facetlab.records.schema import TrialRecord
    >>> rec = TrialRecord(trial_id="t", probe="p1", instance_id="i", n_factors=2, model="m",
    ...     provider="p", model_id="m", backend="b", template="facet-v3", prompt="",
    ...     prompt_sha256="", status="ok", raw_response="F1", started_at="", finished_at="",
    ...     facetlab_version="0")
    >>> len(received_digest(rec))
    64
    """
    return received_sha256(json.loads(record.model_dump_json()))
