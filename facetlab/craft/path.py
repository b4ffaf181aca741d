"""Dot-paths into nested dicts and lists: ``"ticket.body"``, ``"items.0.name"``.

Setters never mutate their argument; they return a deep copy with one change, so a
perturbed input can never leak into the baseline.

>>> data = {"ticket": {"tags": ["a", "b"]}}
>>> get_path(data, "ticket.tags.1")
'b'
>>> set_path(data, "ticket.tags.1", "c")["ticket"]["tags"]
['a', 'c']
>>> data["ticket"]["tags"]
['a', 'b']
"""

import copy
from collections.abc import Iterator
from typing import Any

from facetlab.craft.errors import PathError

_MISSING = object()


def split_path(path: str) -> list[str]:
    """Split a dot-path into its segments; an empty segment is an error."""
    if not isinstance(path, str) or not path:
        raise PathError(f"evidence path must be a non-empty string, got {path!r}")
    parts = path.split(".")
    if any(p == "" for p in parts):
        raise PathError(f"evidence path {path!r} has an empty segment")
    return parts


def _step(node: Any, segment: str, path: str, walked: list[str]) -> Any:
    where = ".".join(walked) or "<input>"
    if isinstance(node, dict):
        if segment in node:
            return node[segment]
        keys = ", ".join(repr(k) for k in list(node)[:12])
        raise PathError(f"path {path!r}: key {segment!r} not found in {where} (keys: {keys})")
    if isinstance(node, list):
        try:
            index = int(segment)
        except ValueError:
            raise PathError(
                f"path {path!r}: {where} is a list, so {segment!r} must be an integer index"
            ) from None
        if -len(node) <= index < len(node):
            return node[index]
        raise PathError(f"path {path!r}: index {index} out of range for {where} (len {len(node)})")
    raise PathError(
        f"path {path!r}: {where} is a {type(node).__name__}, cannot look up {segment!r}"
    )


def _nodes(data: Any, path: str) -> list[Any]:
    """``data`` and every node along ``path`` (the leaf last); :class:`PathError` if one is missing."""
    parts = split_path(path)
    nodes = [data]
    for i, segment in enumerate(parts):
        nodes.append(_step(nodes[-1], segment, path, parts[:i]))
    return nodes


def get_path(data: Any, path: str) -> Any:
    """Value at ``path``; raises :class:`PathError` naming the missing segment."""
    return _nodes(data, path)[-1]


def _parent(data: Any, path: str) -> tuple[Any, str]:
    return _nodes(data, path)[-2], split_path(path)[-1]  # the leaf must exist too


def set_path(data: Any, path: str, value: Any) -> Any:
    """Deep copy of ``data`` with the value at ``path`` replaced by ``value``."""
    out = copy.deepcopy(data)
    parent, leaf = _parent(out, path)
    if isinstance(parent, list):
        parent[int(leaf)] = value
    else:
        parent[leaf] = value
    return out


def delete_path(data: Any, path: str) -> Any:
    """Deep copy of ``data`` with the key (or list element) at ``path`` removed."""
    out = copy.deepcopy(data)
    parent, leaf = _parent(out, path)
    if isinstance(parent, list):
        del parent[int(leaf)]
    else:
        del parent[leaf]
    return out


def iter_leaves(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every scalar leaf as ``(dot_path, value)``, in insertion order.

    >>> list(iter_leaves({"a": {"b": 1}, "c": ["x"]}))
    [('a.b', 1), ('c.0', 'x')]
    """
    if isinstance(data, dict):
        for key, value in data.items():
            yield from iter_leaves(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from iter_leaves(value, f"{prefix}.{index}" if prefix else str(index))
    elif prefix:
        yield prefix, data
