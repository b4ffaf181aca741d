"""An Inspect log file checked against size limits before Inspect's reader opens it.

Inspect's reader loads a ``.json`` log whole and inflates every member of an ``.eval``
zip, so a hostile or mistaken file can take gigabytes: a 1 GB ``.json`` log, or an
``.eval`` "zip bomb" of a few MB that inflates to GBs. :func:`check_log_file` refuses
such a file with one line, reading no more than the limits allow: a ``.json`` log by
its size on disk, an ``.eval`` by its member count and each member inflated in
bounded chunks (the sizes a zip declares are not trusted).

>>> LogLimits().max_json_bytes // 2**20
128
"""

import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from facetlab.errors import RecordError

_MIB = 2**20
_CHUNK = _MIB


@dataclass(frozen=True)
class LogLimits:
    """What one Inspect log may hold before it is read (bytes unless said otherwise)."""

    max_json_bytes: int = 128 * _MIB
    """A ``.json`` log is parsed whole (about four times its size in memory)."""
    max_eval_bytes: int = 128 * _MIB
    """An ``.eval`` file's size on disk."""
    max_inflated_bytes: int = 256 * _MIB
    """All members of an ``.eval`` together, inflated."""
    max_member_bytes: int = 128 * _MIB
    """One member of an ``.eval`` (a sample with its events), inflated."""
    max_members: int = 100_000
    """Members of an ``.eval`` (one per sample and epoch, plus a few)."""


def check_log_file(path: Path, limits: LogLimits) -> None:
    """Refuse (``RecordError``, one line naming the file) a log over ``limits``."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RecordError(f"{path}: cannot read the log ({exc.strerror or exc})") from exc
    if path.suffix == ".eval":
        _check_limit(path, "file size", size, limits.max_eval_bytes)
        _check_zip(path, limits)
    else:
        _check_limit(path, "file size", size, limits.max_json_bytes)


def _check_limit(path: Path, what: str, value: int, limit: int) -> None:
    if value > limit:
        raise RecordError(
            f"{path}: {what} {_mb(value)} is over the limit of {_mb(limit)}; "
            "refused without reading it (raise the limit with --max-log-mb if the log is trusted)"
        )


def _mb(n: int) -> str:
    return f"{n / _MIB:.1f} MB"


def _check_zip(path: Path, limits: LogLimits) -> None:
    """Inflate every member in bounded chunks: counts and sizes within ``limits``."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            _check_limit(path, "member count", len(members), limits.max_members)
            _check_limit(
                path,
                "inflated size (as declared)",
                sum(m.file_size for m in members),
                limits.max_inflated_bytes,
            )
            total = 0
            for member in members:
                _check_limit(
                    path,
                    f"member {member.filename!r} size",
                    member.file_size,
                    limits.max_member_bytes,
                )
                total += _inflated_size(archive, member, limits, path)
                _check_limit(path, "inflated size", total, limits.max_inflated_bytes)
    except RecordError:
        raise
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        zlib.error,
        EOFError,
        OSError,
        NotImplementedError,
        ValueError,
    ) as exc:
        raise RecordError(
            f"{path}: not a readable Inspect log (.eval: {type(exc).__name__}: {exc})"
        ) from exc


def _inflated_size(
    archive: zipfile.ZipFile, member: zipfile.ZipInfo, limits: LogLimits, path: Path
) -> int:
    """Bytes the member inflates to, reading at most ``max_member_bytes`` + one chunk."""
    size = 0
    with archive.open(member) as stream:
        while chunk := stream.read(_CHUNK):
            size += len(chunk)
            _check_limit(path, f"member {member.filename!r} size", size, limits.max_member_bytes)
    return size
