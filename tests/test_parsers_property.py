"""Property tests (hypothesis): parsers never raise and agree with their own rules."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from facetlab.probes import PROBES, parse_reply  # noqa: E402
from facetlab.probes.parsing import (  # noqa: E402
    SUM_TOLERANCE,
    find_yes_no,
    parse_label_strict,
    parse_requirements,
    parse_weights_strict,
    parse_weights_v3,
)

FAST = settings(max_examples=200, deadline=None)
replies = st.text(alphabet=st.sampled_from([*"F0123456789:=., \n*_`#yesnoR-%()Factor", "🙂", "—"]))


@FAST
@given(text=st.one_of(st.text(), replies), n=st.integers(min_value=1, max_value=12))
def test_no_parser_raises(text: str, n: int) -> None:
    inst = n
    for probe in PROBES:
        for parser in ("strict", "facet-v3"):
            r = parse_reply(probe, text, inst, parser=parser)
            assert r.status in ("ok", "repaired", "malformed", "empty")
    find_yes_no(text)
    parse_label_strict(text, n)
    parse_requirements(text, n)


@FAST
@given(text=replies, n=st.integers(min_value=1, max_value=12))
def test_weights_stay_in_range(text: str, n: int) -> None:
    allowed = {f"F{i}" for i in range(1, n + 1)}
    assert set(parse_weights_v3(text, n)) <= allowed
    r = parse_weights_strict(text, n)
    assert set(r.weights or {}) <= allowed
    if r.status == "ok":
        assert r.weights is not None and len(r.weights) == n and not r.problems
        assert abs(sum(r.weights.values()) - 100) <= SUM_TOLERANCE


@FAST
@given(weights=st.lists(st.integers(min_value=0, max_value=100), min_size=1, max_size=10))
def test_well_formed_lines_round_trip(weights: list[int]) -> None:
    n = len(weights)
    line = ", ".join(f"F{i}: {w}" for i, w in enumerate(weights, start=1))
    text = f"{line}\nNo"
    expected = {f"F{i}": float(w) for i, w in enumerate(weights, start=1)}
    assert parse_weights_v3(text, n) == expected
    r = parse_weights_strict(text, n)
    assert r.weights == expected
    if sum(weights) == 100:
        assert r.status == "ok"
    else:
        assert r.status in ("repaired", "malformed") and r.problems
    assert find_yes_no(text)[0] == "no"
