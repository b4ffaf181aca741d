"""Reply parsers: FACET v3 compatibility on every stored reply, strict problem reports, odd input."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from facetlab.probes import PROBES, parse_reply
from facetlab.probes.ablation import parse_reconstruction_reply
from facetlab.probes.parsing import (
    find_yes_no,
    parse_first_line_answer,
    parse_label_strict,
    parse_label_v3,
    parse_requirements,
    parse_weights_strict,
    parse_weights_v3,
    parse_yes_no,
)


def _weighted_files(root: Path) -> list[dict[str, Any]]:
    files = sorted((root / "results" / "weighted-probe").glob("*.json"))
    files += sorted((root / "results" / "weighted-probe" / "c2").glob("*.json"))
    return [json.loads(p.read_text(encoding="utf-8")) | {"_name": p.name} for p in files]


def _pilot_files(root: Path) -> list[dict[str, Any]]:
    return [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((root / "results").glob("*-real-*.json"))
    ]


@pytest.fixture(scope="module")
def weighted(facet_data: Path) -> list[dict[str, Any]]:
    return _weighted_files(facet_data)


# --------------------------------------------------------------------------- stored data


def test_v3_parser_reproduces_every_stored_parsed_weights(weighted: list[dict[str, Any]]) -> None:
    assert len(weighted) == 306
    for d in weighted:
        weights = parse_weights_v3(d["raw_response"], d["n_factors"])
        assert weights == d["parsed_weights"], d["_name"]
        assert list(weights) == list(d["parsed_weights"]), d["_name"]  # key order too
        assert sum(weights.values()) == d["weight_sum"], d["_name"]


def test_facet_v3_parse_reply_matches_stored_weights(weighted: list[dict[str, Any]]) -> None:
    for d in weighted:
        probe = "c2" if "c2_perturbed_factor" in d else "p2"
        inst = int(d["n_factors"])
        r = parse_reply(probe, d["raw_response"], inst, parser="facet-v3")
        assert r.weights == d["parsed_weights"], d["_name"]


def test_every_nonempty_weighted_reply_has_an_answer(weighted: list[dict[str, Any]]) -> None:
    counts: Counter[str | None] = Counter()
    for d in weighted:
        answer, _ = find_yes_no(d["raw_response"])
        counts[answer] += 1
        if d["raw_response"].strip():
            assert answer is not None, d["_name"]
    assert counts[None] == 6  # the six failed P2 runs (empty raw_response)
    assert counts["yes"] + counts["no"] == 300


def test_the_c2_file_with_prose_after_yes(weighted: list[dict[str, Any]]) -> None:
    d = next(
        x
        for x in weighted
        if x["_name"] == "facet-neg-0002-c2-f2-bedrock-deepseek.v3.2-rescued.json"
    )
    answer, problems = find_yes_no(d["raw_response"])
    assert answer == "yes" and "answer is not on the last line" in problems
    strict = parse_weights_strict(d["raw_response"], 5)
    assert strict.status == "malformed"  # second line overwrote everything with zeros
    assert "all weights are zero" in strict.problems
    assert any(p.startswith("F1 given 2 different values (30, 0)") for p in strict.problems)


def test_strict_statuses_on_stored_replies(weighted: list[dict[str, Any]]) -> None:
    statuses = Counter(
        parse_weights_strict(d["raw_response"], d["n_factors"]).status for d in weighted
    )
    assert statuses == Counter({"ok": 291, "repaired": 7, "empty": 6, "malformed": 2})
    f8 = next(
        x
        for x in weighted
        if x["_name"] == "facet-neg-0003-c2-f7-bedrock-deepseek.v3.2-20260413-133932.json"
    )
    r = parse_weights_strict(f8["raw_response"], 7)
    assert r.problems == (
        "extra factor F8 (case has F1..F7); dropped",
        "weights sum to 90 (expected 100)",
    )
    assert r.weights == f8["parsed_weights"]


def test_p1_labels_and_c0_answers_on_pilot_files(facet_data: Path) -> None:
    labels = 0
    for d in _pilot_files(facet_data):
        n = len(
            json.loads((facet_data / "instances" / f"{d['instance_id']}.json").read_text())[
                "factors"
            ]
        )
        for cond in d["conditions"].values():
            if "direct_probe_answer" in cond:
                text = cond["direct_probe_answer"]
                v3 = parse_label_v3(text)
                strict = parse_label_strict(text, n)
                if v3 is not None:
                    assert strict.label == v3 and strict.status == "ok"
                    labels += 1
                else:  # one Opus reply opens with an "Insight" block; its label is F6
                    assert strict.label == "F6" and strict.status == "repaired"
            if "answer" in cond and "direct_probe_answer" in cond:
                assert parse_first_line_answer(cond["answer"]) in ("yes", "no")
            if "reconstruction_check_answer" in cond:
                assert parse_reconstruction_reply(cond["reconstruction_check_answer"]).answer in (
                    "yes",
                    "no",
                )
    assert labels == 731


# --------------------------------------------------------------------------- strict rules


@pytest.mark.parametrize(
    ("text", "status", "problem"),
    [
        ("F1: 50, F2: 50", "ok", None),
        ("F1: 50, F2: 30", "repaired", "weights sum to 80 (expected 100)"),
        ("F1: 50.4, F2: 50", "ok", None),  # within SUM_TOLERANCE
        ("F1: 50, F2: 49", "repaired", "weights sum to 99 (expected 100)"),
        ("F1: 100", "repaired", "missing F2"),
        ("F1: 0, F2: 0", "malformed", "all weights are zero"),
        ("F1: 50, F2: 50, F3: 0", "repaired", "extra factor F3 (case has F1..F2); dropped"),
        (
            "F1: 40, F1: 60, F2: 40",
            "repaired",
            "F1 given 2 different values (40, 60); kept the last",
        ),
        (
            "**F1**: 50, **F2**: 50",
            "repaired",
            "markdown noise around weights",
        ),
        (
            "Factor 1: 50, Factor 2: 50",
            "repaired",
            "non-standard weight labels (expected 'F<i>: <weight>')",
        ),
        ("F1: -10, F2: 110", "malformed", "F1 weight -10 outside [0, 100]"),
        ("I cannot assign weights.", "malformed", "no 'F<i>: <weight>' pairs found"),
        ("   \n", "empty", "empty reply"),
    ],
)
def test_strict_weight_rules(text: str, status: str, problem: str | None) -> None:
    r = parse_weights_strict(text, 2)
    assert r.status == status, r.problems
    if problem is None:
        assert r.problems == ()
    else:
        assert problem in r.problems


def test_markdown_weights_salvaged_where_v3_misses_them() -> None:
    text = "**F1**: 70, **F2**: 30\n**No**"
    assert parse_weights_v3(text, 2) == {}
    r = parse_weights_strict(text, 2)
    assert r.weights == {"F1": 70.0, "F2": 30.0} and r.status == "repaired"


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("F1: 100\nYes", "yes"),
        ("F1: 100\n**No**", "no"),
        ("F1: 100\n**No** — the loader was not defective.", "no"),
        ("F1: 100\nNo.\n\n**Reasoning:** because F1.\n\nThe loader was fine.", "no"),
        ("F1: 100\nAnswer: yes", "yes"),
        ("F1: 100\n> *yes*", "yes"),
        ("I think the answer is no, on balance.", "no"),
        ("Nothing here", None),
        ("Nobody knows", None),
        ("", None),
    ],
)
def test_yes_no(text: str, answer: str | None) -> None:
    assert find_yes_no(text)[0] == answer
    assert parse_yes_no(text).answer == answer


@pytest.mark.parametrize(
    ("text", "label", "status"),
    [
        ("F3\nBecause.", "F3", "ok"),
        ("**F3**\nBecause.", "F3", "ok"),
        ("F3 — the threshold factor.", "F3", "ok"),
        ("Factor 3\nBecause.", "F3", "repaired"),
        ("The most important is factor 4.", "F4", "repaired"),
        ("Preamble.\n\n**F6**\nWhy.", "F6", "repaired"),
        ("F9\nOut of range.", None, "malformed"),
        ("No idea.", None, "malformed"),
        ("", None, "empty"),
    ],
)
def test_p1_label(text: str, label: str | None, status: str) -> None:
    r = parse_label_strict(text, 7)
    assert (r.label, r.status) == (label, status)


def test_requirements() -> None:
    r = parse_requirements("R1: yes\nR2: **no**\nR3: yes\nR9: no", 4)
    assert r.requirements == {"R1": "yes", "R2": "no", "R3": "yes"}
    assert r.status == "repaired"
    assert "missing R4" in r.problems and "extra requirement R9; dropped" in r.problems
    assert parse_requirements("R1: yes\nR2: no", 2).status == "ok"
    assert parse_requirements("I decline.", 2).status == "malformed"


# --------------------------------------------------------------------------- nothing raises

ODD_INPUTS: list[Any] = [
    "",
    " ",
    "\x00\x00",
    "F",
    "F:",
    "F1:",
    "F1: .",
    "F1: 1e309",
    "F99999999999999999999: 5",
    "F1: 99999999999999999999999999999999",
    "F0: 0",
    "R0: yes",
    "**",
    "```\nF1: 10\n```",
    "yes" * 1000,
    "\n" * 500,
    "F1:" * 300,
    "Factor (a) : 5",
    "F1 (gravity): 40, F2 (cost): 60",
    "🙂 F1：50，F2：50",
    "no\u200bF1: 10",
    None,
    12,
    b"F1: 10",
]


def _all_parsers(text: Any) -> None:
    parse_weights_strict(text, 3)
    parse_weights_v3(text if isinstance(text, str) else "", 3)
    find_yes_no(text)
    parse_yes_no(text)
    parse_first_line_answer(text)
    parse_label_v3(text)
    parse_label_strict(text, 3)
    parse_requirements(text, 3)
    parse_reconstruction_reply(text)
    inst = 3
    for probe in PROBES:
        for parser in ("strict", "facet-v3"):
            result = parse_reply(probe, text, inst, parser=parser)
            assert result.status in ("ok", "repaired", "malformed", "empty")
            result.to_parsed()


@pytest.mark.parametrize("text", ODD_INPUTS, ids=range(len(ODD_INPUTS)))
def test_odd_inputs_never_raise(text: Any) -> None:
    _all_parsers(text)


def test_random_replies_never_raise() -> None:
    rng = random.Random(20260413)
    alphabet = "F1234567890:=.,- \n*_#`yesnoRFactor%()" + "é—🙂\t"
    for _ in range(1500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        _all_parsers(text)
