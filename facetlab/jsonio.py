"""The one JSON-file reader of facetlab: instances, perturbations, records, FACET results.

Files are input from anywhere (a downloaded benchmark, a colleague's sweep, a
hand-edited instance), so the reader is strict and bounded:

- at most :data:`MAX_BYTES` bytes and :data:`MAX_DEPTH` levels of nesting
  (a 200,000-deep file is a clear problem, not a ``RecursionError``);
- a key twice in one object is a problem (``json`` would silently keep the last);
- ``NaN``, ``Infinity`` and ``-Infinity`` are not JSON and would poison every
  number computed from them, so they are refused;
- only regular files are read (a FIFO would block, a symlink loop is named).

It never raises: it returns ``(data, None)`` or ``(None, what is wrong)`` and
leaves the file name to the caller, who knows how to show it.

Example:
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write('{"a": 1, "a": 2}')
    >>> read_json_file(Path(f.name))
    (None, "duplicate key 'a' in one object; expected each key once")
"""

import errno
import hashlib
import json
import os
import re
import stat
from itertools import accumulate
from pathlib import Path
from typing import Any

__all__ = [
    "DIGEST_EXCLUDED",
    "MAX_BYTES",
    "MAX_DEPTH",
    "container_depth",
    "digest_problem",
    "escaped",
    "json_type",
    "nesting_depth",
    "read_json_file",
    "received_sha256",
]

MAX_BYTES = 64 * 1024 * 1024
"""Largest JSON file read (64 MiB; the largest FACET v3 file is 84 KB)."""

MAX_DEPTH = 64
"""Deepest nesting of arrays and objects accepted (FACET v3 files nest 3 deep)."""

# Strings may hold brackets; they are cut out before the brackets are counted.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # unrolled: 7x faster
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class _Refused(ValueError):
    """A well-formed but refused construct (duplicate key, NaN)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):  # rare: only then look for the first repeated key
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {key!r} in one object; expected each key once")
            seen.add(key)
    return result


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number; expected a finite number or null")


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``[`` / ``{`` in JSON text, without recursion.

    >>> nesting_depth('{"a": [1, {"b": "]]]"}]}')
    3
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(_STEP[c] for c in brackets), default=0)


def container_depth(data: Any) -> int:
    """The deepest nesting of lists and dicts in parsed JSON, without recursion.

    >>> container_depth({"a": [1, {"b": "]]]"}]}), container_depth(42), container_depth(None)
    (3, 0, 0)
    """
    if not isinstance(data, (dict, list)):
        return 0  # a number, string, boolean or null at the top level nests nothing
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        deepest = max(deepest, level)
        stack.extend((c, level + 1) for c in children if isinstance(c, (dict, list)))
    return deepest


def _read_bytes(path: Path, max_bytes: int) -> tuple[bytes | None, str | None]:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file; expected a JSON file"
        if info.st_size > max_bytes:
            return None, f"file is {info.st_size:,} bytes; expected at most {max_bytes:,}"
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, "symbolic link loop; expected a link that ends at a file"
        return None, f"cannot read file ({exc.strerror or exc})"
    if len(raw) > max_bytes:  # grew while being read
        return None, f"file is over {max_bytes:,} bytes; expected at most {max_bytes:,}"
    return raw, None


def read_json_file(
    path: Path,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    expect: type[dict[str, Any]] | type[list[Any]] | None = None,
) -> tuple[Any, str | None]:
    """``(data, None)`` for a readable JSON file, else ``(None, what is wrong)``; never raises.

    Any top-level JSON value is read (``42``, ``null``, ``true`` included). With
    ``expect=dict`` (or ``list``) any other top-level value is a problem that says what
    was expected and what the file holds. The message says what was expected, with line
    and column for a syntax error.

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        ...     _ = f.write('{"a": 1,}')
        >>> read_json_file(Path(f.name))
        (None, 'invalid JSON at line 1 column 9: Expecting property name enclosed in double quotes')
    """
    raw, problem = _read_bytes(Path(path), max_bytes)
    if raw is None:
        return None, problem
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"expected UTF-8 text ({exc.reason})"
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except RecursionError:  # deeper than the interpreter's limit: count without recursing
        depth = nesting_depth(text)
        return None, f"nested {depth:,} levels deep; expected at most {max_depth}"
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
    except _Refused as exc:
        return None, str(exc)
    except ValueError as exc:  # e.g. an integer of 5,000 digits
        return None, f"invalid JSON: {exc}"
    # Parsed, so at most ~1000 deep; walking the containers is cheaper than scanning the text.
    depth = container_depth(data)
    if depth > max_depth:
        return None, f"nested {depth:,} levels deep; expected at most {max_depth}"
    if expect is not None and not isinstance(data, expect):
        wanted = "an object" if expect is dict else "an array"
        return None, f"expected {wanted} at the top level, got {json_type(data)}"
    return data, None


_JSON_TYPE = {
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
    list: "an array",
    dict: "an object",
}


def json_type(value: object) -> str:
    """JSON name of a parsed value's type, with its article.

    >>> json_type([1]), json_type("x"), json_type(None)
    ('an array', 'a string', 'null')
    """
    return _JSON_TYPE.get(type(value), type(value).__name__)


DIGEST_EXCLUDED = ("received_sha256",)
"""What a digest leaves out of the object it covers: the digest itself, nothing else. Every
other field a record (or a cache entry) holds is covered — whatever a table, figure,
gate, export or resume decision reads is in it, and a field added later is covered
without a change here."""

LEGACY_FIELDS = ("status", "raw_response", "probe", "n_factors", "template", "parsed",
                 "parse_status")  # fmt: skip
"""What the digests of records written before the whole record was covered cover."""


def received_sha256(entry: dict[str, Any]) -> str:
    """sha256 over canonical JSON of ``entry`` without :data:`DIGEST_EXCLUDED`: the one rule
    for a record (its JSON form: an object's, a file's, a shard line's, a part's) and a
    cache entry. Text is hashed as stored, a lone surrogate escaped (never an error)."""
    covered = {name: value for name, value in entry.items() if name not in DIGEST_EXCLUDED}
    return _sha256(["facetlab.received/2", covered])


def digest_problem(entry: dict[str, Any]) -> str | None:
    """Why ``entry``'s ``received_sha256`` does not prove it (None: it does, or it has none).

    A digest of the older rule (:data:`LEGACY_FIELDS`, records written before) still
    proves those fields."""
    stored = entry.get("received_sha256")
    if stored is None or stored == received_sha256(entry):
        return None
    if stored == _sha256(["facetlab.received/1", *(entry.get(n) for n in LEGACY_FIELDS)]):
        return None
    return "it was changed after it was written (received_sha256 differs)"


_SURROGATE = re.compile("[\ud800-\udfff]")


def escaped(text: str) -> str:
    """``text`` as facetlab stores what it received: a lone surrogate (a cut emoji in a
    reply's JSON, a non-UTF-8 header byte as aiohttp decodes it) becomes its escape text
    (``\\ud83d``), which any file, JSON or Parquet holds; everything else is kept.

    >>> escaped(json.loads('"a\\\\ud83d!"'))
    'a\\\\ud83d!'
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _sha256(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
