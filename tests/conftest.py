"""Shared fixtures.

The FACET v3 data comes from the mirror named by ``FACETLAB_DATA_MIRROR`` (CI and
developers point it at ``../shared/facet-data``). A test that needs the data takes
the ``facet_data`` fixture: it skips when the data is absent, except under
``CI=true`` where a missing mirror is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MIRROR = ROOT.parent / "shared" / "facet-data"


def _mirror() -> Path | None:
    env = os.environ.get("FACETLAB_DATA_MIRROR")
    candidate = Path(env) if env else DEFAULT_MIRROR
    return candidate if (candidate / "SHA256SUMS").is_file() else None


@pytest.fixture(scope="session")
def facet_data() -> Path:
    """Root of a FACET v3 data tree (holds ``instances/`` and ``results/``); read-only."""
    mirror = _mirror()
    if mirror is None:
        msg = (
            "FACET v3 data not found: set FACETLAB_DATA_MIRROR to a mirror "
            f"(e.g. {DEFAULT_MIRROR}) or run `facetlab data fetch`."
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return mirror


REPRODUCED_ENV = "FACETLAB_REPRODUCED"
"""Set by scripts/test.sh after its one ``facetlab reproduce`` run (and the check that the
committed CSVs did not change): the folder of that run's executed notebooks."""


@pytest.fixture(scope="session")
def reproduced() -> Path | None:
    """The executed notebooks of this test run's reproduction, or ``None`` (pytest alone).

    Tests that would regenerate the whole paper read that run's outputs instead, so
    the test command computes the paper once.
    """
    value = os.environ.get(REPRODUCED_ENV)
    return Path(value) if value else None
