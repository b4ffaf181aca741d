"""The cost meter: what was spent, what calls in flight may still cost, and the budget.

Before a request leaves, its worst case (the prompt's estimated tokens plus every
reply token up to ``max_tokens``) is *reserved*; the request is refused when the
money already spent plus every open reservation plus its own worst case would pass
the budget. When the reply arrives the reservation is *settled* with the cost of
the usage the provider reported; a reply without usable usage is charged its worst
case. So spend never passes the budget while providers report honest usage, however
many calls are in flight.

>>> meter = CostMeter(budget_usd=1.0)
>>> first = meter.reserve(0.6)
>>> meter.reserve(0.6)
Traceback (most recent call last):
...
facetlab.errors.BudgetExceededError: the next call may cost up to $0.6000: with $0.0000 spent and $0.6000 reserved by calls in flight that could pass --budget-usd $1.0000
>>> meter.settle(first, 0.25)
>>> round(meter.spent_usd, 4), meter.reserved_usd
(0.25, 0.0)
"""

import threading
from dataclasses import dataclass

from facetlab.errors import BudgetExceededError
from facetlab.numbers import check_number


@dataclass(frozen=True)
class Reservation:
    """Money held for one call in flight (USD; 0 when there is no budget or no price)."""

    amount_usd: float


NO_RESERVATION = Reservation(0.0)


class CostMeter:
    """Spend, open reservations and an optional budget, shared by every client of a run.

    Thread-safe: CRAFT's adapters call from their own event-loop thread.
    """

    def __init__(self, budget_usd: float | None = None) -> None:
        check_number("--budget-usd", budget_usd, minimum=0.0)
        self.budget_usd = budget_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0
        self.open_reservations = 0
        """Calls in flight holding a reservation (counted, so float residue never looks
        like a call in flight)."""
        self.unpriced = 0
        """Answered calls whose cost is unknown (no price, or no usage on a free-form backend)."""
        self._lock = threading.Lock()

    @property
    def exhausted(self) -> bool:
        """The spend has reached the budget (nothing more can be paid for)."""
        return self.budget_usd is not None and self.spent_usd >= self.budget_usd

    def reserve(self, worst_usd: float | None) -> Reservation:
        """Hold ``worst_usd`` for a call about to leave, or raise :class:`BudgetExceededError`."""
        if self.budget_usd is None or not worst_usd:
            return NO_RESERVATION
        with self._lock:
            if self.spent_usd + self.reserved_usd + worst_usd > self.budget_usd:
                raise BudgetExceededError(
                    f"the next call may cost up to ${worst_usd:.4f}: with ${self.spent_usd:.4f} "
                    f"spent and ${self.reserved_usd:.4f} reserved by calls in flight that could "
                    f"pass --budget-usd ${self.budget_usd:.4f}"
                )
            self.reserved_usd += worst_usd
            self.open_reservations += 1
            return Reservation(worst_usd)

    def _close(self, reservation: Reservation) -> None:
        if reservation.amount_usd == 0.0:
            return
        self.open_reservations = max(0, self.open_reservations - 1)
        left = self.reserved_usd - reservation.amount_usd
        self.reserved_usd = max(0.0, left) if self.open_reservations else 0.0

    def release(self, reservation: Reservation) -> None:
        """Give back a reservation whose call was not paid for (refused, failed, cancelled)."""
        with self._lock:
            self._close(reservation)

    def settle(self, reservation: Reservation, cost_usd: float | None) -> None:
        """Replace a reservation by what the call cost (its reservation when unknown)."""
        with self._lock:
            self._close(reservation)
            if cost_usd is None:
                self.unpriced += 1
                self.spent_usd += reservation.amount_usd
            else:
                self.spent_usd += cost_usd
