"""Obtain the FACET v3 data: pinned commit, sha256 registry, cache dir, offline mirror.

The FACET v3 instances and raw results (448 files) are not shipped with
facetlab. On first use they are downloaded from the benchmark repository at
one pinned commit into a user cache directory, and every file is checked
against the sha256 registry shipped in the package (``facetlab/data/registry.txt``).

Settings (environment variables):

``FACETLAB_DATA_DIR``
    Where the data lives (default: the user cache dir, e.g.
    ``~/.cache/facetlab/facet-v3-aee05c4``). The folder holds ``instances/``
    and ``results/``.
``FACETLAB_DATA_MIRROR``
    A local folder with the same layout (e.g. an unpacked Zenodo archive or
    ``../shared/facet-data``). Files are copied from it instead of downloaded,
    and still hash-verified. Use this when there is no network.

Example:
    >>> from facetlab import datasets
    >>> report = datasets.fetch()  # doctest: +SKIP
    >>> print(report)  # doctest: +SKIP
    448 files verified (0 downloaded, 448 copied, 0 already present) in /home/me/.cache/facetlab/facet-v3-aee05c4
    >>> sorted(p.name for p in (datasets.data_dir() / "instances").glob("*-cf-00?.json"))  # doctest: +SKIP
    ['facet-neg-cf-001.json', 'facet-neg-cf-002.json', 'facet-neg-cf-003.json']
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import platformdirs

from facetlab.errors import DataError, HashMismatchError

if TYPE_CHECKING:  # httpx is imported only when a download is needed (keeps data_dir() cheap)
    import httpx

__all__ = [
    "BASE_URL",
    "CITATION",
    "COMMIT",
    "DOI",
    "LICENSE",
    "REGISTRY",
    "REPOSITORY",
    "DataInfo",
    "FetchReport",
    "cache_dir",
    "data_dir",
    "fetch",
    "info",
    "registry",
    "verify",
]

REPOSITORY = "Venkateshwar-PortoAI/facet-benchmark"
COMMIT = "aee05c452e317022593a00f3bc602265f6fd4a75"
VERSION = "v3.0"
DOI = "10.5281/zenodo.19557436"
LICENSE = "CC BY 4.0"
LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/"
SOURCE_URL = f"https://github.com/{REPOSITORY}/tree/{COMMIT}"
BASE_URL = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/"
"""Files are downloaded from ``BASE_URL + <path>``; the commit is part of the URL."""

CITATION = (
    "Jambula, V. R. (2026). FACET: Measuring Attribution Faithfulness in Multi-Factor "
    f"LLM Reasoning (benchmark data {VERSION}). Pranaalpha Labs. https://doi.org/{DOI}"
)
BIBTEX = f"""@misc{{jambula2026facet,
  author       = {{Jambula, Venkateshwar Reddy}},
  title        = {{{{FACET}}: Measuring Attribution Faithfulness in Multi-Factor {{LLM}} Reasoning}},
  year         = {{2026}},
  version      = {{{VERSION}}},
  publisher    = {{Zenodo}},
  doi          = {{{DOI}}},
  url          = {{https://github.com/{REPOSITORY}}},
  note         = {{Data (instances/, results/) licensed CC BY 4.0}}
}}"""

ENV_DATA_DIR = "FACETLAB_DATA_DIR"
ENV_MIRROR = "FACETLAB_DATA_MIRROR"
_STAMP = ".facetlab-verified.json"
_WORKERS = 8
_TIMEOUT_S = 30.0
_CONNECT_TIMEOUT_S = 10.0
# The first file doubles as a network probe: offline, fail within seconds, not minutes.
_PROBE_TIMEOUT_S = 5.0

ProgressCallback = Callable[[int, int, str], None]
"""Called as ``progress(done, total, path)`` after each file is handled."""


# ---------------------------------------------------------------------------
# The registry shipped in the package.


@cache
def _registry_text() -> str:
    return resources.files("facetlab").joinpath("data/registry.txt").read_text(encoding="utf-8")


@cache
def registry() -> Mapping[str, str]:
    """The pinned registry: relative path → sha256 (448 entries), read-only.

    Example:
        >>> registry()["instances/facet-neg-cf-002.json"][:8]  # doctest: +SKIP
        '…'
    """
    entries: dict[str, str] = {}
    for number, line in enumerate(_registry_text().splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2 or len(parts[0]) != 64:
            raise DataError(
                f"facetlab/data/registry.txt line {number}: expected '<sha256>  <path>', got {line!r}"
            )
        entries[parts[1].strip()] = parts[0].lower()
    return MappingProxyType(entries)


@cache
def _registry_digest() -> str:
    return hashlib.sha256(_registry_text().encode("utf-8")).hexdigest()


REGISTRY: Mapping[str, str] = registry()
"""Relative path → sha256 of every FACET v3 file facetlab uses."""


# ---------------------------------------------------------------------------
# Locations.


def cache_dir() -> Path:
    """Where the data is (or will be) stored; does not fetch anything.

    Example:
        >>> import os
        >>> os.environ["FACETLAB_DATA_DIR"] = "/tmp/facet"
        >>> cache_dir()
        PosixPath('/tmp/facet')
        >>> del os.environ["FACETLAB_DATA_DIR"]
    """
    configured = os.environ.get(ENV_DATA_DIR)
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_cache_dir("facetlab")) / f"facet-v3-{COMMIT[:7]}"


def _mirror() -> Path | None:
    configured = os.environ.get(ENV_MIRROR)
    return Path(configured).expanduser() if configured else None


def _is_verified(path: Path, expected: str) -> bool:
    return path.is_file() and _sha256(path) == expected


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------------------
# Verification stamp: lets a new process skip re-hashing unchanged files.


def _file_states(root: Path) -> dict[str, list[int]] | None:
    states: dict[str, list[int]] = {}
    for name in registry():
        try:
            st = (root / name).stat()
        except OSError:
            return None
        states[name] = [st.st_size, st.st_mtime_ns]
    return states


def _stamp_is_valid(root: Path) -> bool:
    try:
        stamp = json.loads((root / _STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(stamp, dict) or stamp.get("registry") != _registry_digest():
        return False
    # A stamp is only as good as the files it describes: any size or mtime change voids it.
    return stamp.get("files") == _file_states(root)


def _write_stamp(root: Path) -> None:
    states = _file_states(root)
    if states is None:
        return
    payload = {"registry": _registry_digest(), "commit": COMMIT, "files": states}
    # A read-only data dir (e.g. a mirror used in place) just re-verifies next time.
    with contextlib.suppress(OSError):
        _atomic_write_bytes(root / _STAMP, json.dumps(payload).encode("utf-8"))


def _atomic_write_bytes(dest: Path, data: bytes) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---------------------------------------------------------------------------
# Obtaining files.


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

    def __str__(self) -> str:
        return (
            f"{self.verified} files verified ({self.downloaded} downloaded, {self.copied} copied, "
            f"{self.present} already present) in {self.root}"
        )


_Action = Literal["present", "copied", "downloaded"]


def _no_network_hint() -> str:
    return (
        f"No network? Point {ENV_MIRROR} at a local copy of the FACET v3 data (a folder holding "
        f"instances/ and results/ from {REPOSITORY} at commit {COMMIT[:12]}, or the Zenodo archive "
        f"doi:{DOI}), e.g. `export {ENV_MIRROR}=/path/to/facet-data`, then run `facetlab data fetch`."
    )


def _client() -> httpx.Client:
    import httpx

    timeout = httpx.Timeout(_TIMEOUT_S, connect=_CONNECT_TIMEOUT_S)
    return httpx.Client(timeout=timeout, follow_redirects=True)


class _NetworkError(DataError):
    """The server could not be reached at all (as opposed to a bad file)."""


def _check_resolvable(url: str, timeout: float) -> None:
    """Resolve the host of ``url`` within ``timeout`` seconds, else raise :class:`_NetworkError`.

    ``getaddrinfo`` has no timeout of its own (httpx's connect timeout does not
    cover it), and a dead resolver can stall it for long. Skipped behind a
    proxy, which resolves names itself.
    """
    host = urlsplit(url).hostname
    if not host or urllib.request.getproxies():
        return
    outcome: list[BaseException | None] = []

    def resolve() -> None:
        try:
            socket.getaddrinfo(host, None)
            outcome.append(None)
        except OSError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=resolve, daemon=True)  # abandoned if DNS hangs
    worker.start()
    worker.join(timeout)
    if not outcome:
        raise _NetworkError(
            f"cannot resolve {host} within {timeout:g} s (DNS not answering). {_no_network_hint()}"
        )
    if outcome[0] is not None:
        raise _NetworkError(f"cannot resolve {host}: {outcome[0]}. {_no_network_hint()}")


def _download(url: str, dest: Path, client: httpx.Client, timeout: float | None = None) -> None:
    """Stream ``url`` into ``dest`` atomically. Raises :class:`DataError` on any failure.

    ``timeout`` (seconds, connect and read) overrides the client's for this request.
    """
    import httpx

    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    request_timeout = httpx.Timeout(timeout) if timeout is not None else httpx.USE_CLIENT_DEFAULT
    try:
        with (
            os.fdopen(fd, "wb") as handle,
            client.stream("GET", url, timeout=request_timeout) as response,
        ):
            if response.status_code != 200:
                raise DataError(
                    f"download of {url} failed: HTTP {response.status_code}. "
                    "The pinned file should exist at this commit; " + _no_network_hint()
                )
            for chunk in response.iter_bytes():
                handle.write(chunk)
        os.replace(tmp, dest)
    except httpx.TransportError as exc:
        raise _NetworkError(
            f"could not download {url}: {type(exc).__name__}: {exc}. {_no_network_hint()}"
        ) from exc
    except httpx.HTTPError as exc:
        raise DataError(f"could not download {url}: {exc}. {_no_network_hint()}") from exc
    finally:
        Path(tmp).unlink(missing_ok=True)


def _obtain(
    name: str,
    expected: str,
    root: Path,
    mirror: Path | None,
    base_url: str,
    client: httpx.Client | None,
    timeout: float | None = None,
) -> _Action:
    dest = root / name
    if _is_verified(dest, expected):
        return "present"
    if mirror is not None:
        source = mirror / name
        if not source.is_file():
            raise DataError(
                f"{name}: missing from mirror {mirror} (expected a file with sha256 {expected}). "
                f"The mirror is incomplete or not the FACET v3 data at commit {COMMIT[:12]}."
            )
        actual = _sha256(source)
        if actual != expected:
            raise HashMismatchError(name, expected, actual, str(source))
        if source.resolve() != dest.resolve():
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", dir=dest.parent)
            os.close(fd)
            try:
                shutil.copyfile(source, tmp)
                os.replace(tmp, dest)
            finally:
                Path(tmp).unlink(missing_ok=True)
        return "copied"
    assert client is not None
    url = base_url + name
    _download(url, dest, client, timeout)
    actual = _sha256(dest)
    if actual != expected:
        dest.unlink(missing_ok=True)  # never leave an unverified file where a verified one belongs
        raise HashMismatchError(name, expected, actual, url)
    return "downloaded"


def fetch(
    *,
    progress: ProgressCallback | None = None,
    root: Path | None = None,
    mirror: Path | None = None,
    base_url: str | None = None,
) -> FetchReport:
    """Obtain every registry file into the data dir and verify its sha256.

    Files already present with the right hash are kept; others come from the
    mirror (``FACETLAB_DATA_MIRROR`` or ``mirror=``) or are downloaded from
    ``BASE_URL``. Every file is hashed, so this is also the full check.

    Raises:
        HashMismatchError: a source file differs from the registry (names the
            file and both hashes).
        DataError: a file is missing from the mirror, a download failed (with
            the hint to use a mirror), or several files failed (all listed).

    Example:
        >>> report = fetch(mirror=Path("../shared/facet-data"))  # doctest: +SKIP
        >>> report.verified, report.copied  # doctest: +SKIP
        (448, 448)
    """
    started = time.perf_counter()
    root = root if root is not None else cache_dir()
    mirror = mirror if mirror is not None else _mirror()
    if mirror is not None and not mirror.is_dir():
        raise DataError(
            f"{ENV_MIRROR}={mirror}: not a folder; expected the FACET v3 data root "
            "(holding instances/ and results/)"
        )
    base = base_url if base_url is not None else BASE_URL
    entries = sorted(registry().items())
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(
            f"cannot create the data dir {root} ({exc.strerror}); set {ENV_DATA_DIR} to a writable folder"
        ) from exc
    with contextlib.suppress(OSError):
        (root / _STAMP).unlink(missing_ok=True)  # the stamp is rewritten only after success

    counts: dict[_Action, int] = {"present": 0, "copied": 0, "downloaded": 0}
    failures: list[DataError] = []
    done = 0

    def tick(name: str) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(entries), name)

    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        # Keep what is already verified; hashing is cheap (about 7 MB in all).
        present = list(pool.map(lambda e: _is_verified(root / e[0], e[1]), entries))
    needed = [e for e, ok in zip(entries, present, strict=True) if not ok]
    for (name, _), ok in zip(entries, present, strict=True):
        if ok:
            counts["present"] += 1
            tick(name)

    client = _client() if mirror is None and needed else None
    try:
        if client is not None and needed:
            # One file first, with short timeouts: without network this fails within
            # seconds (with the hint to use a mirror) instead of 448 times.
            _check_resolvable(base, _PROBE_TIMEOUT_S)
            name, sha = needed.pop(0)
            try:
                counts[_obtain(name, sha, root, mirror, base, client, _PROBE_TIMEOUT_S)] += 1
            except _NetworkError:
                raise
            except DataError as exc:
                failures.append(exc)
            tick(name)
        with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
            futures = [
                (name, pool.submit(_obtain, name, sha, root, mirror, base, client))
                for name, sha in needed
            ]
            for name, future in futures:
                try:
                    counts[future.result()] += 1
                except DataError as exc:
                    failures.append(exc)
                tick(name)
    finally:
        if client is not None:
            client.close()

    if failures:
        if len(failures) == 1:
            raise failures[0]
        listed = "\n  ".join(str(f) for f in failures[:20])
        more = f"\n  ... and {len(failures) - 20} more" if len(failures) > 20 else ""
        raise DataError(
            f"{len(failures)} of {len(entries)} FACET v3 files failed:\n  {listed}{more}"
        )

    _write_stamp(root)
    _VERIFIED.add(root.resolve())
    return FetchReport(
        root=root,
        total=len(entries),
        verified=len(entries),
        downloaded=counts["downloaded"],
        copied=counts["copied"],
        present=counts["present"],
        source=f"mirror {mirror}" if mirror is not None else f"network {base}",
        seconds=time.perf_counter() - started,
    )


def verify(root: Path | None = None) -> list[str]:
    """Hash every registry file under ``root``; return the paths that are missing or differ.

    Example:
        >>> verify(Path("/tmp/empty"))[:1]  # doctest: +SKIP
        ['instances/compliance/facet-neg-0002-c3.json']
    """
    root = root if root is not None else cache_dir()
    bad = []
    for name, expected in sorted(registry().items()):
        path = root / name
        if not path.is_file() or _sha256(path) != expected:
            bad.append(name)
    return bad


_VERIFIED: set[Path] = set()
"""Data roots verified in this process; later calls of data_dir() return at once."""


def data_dir() -> Path:
    """The FACET v3 data root (holds ``instances/`` and ``results/``), fetched and verified.

    The first call in a process checks the verification stamp (file sizes and
    mtimes against the last full hash check) and fetches or re-verifies only
    when something changed; later calls return immediately.

    Example:
        >>> (data_dir() / "instances" / "facet-neg-0002.json").is_file()  # doctest: +SKIP
        True
    """
    root = cache_dir()
    key = root.resolve()
    if key in _VERIFIED:
        return root
    if not _stamp_is_valid(root):
        fetch(root=root)
    _VERIFIED.add(key)
    return root


# ---------------------------------------------------------------------------
# Attribution and state.


@dataclass(frozen=True)
class DataInfo:
    """Where the FACET v3 data comes from, how to cite it, and where it is now."""

    name: str
    repository: str
    commit: str
    doi: str
    license: str
    license_url: str
    citation: str
    bibtex: str
    location: Path
    mirror: Path | None
    state: str
    files_expected: int
    files_present: int
    notes: tuple[str, ...] = field(default_factory=tuple)


def info() -> DataInfo:
    """Source, attribution and local state of the FACET v3 data (never downloads).

    Example:
        >>> info().license, info().doi
        ('CC BY 4.0', '10.5281/zenodo.19557436')
    """
    root = cache_dir()
    expected = len(registry())
    present = sum(1 for name in registry() if (root / name).is_file())
    if present == expected and _stamp_is_valid(root):
        state = "verified"
    elif present == expected:
        state = "present, not verified since last change (run `facetlab data fetch`)"
    elif present == 0:
        state = "not fetched (run `facetlab data fetch`)"
    else:
        state = f"incomplete: {present} of {expected} files (run `facetlab data fetch`)"
    return DataInfo(
        name=f"FACET {VERSION}",
        repository=f"https://github.com/{REPOSITORY}",
        commit=COMMIT,
        doi=DOI,
        license=LICENSE,
        license_url=LICENSE_URL,
        citation=CITATION,
        bibtex=BIBTEX,
        location=root,
        mirror=_mirror(),
        state=state,
        files_expected=expected,
        files_present=present,
        notes=(
            "The data (instances/, results/) is by Venkateshwar Reddy Jambula, Pranaalpha Labs, "
            f"licensed {LICENSE}; facetlab downloads it unchanged and does not redistribute it.",
        ),
    )
