"""Where the FACET v3 data comes from, how to cite it, and its local state (``facetlab data info``).

Example:
    >>> info().license, info().doi
    ('CC BY 4.0', '10.5281/zenodo.19557436')
"""

from dataclasses import dataclass, field
from pathlib import Path

from facetlab.datasets import folder
from facetlab.datasets.pinned import (
    BIBTEX,
    CITATION,
    COMMIT,
    DOI,
    LICENSE,
    LICENSE_URL,
    REPOSITORY,
    VERSION,
    registry,
)

__all__ = ["DataInfo", "info"]


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
    unregistered: tuple[str, ...] = ()
    altered: tuple[str, ...] = ()
    """Registered files whose content no longer has its registered sha256."""
    notes: tuple[str, ...] = field(default_factory=tuple)


def _state(present: int, expected: int, extra: tuple[str, ...], altered: tuple[str, ...]) -> str:
    if altered:
        shown = ", ".join(altered[:5]) + (
            f" and {len(altered) - 5} more" if len(altered) > 5 else ""
        )
        state = (
            f"altered: {len(altered)} file(s) differ from the registry ({shown}); "
            "run `facetlab data verify`, then `facetlab data fetch`"
        )
    elif present == expected:  # every file was just hashed
        state = "verified"
    elif present == 0:
        state = "not fetched (run `facetlab data fetch`)"
    else:
        state = f"incomplete: {present} of {expected} files (run `facetlab data fetch`)"
    if extra:
        state += (
            f"; {len(extra)} file(s) not in the registry, never used: facetlab refuses "
            "this folder until they are moved out"
        )
    return state


def info() -> DataInfo:
    """Source, attribution and local state of the FACET v3 data (never downloads).

    Every present file is hashed (about 7 MB, a few tens of milliseconds), so an edit
    that keeps a file's size and mtime is reported.
    """
    root = folder.data_source().root
    expected = len(registry())
    missing, altered = folder.compare(root)
    present = expected - len(missing)
    extra = folder.unregistered(root)
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
        mirror=folder.mirror_from_env(),
        state=_state(present, expected, extra, altered),
        files_expected=expected,
        files_present=present,
        unregistered=extra,
        altered=altered,
        notes=(
            "The data (instances/, results/) is by Venkateshwar Reddy Jambula, Pranaalpha Labs, "
            f"licensed {LICENSE}; facetlab downloads it unchanged and does not redistribute it.",
        ),
    )
