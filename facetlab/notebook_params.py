"""Notebook parameters checked: a name a notebook does not declare is an error, with the close match.

Papermill writes every ``-p NAME VALUE`` into the cell it injects after a notebook's
``parameters`` cell and only *warns* about a name the notebook does not declare, so
``-p instance D`` (for ``instances``) runs the notebook on its defaults: another
domain's report, exit 0. Every shipped notebook's first code cell calls
:func:`check_injected`, which reads the injected cell from the kernel's input history;
``facetlab report`` and ``facetlab reproduce`` call :func:`check_parameters` before
any kernel starts. One rule, one message:

>>> check_parameters({"instance": "x"}, ["instances", "records"], "study.ipynb")
Traceback (most recent call last):
...
facetlab.errors.ConfigError: unknown parameter 'instance' (did you mean 'instances'?) for study.ipynb; declared: instances, records
"""

import ast
import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from facetlab.errors import ConfigError

__all__ = [
    "UNKNOWN",
    "assigned_names",
    "assigned_values",
    "check_injected",
    "check_parameters",
    "declared_parameters",
    "type_problem",
]

INJECTED_HEADER = "# Parameters"
"""The first line of the cell papermill injects (its default comment); the shipped
notebooks' own ``parameters`` cells start otherwise, so the two are never confused."""


def assigned_names(source: str) -> list[str]:
    """The names a cell's top-level statements assign, sorted (none if it does not parse).

    >>> assigned_names("a = 1  # note\\nb: int = 2\\nprint(a)")
    ['a', 'b']
    """
    return sorted(assigned_values(source))


UNKNOWN = object()
"""The value of a parameter assigned something other than a literal (not type-checked)."""


def assigned_values(source: str) -> dict[str, Any]:
    """What a cell's top-level statements assign: each name's literal value, or
    :data:`UNKNOWN` (an expression); empty when the cell does not parse.

    >>> assigned_values("threshold = 10\\nformats: list = ['png']")
    {'threshold': 10, 'formats': ['png']}
    """
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return {}
    found: dict[str, Any] = {}
    for node in body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in (t for t in targets if isinstance(t, ast.Name)):
            try:
                found[target.id] = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                found[target.id] = UNKNOWN
    return found


def declared_parameters(notebook: Path | str) -> dict[str, Any]:
    """The names a notebook's cell tagged ``parameters`` assigns, with their values
    (:func:`assigned_values`; :class:`ConfigError` if the file is not a notebook)."""
    path = Path(notebook)
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a readable notebook ({exc})") from exc
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    return assigned_values("".join(tagged[0].get("source", []))) if tagged else {}


def check_parameters(given: Iterable[str], declared: Iterable[str], where: str) -> None:
    """Refuse (:class:`ConfigError`) any ``given`` name that ``declared`` lacks, naming
    the closest declared one and the whole list; ``where`` says whose parameters they are.
    Given both as mappings (name -> value, name -> the parameters cell's value), each
    value must also be of its default's type (:func:`type_problem`).

    >>> check_parameters({"threshold": "abc"}, {"threshold": 10}, "study.ipynb")
    Traceback (most recent call last):
    ...
    facetlab.errors.ConfigError: parameter 'threshold' for study.ipynb: expected a number (as its parameters cell has it), got a string: 'abc'
    """
    known = sorted(set(declared))
    unknown = [name for name in dict.fromkeys(given) if name not in known]
    if not unknown:
        if isinstance(given, Mapping) and isinstance(declared, Mapping):
            for name, value in given.items():
                if (problem := type_problem(value, declared[name])) is not None:
                    raise ConfigError(f"parameter {name!r} for {where}: {problem}")
        return
    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        parts.append(f"'{name}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
    noun = "parameter" if len(unknown) == 1 else "parameters"
    raise ConfigError(
        f"unknown {noun} {', '.join(parts)} for {where}; declared: {', '.join(known) or 'none'}"
    )


_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "a boolean"),
    ((int, float), "a number"),
    (str, "a string"),
    ((list, tuple), "a list"),
    (dict, "a mapping"),
    (type(None), "null"),
)


def _kind(value: object) -> str | None:
    """A plain value's kind (None: not one a notebook cell can be given: a date, bytes)."""
    if isinstance(value, (list, tuple)) and any(_kind(v) is None for v in value):
        return None
    if isinstance(value, dict) and any(_kind(v) is None for v in value.values()):
        return None
    return next((name for types, name in _KINDS if isinstance(value, types)), None)


def type_problem(value: object, default: object) -> str | None:
    """Why ``value`` cannot replace a parameter whose default is ``default`` (None: it can):
    a plain value (a string, number, boolean, list, mapping, null) of the default's kind
    (a list's also takes a string: ``-p formats=png,svg``); a default of None, or one that
    is not a literal, takes any plain value."""
    kind = _kind(value)
    if kind is None:
        return f"got {type(value).__name__} ({value!r:.60}), which no notebook cell can be given"
    wanted = None if default is None or default is UNKNOWN else _kind(default)
    if wanted is None or wanted == kind or (wanted, kind) == ("a list", "a string"):
        return None  # a list's parameter also takes one string ("png,svg")
    return f"expected {wanted} (as its parameters cell has it), got {kind}: {value!r:.60}"


def check_injected(history: Sequence[str] | None = None, where: str = "this notebook") -> None:
    """The guard of a notebook's first code cell: ``history`` is the kernel's input
    history (default: IPython's ``In``). When the cell run before this one is the one
    papermill injected, every name it assigns must be assigned by the ``parameters``
    cell run before it; in JupyterLab (nothing injected) there is nothing to check.

    >>> check_injected(["", "instances = None", "# Parameters\\ninstance = 'D'\\n", "guard"])
    Traceback (most recent call last):
    ...
    facetlab.errors.ConfigError: unknown parameter 'instance' (did you mean 'instances'?) for this notebook; declared: instances
    """
    if history is None:
        from IPython import get_ipython

        shell = get_ipython()
        history = shell.user_ns.get("In", []) if shell is not None else []
    if len(history) < 3 or history[-2].splitlines()[:1] != [INJECTED_HEADER]:
        return
    check_parameters(assigned_values(history[-2]), assigned_values(history[-3]), where)
