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

from __future__ import annotations

import ast
import difflib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from facetlab.errors import ConfigError

__all__ = ["assigned_names", "check_injected", "check_parameters", "declared_parameters"]

INJECTED_HEADER = "# Parameters"
"""The first line of the cell papermill injects (its default comment); the shipped
notebooks' own ``parameters`` cells start otherwise, so the two are never confused."""


def assigned_names(source: str) -> list[str]:
    """The names a cell's top-level statements assign, sorted (none if it does not parse).

    >>> assigned_names("a = 1  # note\\nb: int = 2\\nprint(a)")
    ['a', 'b']
    """
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return []
    targets = [t for n in body if isinstance(n, ast.Assign) for t in n.targets]
    targets += [n.target for n in body if isinstance(n, ast.AnnAssign)]
    return sorted({t.id for t in targets if isinstance(t, ast.Name)})


def declared_parameters(notebook: Path | str) -> list[str]:
    """The names a notebook's cell tagged ``parameters`` assigns (:class:`ConfigError` if
    the file is not a notebook)."""
    path = Path(notebook)
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not a readable notebook ({exc})") from exc
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    return assigned_names("".join(tagged[0].get("source", []))) if tagged else []


def check_parameters(given: Iterable[str], declared: Iterable[str], where: str) -> None:
    """Refuse (:class:`ConfigError`) any ``given`` name that ``declared`` lacks, naming
    the closest declared one and the whole list; ``where`` says whose parameters they are."""
    known = sorted(set(declared))
    unknown = [name for name in dict.fromkeys(given) if name not in known]
    if not unknown:
        return
    parts = []
    for name in unknown:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        parts.append(f"'{name}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
    noun = "parameter" if len(unknown) == 1 else "parameters"
    raise ConfigError(
        f"unknown {noun} {', '.join(parts)} for {where}; declared: {', '.join(known) or 'none'}"
    )


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
    check_parameters(assigned_names(history[-2]), assigned_names(history[-3]), where)
