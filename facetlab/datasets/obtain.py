"""Obtaining the data: :func:`fetch` every registry file with pooch, :func:`data_dir` for loaders.

Example:
    >>> from facetlab.datasets import fetch
    >>> print(fetch(mirror=Path("../shared/facet-data")))  # doctest: +SKIP
    448 files verified (0 downloaded, 448 copied, 0 already present) in /home/me/.cache/...
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from facetlab.datasets import folder, sources
from facetlab.datasets.pinned import BASE_URL, registry
from facetlab.errors import DataError

__all__ = ["FetchReport", "ProgressCallback", "data_dir", "fetch"]

ProgressCallback = Callable[[int, int, str], None]
"""Called as ``progress(done, total, path)`` after each file is handled."""

_WORKERS = 8
_TIMEOUT_S = (10.0, 30.0)
# The first download doubles as a network probe: offline, fail within ~5 s, not 448 times.
_PROBE_TIMEOUT_S = 2.5


@dataclass(frozen=True)
class FetchReport:
    """What :func:`fetch` did. ``verified`` counts files whose sha256 matched."""

    root: Path
    total: int
    verified: int
    downloaded: int
    copied: int
    present: int
    source: str
    seconds: float
    unregistered: tuple[str, ...] = ()
    cleaned: tuple[str, ...] = ()

    def __str__(self) -> str:
        return (
            f"{self.verified} files verified ({self.downloaded} downloaded, {self.copied} copied, "
            f"{self.present} already present) in {self.root}"
        )


@contextlib.contextmanager
def _quiet_pooch() -> Iterator[None]:
    """pooch logs one INFO line per file; 448 of them say nothing the report does not."""
    import pooch

    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _store(root: Path, base_url: str) -> Any:
    import pooch

    return pooch.create(
        path=root,
        base_url=base_url,
        registry={name: f"sha256:{sha}" for name, sha in registry().items()},
        retry_if_failed=0,  # failures are reported, with the mirror hint, not retried blindly
    )


def _get(store: Any, name: str, downloader: Any) -> None:
    try:
        store.fetch(name, downloader=downloader)
    except OSError as exc:  # e.g. a full disk while moving the file into place
        raise DataError(f"{name}: cannot write into {store.abspath} ({exc})") from exc


def _mkdir(root: Path) -> None:
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(
            f"cannot create the data dir {root} ({exc.strerror}); set "
            f"{folder.ENV_DATA_DIR} to a writable folder"
        ) from exc


def _raise_failures(failures: list[DataError], total: int) -> None:
    if len(failures) == 1:
        raise failures[0]
    if failures:
        listed = "\n  ".join(str(f) for f in failures[:20])
        more = f"\n  ... and {len(failures) - 20} more" if len(failures) > 20 else ""
        raise DataError(f"{len(failures)} of {total} FACET v3 files failed:\n  {listed}{more}")


def fetch(
    *,
    progress: ProgressCallback | None = None,
    root: Path | None = None,
    mirror: Path | None = None,
    base_url: str | None = None,
) -> FetchReport:
    """Obtain every registry file into the data dir and verify its sha256 (pooch does the work).

    Files already present with the right hash are kept; others come from the
    mirror (``FACETLAB_DATA_MIRROR`` or ``mirror=``) or are downloaded from
    ``BASE_URL``. Every file is hashed, so this is also the full check.
    Partial files of interrupted fetches are removed.

    Raises:
        HashMismatchError: a source file differs from the registry (names the
            file and both hashes).
        DataError: the mirror is not a FACET data root, a file is missing from
            it, a download failed (with the hint to use a mirror), or several
            files failed (all listed).

    Example:
        >>> report = fetch(mirror=Path("../shared/facet-data"))  # doctest: +SKIP
        >>> report.verified, report.copied  # doctest: +SKIP
        (448, 448)
    """
    started = time.perf_counter()
    root = root if root is not None else folder.cache_dir()
    mirror = mirror if mirror is not None else folder.mirror_from_env()
    if mirror is not None:
        sources.check_mirror(mirror)
    base = base_url if base_url is not None else BASE_URL
    entries = sorted(registry().items())
    _mkdir(root)
    cleaned = folder.clean_partial(root)

    done = itertools.count(1)

    def tick(name: str) -> None:
        if progress is not None:
            progress(next(done), len(entries), name)

    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        # Keep what is already verified; hashing is cheap (about 7 MB in all).
        present = list(
            pool.map(
                lambda e: (root / e[0]).is_file() and folder.sha256(root / e[0]) == e[1], entries
            )
        )
    needed = [name for (name, _), ok in zip(entries, present, strict=True) if not ok]
    for (name, _), ok in zip(entries, present, strict=True):
        if ok:
            tick(name)

    failures: list[DataError] = []
    if needed:  # pooch is imported only when something is missing or altered
        _obtain(needed, root, mirror, base, failures, tick)
    _raise_failures(failures, len(entries))
    fetched = len(entries) - sum(present)
    report = FetchReport(
        root=root,
        total=len(entries),
        verified=len(entries),
        downloaded=fetched if mirror is None else 0,
        copied=fetched if mirror is not None else 0,
        present=sum(present),
        source=f"mirror {mirror}" if mirror is not None else f"network {base}",
        seconds=time.perf_counter() - started,
        unregistered=folder.unregistered(root),
        cleaned=cleaned,
    )
    if not report.unregistered:
        _VERIFIED.add(root.resolve())
    return report


def _obtain(
    needed: list[str],
    root: Path,
    mirror: Path | None,
    base: str,
    failures: list[DataError],
    tick: Callable[[str], None],
) -> None:
    """Have pooch fetch ``needed`` from the mirror or the URL; bad files go to ``failures``."""
    for parent in sorted({(root / name).parent for name in needed}):
        _mkdir(parent)  # pooch creates folders without exist_ok: racy across threads
    store = _store(root, base)
    with _quiet_pooch():
        downloader: Any
        if mirror is not None:
            downloader = sources.MirrorSource(mirror, base)
        else:
            # One file first, with short limits: without network this fails within
            # seconds (with the hint to use a mirror) instead of 448 times.
            sources.check_resolvable(base, _PROBE_TIMEOUT_S)
            first = needed.pop(0)
            probe = sources.HttpSource(base, (_PROBE_TIMEOUT_S, 2 * _PROBE_TIMEOUT_S))
            try:
                _get(store, first, probe)
            except sources.NetworkError:
                raise
            except DataError as exc:
                failures.append(exc)
            tick(first)
            downloader = sources.HttpSource(base, _TIMEOUT_S)
        with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
            futures = [(name, pool.submit(_get, store, name, downloader)) for name in needed]
            for name, future in futures:
                try:
                    future.result()
                except DataError as exc:
                    failures.append(exc)
                tick(name)


_VERIFIED: set[Path] = set()
"""Data roots verified in this process; later calls of data_dir() return at once."""


def data_dir() -> Path:
    """The FACET v3 data root (holds ``instances/`` and ``results/``), verified.

    Which folder is :func:`facetlab.datasets.data_source` (``FACETLAB_DATA_MIRROR``, read
    in place, else ``FACETLAB_DATA_DIR``, else the user cache) is hashed on the first call
    in a process (about 60 ms; later calls return at once). A mirror that is not exactly
    the pinned data is refused, naming every file; facetlab's own data dir is fetched into
    and repaired. A folder holding files that are not in the registry is refused, so no
    loader ever reads one.

    Example:
        >>> (data_dir() / "instances" / "facet-neg-0002.json").is_file()  # doctest: +SKIP
        True
    """
    source = folder.data_source()
    root = source.root
    key = root.resolve()
    if key in _VERIFIED:
        return root
    if not source.owned:
        sources.check_mirror(root)
    checked = folder.verify(source)  # every file hashed, once per process
    if source.owned and (checked.missing or checked.altered):
        fetch(root=root)  # facetlab's own data dir: fetched on first use, repaired
    elif checked.missing or checked.altered:
        found = checked.problems()
        raise DataError(
            f"{source}: not the pinned FACET v3 data: {'; '.join(found[:10])}"
            + (f" and {len(found) - 10} more" if len(found) > 10 else "")
            + ". A mirror is read as it is and never repaired: restore it, or unset "
            f"{folder.ENV_MIRROR} to read facetlab's data dir; `facetlab data verify` lists "
            "every file"
        )
    if extra := folder.unregistered(root):
        shown = ", ".join(extra[:10]) + (f" and {len(extra) - 10} more" if len(extra) > 10 else "")
        raise DataError(
            f"{root}: {len(extra)} file(s) not in the FACET v3 registry: {shown}. facetlab never "
            "reads unregistered files from its data folder; move them out (keep your own instances "
            "in a folder of their own and pass it with --instances), then retry. "
            "`facetlab data verify` lists them."
        )
    _VERIFIED.add(key)
    return root
