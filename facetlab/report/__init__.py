"""Your own study of any domain and model: the study notebook's logic and ``facetlab report``.

- :mod:`~facetlab.report.study` — :class:`Study`: folders checked, trials loaded, the four
  study tables of :mod:`facetlab.analysis.study` (or why each is empty);
- :mod:`~facetlab.report.plots` — one function per figure, a table in, a Figure out;
- :mod:`~facetlab.report.summary` — which model looks dissociated under which probe;
- :mod:`~facetlab.report.outputs` — where tables and figures are written; :class:`Table`,
  a study table as the notebook shows it (escaped, no index, rounded);
- :mod:`~facetlab.report.gate` — ``--fail-if`` rules: fail CI on a FACET number;
- :mod:`~facetlab.report.standalone` — ``study.html``: self-contained, runs no script;
- :mod:`~facetlab.report.render` — run ``notebooks/study.ipynb`` headless into a report.

Never imports :mod:`facetlab.paper`.
"""

from facetlab.report.outputs import Note, ReportOutputs, Table
from facetlab.report.study import SECTIONS, Section, Study, as_paths
from facetlab.report.summary import describe

__all__ = ["SECTIONS", "Note", "ReportOutputs", "Section", "Study", "Table", "as_paths", "describe"]
