"""Where files come from: pooch downloaders for the pinned URL and for a local mirror.

Both are pooch downloaders (``downloader(url, output_file, pooch)``): pooch
hands them a temporary file next to the destination and moves it into place
only after they return. Each checks the sha256 itself so that a mismatch is a
:class:`~facetlab.errors.HashMismatchError` naming the file, both hashes and
where it came from (pooch's own check would only say "does not match").

Example:
    >>> from pathlib import Path
    >>> check_mirror(Path("/tmp"))  # doctest: +SKIP
    Traceback (most recent call last):
    facetlab.errors.DataError: mirror /tmp: no instances/ here (expected ...)
"""

from __future__ import annotations

import shutil
import socket
import threading
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from facetlab.datasets.folder import ENV_MIRROR, sha256
from facetlab.datasets.pinned import COMMIT, DOI, REPOSITORY, registry
from facetlab.errors import DataError, HashMismatchError

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "HttpSource",
    "MirrorSource",
    "NetworkError",
    "check_mirror",
    "check_resolvable",
    "no_network_hint",
]


class NetworkError(DataError):
    """The server could not be reached at all (as opposed to a bad file)."""


def no_network_hint() -> str:
    """How to work without network: the sentence every download error ends with."""
    return (
        f"No network? Point {ENV_MIRROR} at a local copy of the FACET v3 data (a folder holding "
        f"instances/ and results/ from {REPOSITORY} at commit {COMMIT[:12]}, or the Zenodo archive "
        f"doi:{DOI}), e.g. `export {ENV_MIRROR}=/path/to/facet-data`, then run `facetlab data fetch`."
    )


def _near_miss(mirror: Path) -> Path | None:
    """A folder next to ``mirror`` that does hold ``instances/`` (a likely typo of the path)."""
    if mirror.name in ("instances", "results") and (mirror.parent / "instances").is_dir():
        return mirror.parent
    try:
        children = sorted(p for p in mirror.iterdir() if p.is_dir())
    except OSError:
        return None
    return next((child for child in children if (child / "instances").is_dir()), None)


def check_mirror(mirror: Path) -> None:
    """Refuse a mirror that is not a FACET data root, in one line instead of 448 failures."""
    if not mirror.is_dir():
        raise DataError(
            f"mirror {mirror} ({ENV_MIRROR} or --mirror): not a folder; expected the FACET v3 "
            "data root (holding instances/ and results/)"
        )
    if not (mirror / "instances").is_dir():
        near = _near_miss(mirror)
        hint = f"; did you mean {near}?" if near is not None else ""
        raise DataError(
            f"mirror {mirror} ({ENV_MIRROR} or --mirror): no instances/ here (expected the FACET "
            f"v3 data root holding instances/ and results/, from {REPOSITORY} at commit "
            f"{COMMIT[:12]}){hint}"
        )


def _check_hash(name: str, file: Path, source: str) -> None:
    expected = registry()[name]
    actual = sha256(file)
    if actual != expected:
        raise HashMismatchError(name, expected, actual, source)


class MirrorSource:
    """A pooch downloader that copies ``<mirror>/<name>`` instead of downloading it."""

    def __init__(self, mirror: Path, base_url: str) -> None:
        self.mirror = mirror
        self.base_url = base_url

    def __call__(self, url: str, output_file: str, pooch: Any) -> None:
        """Copy the file named by ``url`` from the mirror into ``output_file`` and check it."""
        name = url.removeprefix(self.base_url)
        source = self.mirror / name
        if not source.is_file():
            raise DataError(
                f"{name}: missing from mirror {self.mirror} (expected a file with sha256 "
                f"{registry()[name]}). The mirror is incomplete or not the FACET v3 data at "
                f"commit {COMMIT[:12]}."
            )
        shutil.copyfile(source, output_file)
        _check_hash(name, Path(output_file), str(source))


class HttpSource:
    """A pooch downloader for the pinned URL: ``pooch.HTTPDownloader`` with clear errors.

    ``timeout`` is requests' ``(connect, read)`` in seconds.
    """

    def __init__(self, base_url: str, timeout: tuple[float, float]) -> None:
        import pooch  # late: pooch (and requests) only when a download is needed

        self.base_url = base_url
        self._http: Callable[..., None] = pooch.HTTPDownloader(progressbar=False, timeout=timeout)

    def __call__(self, url: str, output_file: str, pooch: Any) -> None:
        """Download ``url`` into ``output_file`` and check its sha256."""
        import requests

        name = url.removeprefix(self.base_url)
        try:
            self._http(url, output_file, pooch)
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "?"
            raise DataError(
                f"download of {url} failed: HTTP {status}. The pinned file should exist at "
                f"this commit; {no_network_hint()}"
            ) from exc
        except requests.RequestException as exc:
            raise NetworkError(
                f"could not download {url}: {type(exc).__name__}: {exc}. {no_network_hint()}"
            ) from exc
        _check_hash(name, Path(output_file), url)


def check_resolvable(url: str, timeout: float) -> None:
    """Resolve the host of ``url`` within ``timeout`` seconds, else raise :class:`NetworkError`.

    ``getaddrinfo`` has no timeout of its own (requests' connect timeout does
    not cover it), and a dead resolver can stall it for minutes. Skipped behind
    a proxy, which resolves names itself.
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
        raise NetworkError(
            f"cannot resolve {host} within {timeout:g} s (DNS not answering). {no_network_hint()}"
        )
    if outcome[0] is not None:
        raise NetworkError(f"cannot resolve {host}: {outcome[0]}. {no_network_hint()}")
