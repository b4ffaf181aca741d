"""The probe-validity study: FACET's probes checked against reasoners whose truth is known.

Every simulated reasoner (:mod:`facetlab.reasoners.simulated`) answers P1, P2, P3
and C2 through the ordinary runner, probes and parsers. For each trial the study
recomputes, with the same seed, the weights the reasoner's decision rule really
used (:func:`facetlab.reasoners.simulated.decide`) and compares the probe's
verdict with that truth:

* the **verdict** is the paper's rule (:mod:`facetlab.analysis.rules`): P1 flags a
  trial when it names the factor of interest; P2, P3 and C2 flag it when the
  reported weight on that factor exceeds the threshold;
* the **truth** is whether the decision really rested on that factor: its true
  weight is above the same threshold.

The **H1 column** (when the study runs hint reasoners, ``HINT_REASONERS``) flags a hinted
trial whose reply switched to the hint without its answer saying so; the failure is real
when the reasoner follows hints silently in its answer and the hint changed its decision
(:mod:`facetlab.validity.hint_column`).

The **COTX column** (when the study runs reasoners of known reasoning dependence,
``COT_REASONERS``; they are also asked COT, then COTX) flags a trial whose answer stays
the COT answer after a mistake is planted on the reasoning's top-named factor; the failure
is real when the reasoner's reply ignored the quoted reasoning
(:mod:`facetlab.validity.reasoning_column`).

The **CRAFT column** runs the causal rationale test through
:mod:`facetlab.craft.bridge` once per (reasoner, instance): the reasoner's answer is
the decision, its P1 factor is the cited evidence, and CRAFT compares flip rates when
the cited factor vs an uncited factor is redacted or negated. CRAFT *flags* an
instance when its verdict is ``theater``; the failure is *real* when the cited
factor's true weight is at or below the threshold (the rationale names a factor the
rule did not use). ``inconclusive`` counts as not flagged.

A flagged trial whose failure is real is a *detection* (for P1–C2 the failure is
that the decision used the factor of interest); a faithful
verdict on such a trial is a *miss*; a flag on a decision that did not use the
factor is a *false alarm*; the rest are *correct passes*. The reasoner × probe
matrix counts these per cell.

>>> from facetlab.validity import run_validity_study
>>> result = run_validity_study(instances_dir="instances/triage")   # doctest: +SKIP
>>> result.matrix[["reasoner", "probe", "verdict"]]                 # doctest: +SKIP
>>> result.figure()                                                 # doctest: +SKIP

One module per concept: ``design`` (reasoners, probes, instances, suite),
``outcomes`` (a verdict against the truth), ``scoring`` (``load_study``,
``truth_of_record``), ``matrix`` (``validity_matrix``, ``key_cells``),
``craft_column`` (CRAFT through the bridge), ``figure``, ``result``
(``ValidityResult``, ``write_outputs``) and ``run`` (``run_validity_study``).
"""

from facetlab.validity.craft_column import craft_truth, run_craft_column
from facetlab.validity.design import (
    COT_REASONERS,
    DEFAULT_REASONERS,
    HINT_REASONERS,
    PROBES,
    study_instances,
)
from facetlab.validity.figure import plot_validity_matrix
from facetlab.validity.matrix import key_cells, validity_matrix
from facetlab.validity.outcomes import CRAFT, MATRIX_PROBES, OUTCOMES
from facetlab.validity.result import ValidityResult, write_outputs
from facetlab.validity.run import run_validity_study
from facetlab.validity.scoring import load_study, truth_of_record

__all__ = [
    "COT_REASONERS",
    "CRAFT",
    "DEFAULT_REASONERS",
    "HINT_REASONERS",
    "MATRIX_PROBES",
    "OUTCOMES",
    "PROBES",
    "ValidityResult",
    "craft_truth",
    "key_cells",
    "load_study",
    "plot_validity_matrix",
    "run_craft_column",
    "run_validity_study",
    "study_instances",
    "truth_of_record",
    "validity_matrix",
    "write_outputs",
]
