"""How a sweep runs (not what it asks): one settings object, as httpx groups ``Limits``.

``facetlab.run`` takes what to ask (instances, probes, models, repeats, template)
as arguments and how to ask it as objects: :class:`~facetlab.backends.base.SamplingParams`
(temperature, max tokens, system prompt), :class:`~facetlab.client.limits.Limits`
(concurrency, requests and tokens per minute), :class:`~facetlab.client.retry.RetryPolicy`
(attempts, backoff, the retry-after cap) and :class:`RunOptions` (everything else).

>>> RunOptions(budget_usd=5.0, timeout_s=60).budget_usd
5.0
>>> RunOptions(budget_usd=float("nan"))
Traceback (most recent call last):
...
facetlab.errors.ConfigError: --budget-usd is nan; expected a finite number >= 0
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from facetlab.backends.base import DEFAULT_TIMEOUT_S
from facetlab.errors import ConfigError
from facetlab.numbers import check_number
from facetlab.runner._preflight import check_path

__all__ = ["DEFAULT_TIMEOUT_S", "SHARDS_FROM", "RunOptions"]  # the timeout's default: backends.base

SHARDS_FROM = 5000
"""Planned trials from which ``records="auto"`` writes shards instead of one file per trial."""


@dataclass(frozen=True)
class RunOptions:
    """Budget, cache, resume, timeouts, batch and interrupt settings of a run."""

    budget_usd: float | None = None
    """Refuse to start past it; stop cleanly when the spend reaches it."""
    retry_errors: bool = False
    """Also run again the trials recorded as failed."""
    cache_dir: Path | str | None = None
    """Response cache (default: ``<out>/cache``, or ``FACETLAB_CACHE_DIR``)."""
    parser: str = "strict"
    """Reply parser: ``strict`` or ``facet-v3``."""
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    """Seconds one call may take before it is abandoned and retried."""
    batch: bool = False
    """Use the provider's batch API (half price, slower)."""
    batch_poll_s: float = 30.0
    """Seconds between polls of an open provider batch."""
    batch_wait_s: float | None = 0.0
    """How long a run waits for open batches to end: 0 looks once (collects what ended) and
    returns; ``None`` polls until every batch ended."""
    batch_submit: bool = True
    """Submit pending trials as batches (``facetlab collect`` only collects: False)."""
    abandon_batches: bool = False
    """Give up the open batches holding this sweep's trials (``--abandon-batches``), so a
    run without ``batch`` pays for them directly, or a batch run submits them anew."""
    new_design: bool = False
    """Allow another model/params/template in an ``out`` that holds a sweep."""
    interrupt_grace_s: float = 5.0
    """After an interrupt, how long calls in flight may finish before they are cancelled."""
    records: Literal["auto", "files", "shards"] = "auto"
    """How records are stored: one file per trial, or append-only shards compacted into
    Parquet at the end (``auto``: shards from :data:`SHARDS_FROM` planned trials on, or
    when the folder already holds shards)."""
    freeze_heap: bool = False
    """Once the backends are built, ``gc.freeze()`` what is alive (mostly the SDKs' imports),
    so the garbage collector stops walking it during the sweep (~0.1 s of pauses at the
    start of a 400-trial sweep). For one-shot processes: ``facetlab run`` sets it; in a
    notebook kernel leave it off (cyclic garbage alive at that moment would never be freed)."""

    def __post_init__(self) -> None:
        if self.cache_dir is not None and str(self.cache_dir).strip():  # too long a name
            check_path(Path(self.cache_dir).expanduser(), "--cache-dir")
        check_number("--budget-usd", self.budget_usd, minimum=0.0)
        check_number("--timeout", self.timeout_s, minimum=0.0, inclusive=False)
        check_number("batch_poll_s", self.batch_poll_s, minimum=0.0, inclusive=False)
        check_number("batch_wait_s", self.batch_wait_s, minimum=0.0)
        check_number("interrupt_grace_s", self.interrupt_grace_s, minimum=0.0)
        if not self.batch_submit and not self.batch:
            raise ConfigError("batch_submit=False (collect only) needs batch=True")
        if self.records not in ("auto", "files", "shards"):
            raise ConfigError(f"records is {self.records!r}; expected 'auto', 'files' or 'shards'")
        if self.cache_dir is not None and not str(self.cache_dir).strip():
            raise ConfigError("--cache-dir is empty; expected a folder")


def limits_key(provider: str, endpoint: str | None = None) -> str:
    """The key of a provider's limits at a server, in ``facetlab.run(limits={...})``.

    A provider's own server is the provider's name; another server is
    ``provider@URL`` (the URL as given, without a trailing ``/``), so two servers of
    one provider get limits of their own::

        >>> limits_key("openai"), limits_key("openai", "http://127.0.0.1:8000/v1/")
        ('openai', 'openai@http://127.0.0.1:8000/v1')
    """
    return f"{provider}@{endpoint.rstrip('/')}" if endpoint else provider
