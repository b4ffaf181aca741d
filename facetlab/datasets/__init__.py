"""Obtain the FACET v3 data: pinned commit, sha256 registry, cache dir, offline mirror.

The FACET v3 instances and raw results (448 files) are not shipped with
facetlab. On first use pooch fetches them from the benchmark repository at one
pinned commit into a user cache directory, and every file is checked against
the sha256 registry shipped in the package (``facetlab/data/registry.txt``).

One concept per module:

- :mod:`~facetlab.datasets.pinned` — what the data is: commit, URL, DOI, citation, registry;
- :mod:`~facetlab.datasets.folder` — the local folder: the source rule, unregistered and
  partial files, :func:`verify`;
- :mod:`~facetlab.datasets.sources` — pooch downloaders for the URL and a local mirror;
- :mod:`~facetlab.datasets.obtain` — :func:`fetch` and :func:`data_dir`;
- :mod:`~facetlab.datasets.attribution` — :func:`info` (``facetlab data info``).

Settings (environment variables):

``FACETLAB_DATA_MIRROR``
    A local folder with the same layout (e.g. an unpacked Zenodo archive or
    ``../shared/facet-data``). When set, it is the data every loader reads, in place
    (hashed against the registry once per process, never written), and the source
    ``facetlab data fetch`` copies from instead of downloading.
``FACETLAB_DATA_DIR``
    facetlab's own data dir, read when no mirror is set (default: the user cache dir,
    e.g. ``~/.cache/facetlab/facet-v3-aee05c4``). The folder holds ``instances/``
    and ``results/``.

:func:`data_source` is the rule: an explicit ``data_dir``, else the mirror, else
``FACETLAB_DATA_DIR``, else the user cache.

Example:
    >>> from facetlab import datasets
    >>> report = datasets.fetch()  # doctest: +SKIP
    >>> print(report)  # doctest: +SKIP
    448 files verified (0 downloaded, 448 copied, 0 already present) in /home/me/.cache/facetlab/facet-v3-aee05c4
    >>> sorted(p.name for p in (datasets.data_dir() / "instances").glob("*-cf-00?.json"))  # doctest: +SKIP
    ['facet-neg-cf-001.json', 'facet-neg-cf-002.json', 'facet-neg-cf-003.json']
"""

from collections.abc import Mapping

from facetlab.datasets.attribution import DataInfo, info
from facetlab.datasets.folder import (
    ENV_DATA_DIR,
    ENV_MIRROR,
    DataSource,
    VerifyReport,
    cache_dir,
    data_source,
    unregistered,
    verify,
)
from facetlab.datasets.obtain import FetchReport, ProgressCallback, data_dir, fetch
from facetlab.datasets.pinned import (
    BASE_URL,
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

__all__ = [
    "BASE_URL",
    "BIBTEX",
    "CITATION",
    "COMMIT",
    "DOI",
    "ENV_DATA_DIR",
    "ENV_MIRROR",
    "LICENSE",
    "LICENSE_URL",
    "REGISTRY",
    "REPOSITORY",
    "VERSION",
    "DataInfo",
    "DataSource",
    "FetchReport",
    "ProgressCallback",
    "VerifyReport",
    "cache_dir",
    "data_dir",
    "data_source",
    "fetch",
    "info",
    "registry",
    "unregistered",
    "verify",
]

REGISTRY: Mapping[str, str] = registry()
"""Relative path → sha256 of every FACET v3 file facetlab uses."""
