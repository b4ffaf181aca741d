"""The one exception hierarchy of facetlab.

Every error facetlab raises on purpose derives from :class:`FacetlabError`, so a
caller can catch them all with one ``except``; the subclasses say which layer
failed (data, instances, backends, runner) and carry what is needed to fix it.
"""


class FacetlabError(Exception):
    """Base class of every error facetlab raises on purpose."""


class DataError(FacetlabError):
    """The FACET data could not be obtained or failed verification."""


class HashMismatchError(DataError):
    """A data file's sha256 differs from the pinned registry."""

    def __init__(self, name: str, expected: str, actual: str, path: str) -> None:
        self.name = name
        self.expected = expected
        self.actual = actual
        self.path = path
        super().__init__(
            f"{name}: sha256 mismatch (expected {expected}, got {actual}) at {path}. "
            "The file was altered or truncated: restore it from the pinned release "
            "(a cached copy is fetched again; a mirror must be repaired by hand)."
        )


class InstanceError(FacetlabError):
    """An instance, perturbation or compliance file is invalid."""


class RecordError(FacetlabError):
    """A result or record file cannot be read."""


class BackendError(FacetlabError):
    """A model provider call failed.

    ``transient`` errors (429, 408, 5xx, timeouts, dropped connections) may be
    retried; the runner honours ``retry_after`` (seconds) when the provider sent it.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        transient: bool = False,
        retry_after: float | None = None,
    ) -> None:
        self.provider = provider
        self.status = status
        self.transient = transient
        self.retry_after = retry_after
        super().__init__(message)


class TransientBackendError(BackendError):
    """A provider failure worth retrying (rate limit, timeout, 5xx, dropped connection)."""

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            message, provider=provider, status=status, transient=True, retry_after=retry_after
        )


class PermanentBackendError(BackendError):
    """A provider failure that retrying will not fix (bad request, auth, unknown model)."""

    def __init__(self, message: str, *, provider: str = "", status: int | None = None) -> None:
        super().__init__(message, provider=provider, status=status, transient=False)


class ConfigError(FacetlabError):
    """A setting, model string, sweep or CLI option is invalid."""


class BudgetExceededError(FacetlabError):
    """A sweep would exceed, or has reached, its ``--budget-usd``."""


class StorageError(FacetlabError):
    """A sweep could not write to disk (full disk, read-only folder, quota).

    Raised after the run stopped cleanly: every answer already paid for is in the
    cache, so re-running the command once the disk has room pays nothing twice.
    """


class SweepInterrupted(FacetlabError):
    """A sweep was stopped by Ctrl-C, SIGTERM or a Jupyter interrupt.

    Raised after the answers already paid for were recorded and the lock released;
    re-running the command resumes.
    """


class NotebookError(FacetlabError):
    """A notebook run headless (``facetlab report``) failed; the message names the error."""


class RecordWarning(UserWarning):
    """A record or cache file could not be read (kept as an ``unreadable`` row, or skipped
    on resume), or records were de-duplicated or carry no input fingerprints."""
