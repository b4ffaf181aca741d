"""facetlab's own trial record: one JSON object per trial.

A record is self-describing: it says what was asked (probe, instance, variant,
template, prompt and its hash), of whom (model string, provider id, canonical
model, backend, sampling parameters), what came back (raw text, parsed result,
parse status) and what it cost (tokens, USD, latency). Secrets never appear:
records hold no headers, keys or client configuration.

Files are written by :mod:`facetlab.runner` as ``<sweep>/records/<trial_id>.json``
and read back by :func:`facetlab.records.load_trials` next to the FACET v3 raw
files.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from facetlab.backends.base import Usage  # one token-usage type, as the provider reported it
from facetlab.probes.base import Parsed, ParseStatus  # a probe's parse result is recorded as is

__all__ = [
    "RECORD_FORMAT",
    "ParseStatus",
    "Parsed",
    "Probe",
    "TrialInputs",
    "TrialRecord",
    "TrialStatus",
    "Usage",
    "estimate_gaps",
    "prompt_sha256",
    "residuals",
]

RECORD_FORMAT = "facetlab.record/1"

Probe = Literal["p1", "p2", "p3", "c2", "c0", "c3", "anchor", "h1"]
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


residuals = estimate_gaps
"""Deprecated name of :func:`estimate_gaps` (one release)."""


def prompt_sha256(prompt: str) -> str:
    """The sha256 hex digest of a prompt's UTF-8 bytes (the record's ``prompt_sha256``)."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


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
    """One trial. Field names are stable; new fields are only ever added."""

    model_config = ConfigDict(extra="allow")

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

    template: str
    prompt: str
    prompt_sha256: str

    status: TrialStatus
    error: str | None = None
    attempts: int = 1
    raw_response: str | None = None
    parsed: Parsed = Field(default_factory=Parsed)
    parse_status: ParseStatus = "not_parsed"

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
        # ``residual`` was this field's name until records said "estimate_gap"; old
        # records and old callers still give it, and it lands here, once.
        if isinstance(data, dict) and "residual" in data:
            data = dict(data)
            old = data.pop("residual")
            data.setdefault("estimate_gap", old)
        return data

    @property
    def residual(self) -> dict[str, float] | None:
        """Deprecated name of :attr:`estimate_gap` (one release)."""
        return self.estimate_gap

    inputs: TrialInputs | None = None
    """Fingerprints of the instance content, perturbation, template and parser used;
    None in records written before facetlab recorded them."""

    started_at: str
    finished_at: str
    latency_s: float | None = None
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    cached: bool = False
    facetlab_version: str
