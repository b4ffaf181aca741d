"""Evidence: resolution, placebo derivation and inference from rationales (``resolver``),
and location-matched placebos (``matching``). Import from the module you need."""
