"""Offline reasoners: model stand-ins that need the probes, instances or recorded data.

``simulated`` answers from a known strategy; ``replay`` returns the FACET paper's
recorded outputs. Both implement the :class:`facetlab.backends.Backend` interface and
sit one layer above :mod:`facetlab.backends`, which names them only by module path
(``get_backend("simulated/wadd")`` imports :mod:`facetlab.reasoners.simulated` on
first use), so the provider layer never imports probes, instances or records.
"""
