"""The one bounded YAML reader (sweep files): nesting depth, aliases and keys checked first.

PyYAML composes a document recursively, so a file of 100,000 opening brackets ends in a
``RecursionError``; and an alias is a reference, so nine lines of aliases of aliases
stand for 10^9 nodes (a "billion laughs") that anything walking the result expands.
:func:`read_yaml` reads the event stream first (no recursion) and refuses a nesting
deeper than :data:`MAX_DEPTH`, then walks the composed node graph once, without
recursion: a recursive alias, more than :data:`MAX_NODES` nodes once the aliases are
expanded, and a key given twice in one mapping (PyYAML keeps the last one silently) are
each one line naming the file and the line. Only then is anything constructed.

>>> read_yaml("a: &x [1, 2]\\nb: *x\\n", "s.yaml")[1]
{'a': [1, 2], 'b': [1, 2]}
>>> read_yaml("a: &x [*x]\\n", "s.yaml")
Traceback (most recent call last):
...
facetlab.errors.ConfigError: s.yaml:1: a recursive alias (an anchor used inside itself)
"""

import os
from typing import Any

import yaml

from facetlab.errors import ConfigError

__all__ = ["MAX_DEPTH", "MAX_NODES", "read_yaml"]

MAX_DEPTH = 100  # mappings and lists nested deeper are refused
MAX_NODES = 100_000  # values a document may stand for once its aliases are expanded


def read_yaml(
    text: str,
    source: str | os.PathLike[str],
    *,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
) -> tuple[yaml.Node | None, Any]:
    """The composed root node (for error lines) and the data of one YAML document.

    Raises :class:`ConfigError` ``SOURCE:LINE: what is wrong`` for invalid YAML, a
    nesting deeper than ``max_depth``, a recursive alias, more than ``max_nodes`` nodes
    after expanding aliases, a key given twice, or a value that cannot be read (a
    number of thousands of digits).
    """
    loader = yaml.SafeLoader(text)
    try:
        _check_depth(text, source, max_depth)
        node = loader.get_single_node()
        if node is not None:
            _check_graph(node, source, max_nodes)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{source}{where}: not valid YAML: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML: {exc}") from None
    except ValueError as exc:  # e.g. an integer of thousands of digits
        raise ConfigError(f"{source}: a value cannot be read: {str(exc).split(':')[0]}") from None
    finally:
        loader.dispose()
    return node, data


def _check_depth(text: str, source: str | os.PathLike[str], max_depth: int) -> None:
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):  # a state machine: no recursion
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > max_depth:
                line = event.start_mark.line + 1 if event.start_mark is not None else 0
                raise ConfigError(f"{source}:{line}: nested deeper than {max_depth} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _children(node: yaml.Node) -> list[yaml.Node]:
    return (
        [part for pair in node.value for part in pair]
        if isinstance(node, yaml.MappingNode)
        else list(node.value)
        if isinstance(node, yaml.SequenceNode)
        else []
    )


def _check_graph(root: yaml.Node, source: str | os.PathLike[str], max_nodes: int) -> None:
    """Depth-first over the distinct nodes (an alias is the node it names): a node met
    again while its own children are being walked is a cycle; the expanded size of each
    node is counted once, from its children's."""
    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in _children(node))
            if size[key] > max_nodes:
                raise ConfigError(
                    f"{source}:{node.start_mark.line + 1}: stands for more than {max_nodes:,} "
                    "values once its aliases (*name) are expanded; write the values out"
                )
            seen: set[str] = set()  # PyYAML keeps the last of two equal keys silently
            for name, _ in node.value if isinstance(node, yaml.MappingNode) else ():
                if str(name.value) in seen:
                    line = name.start_mark.line + 1
                    raise ConfigError(f"{source}:{line}: {str(name.value)!r} is given twice")
                seen.add(str(name.value))
        elif key in open_nodes:
            line = node.start_mark.line + 1
            raise ConfigError(f"{source}:{line}: a recursive alias (an anchor used inside itself)")
        elif key not in size:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(_children(node)))
