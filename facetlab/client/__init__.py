"""The model client: every model call in facetlab goes through :class:`ModelClient`.

It sits directly above :mod:`facetlab.backends` and owns what surrounds a call:
:mod:`~facetlab.client.limits` (concurrency, requests and tokens per window,
``retry-after`` pauses), :mod:`~facetlab.client.retry` (the backoff; the backend
says which failures are retryable), :mod:`~facetlab.client.cache` (content-addressed
answers), :mod:`~facetlab.client.pricing` (the price table) and
:mod:`~facetlab.client.meter` (spend, reservations, the budget).

>>> from facetlab.client import CostMeter, ModelClient
>>> meter = CostMeter(budget_usd=2.0)
>>> meter.budget_usd
2.0
"""

from facetlab.client.cache import ResponseCache, cache_key
from facetlab.client.limits import Limits, ProviderLimiter
from facetlab.client.meter import CostMeter, Reservation
from facetlab.client.model import Answer, CallFailed, CallHooks, ModelClient, Stopped, price_key
from facetlab.client.pricing import Price, cost_usd, price_for, price_table
from facetlab.client.retry import RetryPolicy

__all__ = [
    "Answer",
    "CallFailed",
    "CallHooks",
    "CostMeter",
    "Limits",
    "ModelClient",
    "Price",
    "ProviderLimiter",
    "Reservation",
    "ResponseCache",
    "RetryPolicy",
    "Stopped",
    "cache_key",
    "cost_usd",
    "price_for",
    "price_key",
    "price_table",
]
