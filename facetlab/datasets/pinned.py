"""What the FACET v3 data is: the pinned repository commit, its DOI, its citation, its registry.

Example:
    >>> from facetlab.datasets import pinned
    >>> pinned.COMMIT[:7], pinned.DOI
    ('aee05c4', '10.5281/zenodo.19557436')
    >>> len(pinned.registry())
    448
"""

import hashlib
from collections.abc import Mapping
from functools import cache
from importlib import resources
from types import MappingProxyType

from facetlab.errors import DataError

__all__ = [
    "BASE_URL",
    "BIBTEX",
    "CITATION",
    "COMMIT",
    "DOI",
    "LICENSE",
    "LICENSE_URL",
    "REPOSITORY",
    "VERSION",
    "registry",
    "registry_digest",
]

REPOSITORY = "Venkateshwar-PortoAI/facet-benchmark"
COMMIT = "aee05c452e317022593a00f3bc602265f6fd4a75"
VERSION = "v3.0"
DOI = "10.5281/zenodo.19557436"
LICENSE = "CC BY 4.0"
LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/"
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


@cache
def _registry_text() -> str:
    return resources.files("facetlab").joinpath("data/registry.txt").read_text(encoding="utf-8")


@cache
def registry() -> Mapping[str, str]:
    """The shipped registry ``facetlab/data/registry.txt``: relative path → sha256, read-only.

    Example:
        >>> registry()["instances/facet-neg-cf-002.json"][:12]
        '21d4cf36ad3a'
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
def registry_digest() -> str:
    """sha256 of the registry file itself (``sha256sum facetlab/data/registry.txt``)."""
    return hashlib.sha256(_registry_text().encode("utf-8")).hexdigest()
