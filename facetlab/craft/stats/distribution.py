"""Summaries of sampled decisions: the modal decision, flips against it, and flip rates.

>>> d = ["P1", "P1", "P3"]
>>> modal_decision(d), flips(d, "P1"), flip_rate(flips(d, "P1"))
('P1', [False, False, True], 0.3333333333333333)
"""

from collections.abc import Sequence

from facetlab.craft.stats.equivalence import DecisionEquals, exact_equals


def modal_decision(decisions: Sequence[str], equals: DecisionEquals = exact_equals) -> str:
    """The most frequent decision, grouping decisions that ``equals`` calls the same.

    Ties go to the decision seen first, so the result is deterministic.
    """
    if not decisions:
        raise ValueError("modal_decision needs at least one decision")
    groups: list[tuple[str, int]] = []
    for decision in decisions:
        for index, (representative, count) in enumerate(groups):
            if equals(representative, decision):
                groups[index] = (representative, count + 1)
                break
        else:
            groups.append((decision, 1))
    best = max(count for _, count in groups)
    return next(rep for rep, count in groups if count == best)


def flips(
    decisions: Sequence[str], reference: str, equals: DecisionEquals = exact_equals
) -> list[bool]:
    """``True`` where a decision differs from ``reference``."""
    return [not equals(reference, d) for d in decisions]


def flip_rate(flip_list: Sequence[bool]) -> float:
    """Fraction of flips (0.0 for an empty list)."""
    return sum(flip_list) / len(flip_list) if flip_list else 0.0
