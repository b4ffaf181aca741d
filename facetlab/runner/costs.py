"""What a sweep would cost before it runs: trials still to call, tokens and USD.

Tokens are estimated as prompt characters / 4 (plus the system prompt); replies as
a typical length per probe, capped at ``max_tokens``, with the worst case (every
reply at ``max_tokens``) beside it. Prices come from :mod:`facetlab.client.pricing`.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from facetlab.client.cache import ResponseCache
from facetlab.client.pricing import cost_usd, estimate_tokens
from facetlab.errors import BudgetExceededError
from facetlab.runner.executor import existing_status, keeps_record
from facetlab.runner.plan import Plan, Trial

# Rough reply lengths per probe, for estimates only (a weight line plus yes/no is ~30
# tokens; models that reason first write several hundred). Capped at max_tokens.
EXPECTED_OUTPUT_TOKENS: dict[str, int] = {
    "p1": 150,
    "p2": 150,
    "p3": 150,
    "c2": 150,
    "anchor": 150,
    "c0": 400,
    "c3": 300,
    "h1": 250,  # yes/no, a label and a short explanation
    "cot": 250,  # a few sentences of reasoning and an answer line
    "cotx": 20,  # the answer line after the quoted reasoning
}


@dataclass(frozen=True)
class Estimate:
    """What a sweep would cost before it runs."""

    trials: int
    pending: int
    """Trials without a record to keep."""
    cached: int
    """Pending trials whose answer is already in the cache (free)."""
    to_call: int
    input_tokens: int
    output_tokens: int
    """Expected output tokens (rough per-probe reply lengths)."""
    max_output_tokens: int
    """Worst case: every reply runs to max_tokens."""
    cost_usd: float | None
    """Expected USD of the calls still to make; None when a model has no price."""
    max_cost_usd: float | None
    unpriced_models: tuple[str, ...]
    per_model: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass
class _ModelTokens:
    """Running token totals of one model's calls (for :func:`estimate`)."""

    calls: int = 0
    input: int = 0
    output: int = 0
    """Expected output tokens."""
    max_output: int = 0


def expected_input_tokens(trial: Trial) -> int:
    """The input an estimate assumes: the prompt plus the system prompt (chars/4)."""
    system = trial.params.system
    return estimate_tokens(trial.prompt) + (estimate_tokens(system) if system else 0)


def expected_output_tokens(trial: Trial) -> int:
    """The reply length an estimate assumes: the probe's typical length, capped at max_tokens.

    A model asked to reason (``effort``, ``thinking`` other than off) may spend the whole
    limit thinking first: its expected reply is ``max_tokens``.
    """
    if trial.params.reasoning:
        return trial.params.max_tokens
    return min(trial.params.max_tokens, EXPECTED_OUTPUT_TOKENS.get(trial.probe, 300))


def estimate(
    trials: Iterable[Trial],
    *,
    out: Path | None,
    cache_dir: Path | None = None,
    retry_errors: bool = False,
    batch: bool = False,
) -> Estimate:
    """Tokens and USD of the trials still to run (chars/4 tokens; price table).

    ``out=None`` (a dry run without a sweep folder) counts every trial as pending.
    """
    have = existing_status(out) if out is not None else {}
    cache_path = cache_dir or (out / "cache" if out is not None else None)
    cache = ResponseCache(cache_path) if cache_path is not None else None
    # One pass, nothing kept per trial: a plan builds its trials as it is iterated.
    total = pending = to_call = 0
    tokens: dict[str, _ModelTokens] = {}  # per model; each model is priced once, on its totals
    endpoints: dict[str, str | None] = {}
    for t in trials:
        total += 1
        if keeps_record(have.get(t.trial_id), retry_errors=retry_errors):
            continue
        pending += 1
        if cache is not None and t.key in cache:
            continue
        to_call += 1
        endpoints[t.model] = t.endpoint
        entry = tokens.setdefault(t.model, _ModelTokens())
        entry.calls += 1
        entry.input += expected_input_tokens(t)
        entry.output += expected_output_tokens(t)
        entry.max_output += t.params.max_tokens
    per_model: dict[str, dict[str, float]] = {}
    unpriced: list[str] = []
    cost = max_cost = 0.0
    for model, entry in tokens.items():
        where = endpoints.get(model)
        expected = cost_usd(model, entry.input, entry.output, batch=batch, endpoint=where)
        worst = cost_usd(model, entry.input, entry.max_output, batch=batch, endpoint=where)
        per_model[model] = {
            "trials": entry.calls,
            "input_tokens": entry.input,
            "cost_usd": expected or 0.0,
        }
        if expected is None or worst is None:
            unpriced.append(model)
            continue
        cost += expected
        max_cost += worst
    return Estimate(
        trials=total,
        pending=pending,
        cached=pending - to_call,
        to_call=to_call,
        input_tokens=sum(e.input for e in tokens.values()),
        output_tokens=sum(e.output for e in tokens.values()),
        max_output_tokens=sum(e.max_output for e in tokens.values()),
        cost_usd=None if unpriced else cost,
        max_cost_usd=None if unpriced else max_cost,
        unpriced_models=tuple(sorted(unpriced)),
        per_model=per_model,
    )


def _fmt_usd(value: float | None) -> str:
    return "unknown (no price)" if value is None else f"${value:,.4f}"


def describe_plan(plan: Plan, est: Estimate, *, verbose_skips: bool = True) -> str:
    """The text ``--dry-run`` prints (and a normal run prints before starting)."""
    lines = [
        f"trials: {est.trials} ({', '.join(f'{k.upper()} {v}' for k, v in plan.by_probe().items())})",
        f"to run: {est.pending} (already recorded: {est.trials - est.pending}; "
        f"answered from cache: {est.cached}; calls to make: {est.to_call})",
        f"estimated tokens: {est.input_tokens:,} in + {est.output_tokens:,} out "
        f"(worst case {est.max_output_tokens:,} out; chars/4 heuristic)",
        f"estimated cost: {_fmt_usd(est.cost_usd)} (worst case {_fmt_usd(est.max_cost_usd)})",
    ]
    for model, entry in sorted(est.per_model.items()):
        lines.append(
            f"  {model}: {int(entry['trials'])} calls, ~{int(entry['input_tokens']):,} input tokens, "
            f"{_fmt_usd(entry['cost_usd']) if model not in est.unpriced_models else 'no price'}"
        )
    if est.unpriced_models:
        lines.append(
            "no price for: " + ", ".join(est.unpriced_models) + " (set FACETLAB_PRICES to add one)"
        )
    if plan.skipped and verbose_skips:
        by_probe: dict[str, list[str]] = {}
        why: dict[str, str] = {}
        for s in plan.skipped:
            by_probe.setdefault(s.probe, []).append(s.instance_id)
            # the reason's rule (before "; this one is ...") is the same for every instance
            why.setdefault(s.probe, s.reason.split(";", 1)[0])
        for probe, ids in by_probe.items():
            lines.append(
                f"skipped {probe.upper()} on {len(ids)} instance(s) ({why[probe]}): {', '.join(ids)}"
            )
    return "\n".join(lines)


def refuse_over_budget(est: Estimate, budget_usd: float) -> None:
    """A BudgetExceededError when the estimate is over the budget or cannot be priced."""
    if est.cost_usd is None:
        raise BudgetExceededError(
            f"--budget-usd {budget_usd}: no price for {', '.join(est.unpriced_models)}; "
            "cannot check the budget (add a price with FACETLAB_PRICES)"
        )
    if est.cost_usd > budget_usd:
        raise BudgetExceededError(
            f"estimated cost {_fmt_usd(est.cost_usd)} exceeds --budget-usd ${budget_usd:,.4f}; "
            "not starting (raise the budget or run fewer trials)"
        )
