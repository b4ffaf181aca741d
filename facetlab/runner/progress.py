"""Live progress of a sweep: done / failed / retrying / rate-limited, and spend.

:class:`Progress` holds the counters; a display renders them: a ``rich`` live
line in a terminal, an updating HTML line in a notebook (through IPython's
display handle), or nothing. Rendering is throttled so a fast sweep is not slowed
by its own progress bar.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["auto", "rich", "notebook", "plain", "none"]


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
class Progress:
    """The live view of a run: its :class:`RunStats` and what is happening right now.

    Mutated only from the event loop's thread.
    """

    stats: RunStats = field(default_factory=RunStats)
    retrying: int = 0
    """Trials waiting to retry after a transient failure."""
    in_flight: int = 0
    started: float = field(default_factory=time.monotonic)

    def line(self) -> str:
        s = self.stats
        elapsed = time.monotonic() - self.started
        finished = s.ok + s.failed
        rate = finished / elapsed if elapsed > 0 else 0.0
        return (
            f"{finished + s.already_done}/{s.total} trials · done {s.ok} (cached {s.cached}, "
            f"already recorded {s.already_done}) · failed {s.failed} · retrying {self.retrying} · "
            f"rate-limited {s.rate_limited} · in flight {self.in_flight} · "
            f"${s.spend_usd:.4f} · {rate:.1f}/s"
        )


def _in_notebook() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class ProgressDisplay:
    """Renders a :class:`Progress` at most every ``interval`` seconds."""

    def __init__(self, progress: Progress, mode: Mode = "auto", interval: float = 0.2) -> None:
        self.progress = progress
        self.interval = interval
        self._last = 0.0
        if mode == "auto":
            if _in_notebook():
                mode = "notebook"
            elif sys.stderr.isatty():
                mode = "rich"
            else:
                mode = "none"
        self.mode: Mode = mode
        self._live: Any = None
        self._handle: Any = None

    def start(self) -> None:
        if self.mode == "rich":
            from rich.console import Console
            from rich.live import Live

            self._live = Live(
                self.progress.line(), console=Console(stderr=True), refresh_per_second=5
            )
            self._live.start()
        elif self.mode == "notebook":
            from IPython.display import display

            self._handle = display(self._html(), display_id=True)  # type: ignore[no-untyped-call]

    def _html(self) -> Any:
        from IPython.display import HTML

        return HTML(f"<pre>{self.progress.line()}</pre>")  # type: ignore[no-untyped-call]

    def update(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.interval:
            return
        self._last = now
        if self._live is not None:
            self._live.update(self.progress.line())
        elif self._handle is not None:
            self._handle.update(self._html())
        elif self.mode == "plain":
            print(self.progress.line(), file=sys.stderr, flush=True)

    def stop(self) -> None:
        self.update(force=True)
        if self._live is not None:
            self._live.stop()
            self._live = None
