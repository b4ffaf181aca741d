"""Settings that must be finite numbers in range (a NaN compares false with everything).

>>> check_number("--budget-usd", float("nan"), minimum=0.0)
Traceback (most recent call last):
...
facetlab.errors.ConfigError: --budget-usd is nan; expected a finite number >= 0
"""

import math

from facetlab.errors import ConfigError


def check_number(
    name: str,
    value: float | None,
    *,
    minimum: float,
    inclusive: bool = True,
    maximum: float | None = None,
) -> None:
    """A ConfigError unless ``value`` is ``None`` or a finite number >= (or >) ``minimum``
    and, given ``maximum``, <= ``maximum``.

    >>> check_number("top_p", 0.0, minimum=0.0, inclusive=False, maximum=1.0)
    Traceback (most recent call last):
    ...
    facetlab.errors.ConfigError: top_p is 0.0; expected a finite number in (0, 1]
    """
    if value is None:
        return
    ok = (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (value >= minimum if inclusive else value > minimum)
        and (maximum is None or value <= maximum)
    )
    if not ok:
        if maximum is not None:
            bracket = "[" if inclusive else "("
            bound = f"in {bracket}{minimum:g}, {maximum:g}]"
        else:
            bound = f">= {minimum:g}" if inclusive else f"> {minimum:g}"
        raise ConfigError(f"{name} is {value}; expected a finite number {bound}")
