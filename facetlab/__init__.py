"""facetlab: measure whether an LLM's stated reasons are the reasons it used.

Two methods share one package:

- **FACET probes** (P1 top-1, P2 cued weighted-rank, P3 adversarial, C2 ablation)
  on multi-factor decision problems, run against real providers or offline
  reasoners, analysed into the tables and figures of the FACET paper;
- **CRAFT** (:mod:`facetlab.craft`), a causal test of an agent's cited evidence.

The top-level names are imported lazily so that ``import facetlab`` (and the
standard-library-only ``facetlab.craft``) stays cheap.

>>> import facetlab
>>> trials = facetlab.load_trials()          # doctest: +SKIP
>>> facetlab.run(model="simulated/wadd", instances="instances/", out="results/demo")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "load_trials": "facetlab.records",
    "read_records": "facetlab.records",
    "TrialRecord": "facetlab.records",
    "Instance": "facetlab.instances",
    "load_instance": "facetlab.instances",
    "load_instances": "facetlab.instances",
    "data_dir": "facetlab.datasets",
    "fetch": "facetlab.datasets",
    "get_backend": "facetlab.backends",
    "build_prompt": "facetlab.probes",
    "parse_reply": "facetlab.probes",
    "run": "facetlab.runner",
    "arun": "facetlab.runner",
    "FacetlabError": "facetlab.errors",
}

__all__ = [
    "FacetlabError",
    "Instance",
    "TrialRecord",
    "__version__",
    "arun",
    "build_prompt",
    "data_dir",
    "fetch",
    "get_backend",
    "load_instance",
    "load_instances",
    "load_trials",
    "parse_reply",
    "read_records",
    "run",
]

if TYPE_CHECKING:
    from facetlab.backends import get_backend
    from facetlab.datasets import data_dir, fetch
    from facetlab.errors import FacetlabError
    from facetlab.instances import Instance, load_instance, load_instances
    from facetlab.probes import build_prompt, parse_reply
    from facetlab.records import TrialRecord, load_trials, read_records
    from facetlab.runner import arun, run


def __getattr__(name: str) -> Any:
    if name == "__version__":  # from the package metadata, not typed twice
        from facetlab.project import version

        return version()
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'facetlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | {"__version__"})
