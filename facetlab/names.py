"""Ids that become file names: what makes one safe.

An instance id names record files (``<probe>.<instance_id>.r0.<key>.json``) and
perturbation files, so it must be one plain path component on every common file
system. :func:`check_safe_id` says what is wrong with an id (``None`` when it is
fine); ``validate`` reports that as a problem and ``run`` refuses before paying.

>>> check_safe_id("facet-neg-0005") is None
True
>>> check_safe_id("ops/facet-neg-0005")
"contains '/'; expected a plain file name (letters, digits, '-', '_', '.')"
"""

MAX_ID_LENGTH = 120
"""Record names add ~40 characters; most file systems allow 255 bytes per name."""


def check_safe_id(value: str) -> str | None:
    """Why ``value`` cannot be used inside a file name, or ``None`` when it can."""
    if not value or not value.strip():
        return "is empty; expected a non-empty id"
    if "\x00" in value:
        return "contains a NUL character; expected a plain file name"
    for char in ("/", "\\"):
        if char in value:
            return f"contains {char!r}; expected a plain file name (letters, digits, '-', '_', '.')"
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return "contains a control character; expected a plain file name"
    if value in (".", "..") or value.startswith("."):
        return "starts with '.'; expected a visible file name"
    if len(value.encode("utf-8")) > MAX_ID_LENGTH:
        return f"is {len(value.encode('utf-8'))} bytes long; expected at most {MAX_ID_LENGTH}"
    return None
