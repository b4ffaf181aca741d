"""Repository-wide pytest settings: which docstring examples can be collected here.

``--doctest-modules`` imports every module of facetlab; the Inspect interop needs the
``inspect`` extra, so its examples are collected only where that extra is installed.
"""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("inspect_ai") else ["facetlab/interop/*"]
