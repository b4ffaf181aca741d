"""``facetlab report --fail-if RULE``: fail a CI build on a FACET number.

One rule is one comparison on one column of a study table, checked on every row::

    TABLE.COLUMN OP NUMBER          e.g.  p3.mean_weight > 10

- ``TABLE``: ``p1_p2``, ``p3``, ``c2``, ``outcomes`` (the study tables), ``counts`` or
  ``hint`` (H1: read from the records only when a rule names it);
- ``COLUMN``: a numeric column of that table (``docs/study.md`` lists them);
- ``OP``: ``>``, ``>=``, ``<``, ``<=``, ``==``, ``!=``;
- ``NUMBER``: a finite decimal number (``10``, ``0.5``, ``-1``, ``1e-3``).

The rule *fails* on each row where the comparison holds (a row with no value in that
column, e.g. no P2 trials, is not compared). A rule on a table the study could not
build fails too, with the reason: a gate never passes for lack of data. Several rules
may be given; the report is always written first.

>>> rule = parse_rule("p3.mean_weight > 10")
>>> rule.table, rule.column, rule.op, rule.number
('p3', 'mean_weight', '>', 10.0)
>>> parse_rule("p3.mean_weight >> 10")
Traceback (most recent call last):
...
facetlab.errors.ConfigError: --fail-if 'p3.mean_weight >> 10': expected TABLE.COLUMN OP NUMBER (e.g. 'p3.mean_weight > 10'), OP one of > >= < <= == !=
"""

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from facetlab.errors import ConfigError

__all__ = ["GATE_TABLES", "Failure", "Rule", "check_columns", "evaluate", "parse_rule"]

GATE_TABLES = ("p1_p2", "p3", "c2", "outcomes", "counts", "hint")
"""Tables a rule may name: the four study tables, the trial counts and the H1 table."""

_KEYS = {
    "p1_p2": ("model", "instance_id"),
    "p3": ("model", "instance_id"),
    "c2": ("model", "base_instance_id", "factor"),
    "outcomes": ("model", "probe"),
    "counts": ("model", "probe"),
    "hint": ("model", "hint_kind"),
}
_OPS: dict[str, Callable[[pd.Series, float], pd.Series]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}
_RULE = re.compile(r"([A-Za-z0-9_]+)\.([A-Za-z0-9_]+)[ \t]*(>=|<=|==|!=|>|<)[ \t]*(\S+)")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass(frozen=True)
class Rule:
    """One ``--fail-if`` rule: fail on rows where ``table.column op number``."""

    table: str
    column: str
    op: str
    number: float
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Failure:
    """A rule that failed: the rows that match it, or why its table is missing."""

    rule: Rule
    rows: pd.DataFrame | None
    reason: str = ""

    def describe(self) -> str:
        """The failure as lines for a CI log: the rule, then one line per failing row."""
        if self.rows is None:
            return f"--fail-if {self.rule}: cannot be checked: {_printable(self.reason)}"
        keys = [k for k in _KEYS[self.rule.table] if k in self.rows.columns]
        lines = [f"--fail-if {self.rule}: {len(self.rows)} row(s) of {self.rule.table}"]
        for row in self.rows.itertuples(index=False):
            fields = [f"{k}={_printable(getattr(row, k))}" for k in keys]
            fields.append(f"{self.rule.column}={_number(getattr(row, self.rule.column))}")
            lines.append("  " + " ".join(fields))
        return "\n".join(lines)


def _printable(value: object) -> str:
    """A name from the data, safe in a terminal or CI log (no control sequences)."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in str(value))


def _number(value: object) -> str:
    return f"{float(value):.6g}" if isinstance(value, int | float) else _printable(value)


def parse_rule(text: str) -> Rule:
    """A rule from its text; a :class:`ConfigError` (one line) says what is wrong."""
    usage = (
        f"expected TABLE.COLUMN OP NUMBER (e.g. 'p3.mean_weight > 10'), OP one of {' '.join(_OPS)}"
    )
    match = _RULE.fullmatch(text.strip())
    if match is None:
        raise ConfigError(f"--fail-if {text!r}: {usage}")
    table, column, op, number = match.groups()
    if table not in GATE_TABLES:
        raise ConfigError(
            f"--fail-if {text!r}: unknown table {table!r}; expected one of {', '.join(GATE_TABLES)}"
        )
    if _NUMBER.fullmatch(number) is None or not math.isfinite(float(number)):
        raise ConfigError(f"--fail-if {text!r}: {number!r} is not a finite number; {usage}")
    return Rule(table, column, op, float(number), text.strip())


def check_columns(rules: Sequence[Rule], tables: Mapping[str, pd.DataFrame | None]) -> None:
    """A :class:`ConfigError` for a rule whose column its table lacks or holds no numbers
    in (tables that could not be built are left to :func:`evaluate`)."""
    for rule in rules:
        table = tables.get(rule.table)
        if table is None:
            continue
        if rule.column not in table.columns:
            numeric = [c for c in table.columns if _is_numeric(table[c])]
            raise ConfigError(
                f"--fail-if {rule.text!r}: {rule.table} has no column {rule.column!r}; "
                f"its numeric columns: {', '.join(numeric)}"
            )
        if not _is_numeric(table[rule.column]):
            raise ConfigError(
                f"--fail-if {rule.text!r}: {rule.table}.{rule.column} is not a numeric column"
            )


def _is_numeric(column: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(column)) and not pd.api.types.is_bool_dtype(column)


def evaluate(
    rules: Sequence[Rule],
    tables: Mapping[str, pd.DataFrame | None],
    reasons: Mapping[str, str] | None = None,
) -> list[Failure]:
    """The rules that fail on ``tables`` (``None``: a table the study could not build,
    ``reasons`` says why), each with its failing rows; empty when the gate passes.

    >>> t = pd.DataFrame({"model": ["cue", "wadd"], "instance_id": ["x", "x"],
    ...                   "mean_weight": [40.0, 2.0]})
    >>> [f.rows["model"].tolist() for f in evaluate([parse_rule("p3.mean_weight > 10")], {"p3": t})]
    [['cue']]
    """
    check_columns(rules, tables)
    failures: list[Failure] = []
    for rule in rules:
        table = tables.get(rule.table)
        if table is None:
            why = (reasons or {}).get(rule.table) or f"no {rule.table} table"
            failures.append(Failure(rule, None, why))
            continue
        values = table[rule.column].astype(float)
        hit = _OPS[rule.op](values, rule.number) & values.notna()
        if bool(hit.any()):
            failures.append(Failure(rule, table[hit].reset_index(drop=True)))
    return failures
