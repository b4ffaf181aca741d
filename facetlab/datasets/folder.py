"""The local data folder: which one is read, what is in it, and whether it matches the registry.

:func:`data_source` is the one rule for which folder holds the FACET data a loader reads
(an explicit ``data_dir``, else ``FACETLAB_DATA_MIRROR`` read in place, else
``FACETLAB_DATA_DIR``, else the user cache). A data folder holds the 448 registered
files under ``instances/`` and ``results/``; :func:`verify` hashes every one (about
60 ms: every process that reads the data does so once, nothing is trusted from an
earlier check). Anything else under ``instances/`` or ``results/`` is *unregistered*:
reported, never read by facetlab's loaders. Left-overs of interrupted fetches
(*partial* files) are removed.

Example:
    >>> from pathlib import Path
    >>> unregistered(Path("/nonexistent"))
    ()
"""

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from facetlab.datasets.pinned import COMMIT, registry

__all__ = [
    "ENV_DATA_DIR",
    "ENV_MIRROR",
    "DataSource",
    "VerifyReport",
    "cache_dir",
    "clean_partial",
    "compare",
    "data_source",
    "mirror_from_env",
    "partial_files",
    "sha256",
    "unregistered",
    "verify",
]

ENV_DATA_DIR = "FACETLAB_DATA_DIR"
ENV_MIRROR = "FACETLAB_DATA_MIRROR"
_TREES = ("instances", "results")
# pooch downloads into tempfile's "tmpXXXXXXXX"; older facetlab used ".<name>.<rand>.part".
_PARTIAL = re.compile(r"^(tmp[a-z0-9_]{8}|\..+\.part|\.{1,2}facetlab-verified\.json\..+\.tmp)$")
# A younger partial file may belong to a fetch still running in another process.
PARTIAL_AGE_S = 60.0


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
    return (
        Path(configured).expanduser()
        if configured
        else Path(platformdirs.user_cache_dir("facetlab")) / f"facet-v3-{COMMIT[:7]}"
    )


def mirror_from_env() -> Path | None:
    """``FACETLAB_DATA_MIRROR`` as a path, or None when unset."""
    configured = os.environ.get(ENV_MIRROR)
    return Path(configured).expanduser() if configured else None


@dataclass(frozen=True)
class DataSource:
    """The folder the FACET data is read from, and which setting chose it."""

    root: Path
    origin: str
    """``"data_dir"`` (given), ``FACETLAB_DATA_MIRROR``, ``FACETLAB_DATA_DIR`` or ``"the user cache"``."""

    @property
    def owned(self) -> bool:
        """facetlab's own data dir: fetched into and repaired (a mirror or a given folder is
        read in place and never written)."""
        return self.origin in (ENV_DATA_DIR, "the user cache")

    def __str__(self) -> str:
        return f"{self.root} ({self.origin}{'' if self.owned else ', read in place'})"


def data_source(data_dir: Path | str | None = None) -> DataSource:
    """Which folder holds the FACET data: the first of ``data_dir`` (an argument, ``-p
    data_dir=``), ``FACETLAB_DATA_MIRROR``, ``FACETLAB_DATA_DIR``, the user cache.

    Example:
        >>> import os
        >>> os.environ["FACETLAB_DATA_MIRROR"] = "/srv/facet-data"
        >>> str(data_source())
        '/srv/facet-data (FACETLAB_DATA_MIRROR, read in place)'
        >>> str(data_source("/tmp/copy"))
        '/tmp/copy (data_dir, read in place)'
        >>> del os.environ["FACETLAB_DATA_MIRROR"]
    """
    mirror = mirror_from_env()
    if data_dir is not None and Path(data_dir).resolve() != cache_dir().resolve():
        return DataSource(Path(data_dir), "data_dir")
    if data_dir is None and mirror is not None:
        return DataSource(mirror, ENV_MIRROR)
    return DataSource(
        cache_dir(), ENV_DATA_DIR if os.environ.get(ENV_DATA_DIR) else "the user cache"
    )


def sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tree_files(root: Path) -> list[str]:
    """Every file under ``instances/`` and ``results/``, relative and in POSIX form."""
    return sorted(
        f"{Path(dirpath).relative_to(root).as_posix()}/{name}"
        for tree in _TREES
        for dirpath, _, names in os.walk(root / tree)
        for name in names
    )


def partial_files(root: Path) -> tuple[str, ...]:
    """Left-overs of interrupted fetches (temporary download files), relative to ``root``."""
    names = [*_tree_files(root), *(p.name for p in _root_files(root))]
    known = registry()
    return tuple(n for n in names if n not in known and _PARTIAL.match(n.rsplit("/", 1)[-1]))


def _root_files(root: Path) -> list[Path]:
    try:
        return [p for p in root.iterdir() if p.is_file()]
    except OSError:
        return []


def unregistered(root: Path) -> tuple[str, ...]:
    """Files under ``instances/`` and ``results/`` that are not in the registry (partials excluded).

    facetlab never reads them: :func:`facetlab.datasets.data_dir` refuses a
    folder that has any, and ``facetlab data info`` / ``data verify`` list them.
    """
    known = registry()
    partial = set(partial_files(root))
    return tuple(n for n in _tree_files(root) if n not in known and n not in partial)


def clean_partial(root: Path, *, min_age_s: float = PARTIAL_AGE_S) -> tuple[str, ...]:
    """Delete partial files older than ``min_age_s`` seconds; return the ones deleted.

    A folder that cannot be written (a mirror used in place) is left as it is.
    """
    removed = []
    now = time.time()
    for name in partial_files(root):
        path = root / name
        with contextlib.suppress(OSError):
            if now - path.stat().st_mtime >= min_age_s:
                path.unlink()
                removed.append(name)
    return tuple(removed)


@dataclass(frozen=True)
class VerifyReport:
    """What :func:`verify` found: every registered file hashed, everything else listed."""

    root: Path
    checked: int
    missing: tuple[str, ...]
    altered: tuple[str, ...]
    unregistered: tuple[str, ...]
    cleaned: tuple[str, ...]
    seconds: float
    source: DataSource | None = None
    """Which folder was checked and which setting chose it."""
    copies: Mapping[str, str] = field(default_factory=dict)
    """Unregistered file → the registered file it duplicates (same content)."""

    @property
    def ok(self) -> bool:
        """True when every registered file matches and nothing else is in the trees."""
        return not (self.missing or self.altered or self.unregistered)

    def __str__(self) -> str:
        matched = self.checked - len(self.missing) - len(self.altered)
        text = f"{matched} of {self.checked} files match the registry in {self.root}"
        parts = [
            f"{len(self.missing)} missing" if self.missing else "",
            f"{len(self.altered)} altered" if self.altered else "",
            f"{len(self.unregistered)} not in the registry" if self.unregistered else "",
        ]
        found = ", ".join(p for p in parts if p)
        return f"{text} ({found})" if found else text

    def problems(self) -> list[str]:
        """Every missing, altered and unregistered file, one a line (a copy says of what)."""
        return [
            *(f"missing: {name}" for name in self.missing),
            *(f"altered: {name}" for name in self.altered),
            *(
                f"not in the registry: {name}"
                + (f" (a copy of {self.copies[name]})" if name in self.copies else "")
                for name in self.unregistered
            ),
        ]


def compare(root: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The registered files missing under ``root``, and those whose sha256 differs."""
    entries = sorted(registry().items())
    missing = tuple(name for name, _ in entries if not (root / name).is_file())
    altered = tuple(
        name for name, sha in entries if name not in missing and sha256(root / name) != sha
    )
    return missing, altered


def verify(root: DataSource | Path | None = None) -> VerifyReport:
    """Re-hash every registered file (about 7 MB), list what is missing, altered or extra.

    ``root`` defaults to :func:`data_source`. In facetlab's own data dir it also removes
    partial files; a mirror or a given folder is only read.

    Example:
        >>> verify(Path("/tmp/empty")).missing[:1]  # doctest: +SKIP
        ('instances/compliance/facet-neg-0002-c3.json',)
    """
    started = time.perf_counter()
    source = root if isinstance(root, DataSource) else data_source(root)
    root = source.root
    cleaned = clean_partial(root) if source.owned else ()
    missing, altered = compare(root)
    extra = unregistered(root)
    by_hash = {sha: name for name, sha in registry().items()}
    copies = {name: by_hash[h] for name in extra if (h := sha256(root / name)) in by_hash}
    return VerifyReport(
        root=root,
        checked=len(registry()),
        missing=missing,
        altered=altered,
        unregistered=extra,
        cleaned=cleaned,
        seconds=time.perf_counter() - started,
        source=source,
        copies=copies,
    )
