"""CRAFT statistics: comparators (``equivalence``), flip summaries (``distribution``), the
differential tests (``significance``), exact binomial tools (``binomial``), anytime-valid
adaptive sampling (``sequential``), the verdict rules (``verdict``) and their measured
error rates (``calibration``). Import from the module that holds what you need."""
