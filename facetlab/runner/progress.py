"""Live progress of a sweep: done / failed / retrying / rate-limited, rate, ETA and spend.

:class:`Progress` holds the counters (the run's and each provider's); a
:class:`ProgressDisplay` renders them in one of these modes:

- ``rich`` (a terminal): a bar with rate, ETA and spend against the budget, and a
  row per provider (ok, failed, retrying, in flight), redrawn in place;
- ``notebook`` (Jupyter): the same as one line, updated in place through IPython's
  display handle;
- ``plain`` (CI logs, anything not a terminal): one line every ``PLAIN_INTERVAL_S``
  seconds (a long sweep leaves a line a minute-ish, not a flood), and one last line
  at the end if any was printed;
- ``none``: nothing (``--quiet``).

``auto`` picks ``notebook`` in a Jupyter kernel, ``rich`` when standard output is a
terminal and ``plain`` otherwise. Progress is normal output: it goes to standard output
(in a notebook, standard error is shown as a warning). Rendering is throttled so a fast
sweep is not slowed by its own display. A run that stopped (interrupt, budget) shows
how many trials are left, never an ETA of 0:00.
"""

import functools
import html
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO
from urllib.parse import parse_qs, urlsplit

Mode = Literal["auto", "rich", "notebook", "plain", "none"]

PLAIN_INTERVAL_S = 30.0
"""Seconds between two lines of the ``plain`` display (CI logs)."""


@dataclass
class RunStats:
    """What one run did."""

    total: int = 0
    ok: int = 0
    failed: int = 0
    cached: int = 0
    already_done: int = 0
    not_started: int = 0
    spend_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    """Provider calls made (attempts, failures included)."""
    retries: int = 0
    unpriced: int = 0
    """Paid calls whose cost is unknown (no price for the model, or no usage reported)."""
    rate_limited: int = 0
    """Calls answered with HTTP 429."""
    stopped_by_budget: bool = False
    interrupted: bool = False
    """Stopped by Ctrl-C, SIGTERM or a Jupyter interrupt."""
    cancelled_in_flight: int = 0
    """Calls cancelled after the interrupt's grace period (possibly billed, not recorded)."""
    storage_error: str | None = None
    """The first write that failed (full disk, read-only folder); the run stopped there."""
    elapsed_s: float = 0.0
    parse_status: dict[str, int] = field(default_factory=dict)
    emptied_by_reasoning: int = 0
    """Paid replies with no text because the token limit went to reasoning (recorded failed)."""
    failure_causes: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Why trials failed: cause -> (how many, one example trial id)."""

    def count_failure(self, cause: str, trial_id: str) -> None:
        """Count a failed trial under its cause (the first trial id is kept as the example)."""
        count, example = self.failure_causes.get(cause, (0, trial_id))
        self.failure_causes[cause] = (count + 1, example)


@dataclass
class ProviderCounts:
    """One provider's (at one server's) trials and calls right now."""

    ok: int = 0
    failed: int = 0
    retrying: int = 0
    in_flight: int = 0


@functools.lru_cache(maxsize=256)  # called for every finished trial, with a few model strings
def provider_label(model: str) -> str:
    """Who a model string's calls go to: the provider, and the server when it names one.

    >>> provider_label("anthropic/claude-sonnet-4-6")
    'anthropic'
    >>> provider_label("openai/qwen3?base_url=http://127.0.0.1:8000/v1")
    'openai@127.0.0.1:8000'
    """
    provider, _, rest = model.partition("/")
    options = parse_qs(rest.partition("?")[2])
    url = (options.get("base_url") or options.get("endpoint_url") or [""])[0]
    where = urlsplit(url if "://" in url else f"http://{url}").netloc if url else ""
    return f"{provider}@{where}" if where else provider


@dataclass
class Progress:
    """The live view of a run: its :class:`RunStats` and what is happening right now.

    Mutated only from the event loop's thread.
    """

    stats: RunStats = field(default_factory=RunStats)
    retrying: int = 0
    """Trials waiting to retry after a transient failure."""
    in_flight: int = 0
    started: float = field(default_factory=lambda: time.monotonic())
    budget_usd: float | None = None
    """The run's budget (shown beside the spend)."""
    by_provider: dict[str, ProviderCounts] = field(default_factory=dict)
    """Per provider (and server): see :func:`provider_label`."""

    def provider(self, model: str) -> ProviderCounts:
        """The counts of ``model``'s provider (created on first use)."""
        return self.by_provider.setdefault(provider_label(model), ProviderCounts())

    def trial_finished(self, model: str, ok: bool) -> None:
        """Count a recorded trial under its provider (the run's totals are in ``stats``)."""
        counts = self.provider(model)
        if ok:
            counts.ok += 1
        else:
            counts.failed += 1

    @property
    def finished(self) -> int:
        """Trials recorded this run."""
        return self.stats.ok + self.stats.failed

    def rate(self) -> float:
        """Trials recorded per second so far this run."""
        elapsed = time.monotonic() - self.started
        return self.finished / elapsed if elapsed > 0 else 0.0

    def eta_s(self) -> float | None:
        """Seconds left at the rate so far (None before the first trial)."""
        s = self.stats
        left = s.total - s.already_done - self.finished - s.not_started  # e.g. sent as a batch
        rate = self.rate()
        if left <= 0:
            return 0.0
        return left / rate if rate > 0 else None

    def eta(self) -> str:
        """``ETA 1:02`` while running; once stopped (interrupt, budget, a failed write),
        how many trials were not run, never an ETA of 0:00."""
        s = self.stats
        return (
            f"stopped, {s.total - s.already_done - self.finished} trial(s) not run"
            if s.interrupted or s.stopped_by_budget or s.storage_error is not None
            else f"ETA {format_eta(self.eta_s())}"
        )

    def spend(self) -> str:
        """The spend, against the budget when there is one."""
        spent = f"${self.stats.spend_usd:,.4f}"
        return spent if self.budget_usd is None else f"{spent} of ${self.budget_usd:,.2f}"

    def line(self) -> str:
        """Everything on one line (notebooks, CI logs)."""
        s = self.stats
        text = (
            f"{self.finished + s.already_done}/{s.total} trials · done {s.ok} (cached {s.cached}, "
            f"already recorded {s.already_done}) · failed {s.failed} · retrying {self.retrying} · "
            f"rate-limited {s.rate_limited} · in flight {self.in_flight} · "
            f"{self.spend()} · {self.rate():.1f}/s · {self.eta()}"
        )
        if len(self.by_provider) > 1:
            text += " · " + "; ".join(
                f"{label} {c.ok} ok {c.failed} failed {c.retrying} retrying"
                for label, c in sorted(self.by_provider.items())
            )
        return text

    def renderable(self) -> Any:
        """The ``rich`` view: a bar with rate, ETA and spend, then a row per provider."""
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        s = self.stats
        done = self.finished + s.already_done
        head = Table.grid(padding=(0, 1))
        head.add_row(
            ProgressBar(total=max(s.total, 1), completed=done, width=30),
            Text(f"{done}/{s.total} trials"),
            Text(f"{self.rate():.1f}/s", style="cyan"),
            Text(self.eta(), style="cyan"),
            Text(self.spend(), style="green" if not s.stopped_by_budget else "red"),
        )
        detail = Text(
            f"cached {s.cached} · already recorded {s.already_done} · rate-limited "
            f"{s.rate_limited} · in flight {self.in_flight}",
            style="dim",
        )
        table = Table(box=None, padding=(0, 2), show_edge=False)
        for name in ("provider", "ok", "failed", "retrying", "in flight"):
            table.add_column(name, justify="left" if name == "provider" else "right")
        for label, c in sorted(self.by_provider.items()):
            table.add_row(
                label,
                str(c.ok),
                Text(str(c.failed), style="red" if c.failed else ""),
                Text(str(c.retrying), style="yellow" if c.retrying else ""),
                str(c.in_flight),
            )
        return Group(head, detail, table) if self.by_provider else Group(head, detail)


def format_eta(seconds: float | None) -> str:
    """``h:mm:ss`` or ``m:ss``; ``?`` when unknown.

    >>> format_eta(3725), format_eta(59.4), format_eta(None)
    ('1:02:05', '0:59', '?')
    """
    if seconds is None:
        return "?"
    hours, rest = divmod(round(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class ProgressDisplay:
    """Renders a :class:`Progress` at most every ``interval`` seconds (``plain``: every
    ``PLAIN_INTERVAL_S``, unless ``interval`` is given)."""

    def __init__(
        self,
        progress: Progress,
        mode: Mode = "auto",
        interval: float | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.progress = progress
        if mode == "auto":
            mode = (
                "notebook"
                if _in_notebook()
                else ("rich" if (stream or sys.stdout).isatty() else "plain")
            )
        self.mode: Mode = mode
        self.interval = (
            interval if interval is not None else (PLAIN_INTERVAL_S if mode == "plain" else 0.2)
        )
        self._stream = stream
        self._last = 0.0
        self._lines = 0
        self._live: Any = None
        self._handle: Any = None

    def _out(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stdout  # looked up now

    def start(self) -> None:
        self._last = time.monotonic()  # plain: the first line comes one interval in
        if self.mode == "rich":
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self._out())
            self._live = Live(self.progress.renderable(), console=console, refresh_per_second=5)
            self._live.start()
        elif self.mode == "notebook":
            from IPython.display import display

            self._handle = display(self._html(), display_id=True)  # type: ignore[no-untyped-call]

    def _html(self) -> Any:
        from IPython.display import HTML

        return HTML(f"<pre>{html.escape(self.progress.line())}</pre>")  # type: ignore[no-untyped-call]

    def update(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        if self._live is not None:
            self._live.update(self.progress.renderable())
        elif self._handle is not None:
            self._handle.update(self._html())
        elif self.mode == "plain":
            print(self.progress.line(), file=self._out(), flush=True)
            self._lines += 1

    def stop(self) -> None:
        # plain: the last state, after the periodic ones (a short run prints none)
        if self.mode != "plain" or self._lines:
            self.update(force=True)
        if self._live is not None:
            self._live.stop()
            self._live = None
