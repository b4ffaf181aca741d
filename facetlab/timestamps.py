"""Timestamps as facetlab writes them.

>>> now_iso().endswith("Z")
True
"""

from datetime import datetime, timezone


def now_iso() -> str:
    """The current UTC time, ISO 8601 with milliseconds and a ``Z``."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
