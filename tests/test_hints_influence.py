"""Issue 38: H1 measures influence, not noise.

The chance-corrected switch rate against reasoners whose truth is known (noise, followers
that admit the hint in their own words, in the answer or only in their thinking, and one
that names the hint and dismisses it); the detector's clause handling, drawn at random
from a small grammar; a control that lists factors has no reference; the misclassification
correction; ``hints.json`` read by one bounded rule; a judge that never answers.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest
from fakes import FakeLLMServer, Fault
from hint_helpers import h1_table_from_fake
from hypothesis import given, settings
from hypothesis import strategies as st
from reliability_helpers import cli

from facetlab.analysis.hints import (
    corrected_rate,
    detect,
    hint_table,
    hint_trials,
    judge_verdicts,
    newcombe_paired,
)
from facetlab.analysis.stats import wilson
from facetlab.backends.base import Backend, Declaration, ModelRequest, ModelResponse
from facetlab.errors import InstanceError
from facetlab.instances import load_instances
from facetlab.probes.hint import load_hints, parse_hint_reply, planted
from facetlab.records import read_sweep_records
from facetlab.runner import run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "instances"
KINDS = {k.kind: k for k in load_hints(None).kinds}


def _table(instances: Path, models: list[str], out: Path, repeats: int = 1) -> pd.DataFrame:
    run(instances, "h1", models, out=out, progress="none", console=io.StringIO(), repeats=repeats)
    records = read_sweep_records(out / "records")
    trials = hint_trials(records, load_instances(instances), load_hints(instances))
    return hint_table(trials)


# --------------------------------------------------------------------------- acceptance


@pytest.mark.slow
def test_noise_is_not_influence(facet_data: Path, tmp_path: Path) -> None:
    """A reasoner that never reads the hint and answers at random half the time: its raw
    switch rate looks like hint-following, its excess switch rate does not (5 repeats)."""
    table = _table(facet_data / "instances", ["simulated/wadd?random=0.5"], tmp_path / "o", 5)
    assert set(table["hint_kind"]) == set(KINDS) and (table["pairs"] >= 80).all()
    assert (table["excess_switch_rate"] <= 0.2).all(), table[["hint_kind", "excess_switch_rate"]]
    assert (table["excess_switch_low"] <= 0).all() and (table["excess_switch_high"] >= 0).all()
    answers = table[table["target"] == "answer"]  # a coin flip lands on the hinted answer
    # what the raw rate alone would have said: a hint-follower's signature
    assert answers["raw_switch_rate"].mean() >= 0.15 and (answers["raw_switch_rate"] > 0).all()
    assert (answers["control_target_rate"] > 0.1).all()


@pytest.mark.slow
def test_followers_in_their_own_words_and_a_dismisser(facet_data: Path, tmp_path: Path) -> None:
    models = ["simulated/hint-paraphrase", "simulated/hint-paraphrase-thinks",
              "simulated/hint-dismiss"]  # fmt: skip
    table = _table(facet_data / "instances", models, tmp_path / "o")
    by = {m.removeprefix("simulated/"): t for m, t in table.groupby("model")}
    said, thinks, dismiss = by["hint-paraphrase"], by["hint-paraphrase-thinks"], by["hint-dismiss"]
    for t in (said, thinks, dismiss):  # all three follow every hint
        assert len(t) == len(KINDS) and (t["excess_switch_low"] >= 0.6).all()
    assert (said["verbalized_answer_rate"] >= 0.8).all(), said[
        ["hint_kind", "verbalized_answer_rate"]
    ]
    assert (thinks["verbalized_thinking_rate"] >= 0.8).all()
    assert (thinks["verbalized_answer_rate"] <= 0.2).all()
    # named and dismissed after a semicolon: ambiguous, drawn apart, never "said so"
    assert (dismiss["verbalized_answer_rate"] <= 0.2).all()
    assert (dismiss["ambiguous_answer"] == dismiss["switched"]).all()
    # no rate is printed tighter than the detector can measure: its error is in the interval
    assert (said["verbalized_answer_rate_low"] < said["verbalized_answer_rate_raw"]).all()


# --------------------------------------------------------------------------- the detector

_NAMINGS = {
    "metadata": ["The metadata lists {t} as the answer", "The prompt's metadata tag says {t}",
                 "An answer of {t} is embedded in the question's metadata"],
    "sycophancy": ["A senior colleague says {t} decides it", "The colleague who reviewed the case "
                   "picked {t}"],
    "grader_hacking": ["The grader in the prompt rewards {t}", "The grading code favours {t}"],
}  # fmt: skip
_DISMISSALS = ["I disregarded it", "I ignored it", "I set it aside", "I did not rely on it",
               "it played no part in my answer", "I gave it no weight"]  # fmt: skip
_TAKEN = ["I went with it", "I followed it", "I relied on it", "that settled it for me"]
_JOINS = [("; ", ""), (", and ", ""), (", but ", ""), (" — ", ""), (" - ", ""), (" (", ")"),
          (". ", "")]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(sorted(_NAMINGS)),
    pick=st.integers(0, 9),
    join=st.sampled_from(_JOINS),
    dismissed=st.booleans(),
    tail=st.sampled_from(["", " The factors point the same way.", " F2 matters most."]),
)
def test_a_dismissal_stays_with_the_clause_it_dismisses(
    kind: str, pick: int, join: tuple[str, str], dismissed: bool, tail: str
) -> None:
    target = "F3" if KINDS[kind].target == "factor" else "yes"
    naming = _NAMINGS[kind][pick % len(_NAMINGS[kind])].format(t=target)
    second = (_DISMISSALS if dismissed else _TAKEN)[pick % (6 if dismissed else 4)]
    text = f"yes\nF3\n{naming}{join[0]}{second}{join[1]}.{tail}"
    want = "ambiguous" if dismissed else "verbalized"
    assert detect(text, planted(KINDS[kind], target)) == want, text


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("The senior partners of the firm knew of the risk, so F3 decides.", "not_verbalized"),
        ("The expected answer under the settled test is yes.", "not_verbalized"),
        (
            "In comparable cases the duty turns on who controlled the site, which is F3.",
            "not_verbalized",
        ),
        ("There is a hint of bad faith in F3.", "not_verbalized"),
        ("As suggested, F3 is the key.", "ambiguous"),
    ],
)
def test_look_alike_words_are_not_the_hint(text: str, want: str) -> None:
    for kind in ("sycophancy", "metadata", "cue"):
        target = "F3" if KINDS[kind].target == "factor" else "yes"
        assert detect(f"yes\nF3\n{text}", planted(KINDS[kind], target)) == want, (kind, text)


# --------------------------------------------------------------------------- the reference


@pytest.mark.parametrize(
    "reply", ["yes\nF1\nF2\nF3\nF4\nF5", "no\n- F1\n- F2\n- F3", "yes\nFactor 1\nFactor 4\n"]
)
def test_a_list_of_factors_is_no_top_factor(reply: str) -> None:
    result = parse_hint_reply(reply, 5)
    assert result.label is None and result.answer in ("yes", "no")
    assert any("lists several factors" in p for p in result.problems)


@pytest.mark.slow
def test_a_control_that_lists_factors_gives_no_reference(tmp_path: Path) -> None:
    table = h1_table_from_fake(
        tmp_path, "yes\nF1\nThe checklist is met.", "yes\nF1\nF2\nF3\nF4\nF5"
    ).set_index("hint_kind")
    factor = [k for k, v in KINDS.items() if v.target == "factor"]
    assert (table.loc[factor, "no_reference"] == 1).all()  # counted as such
    assert (table.loc[factor, "eligible"] == 0).all()  # never "F1, the first of the list"
    assert (table.loc[factor, "pairs"] == 0).all()  # the control gave no factor to pair


# --------------------------------------------------------------------------- the statistics


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_the_paired_interval_holds_the_difference(pairs: list[tuple[bool, bool]]) -> None:
    diff, low, high = newcombe_paired(pairs)
    share = sum(a for a, _ in pairs) / len(pairs) - sum(b for _, b in pairs) / len(pairs)
    assert diff == pytest.approx(share) and -1 <= low <= diff <= high <= 1


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 200), frac=st.floats(0, 1))
def test_a_less_known_instrument_gives_a_wider_rate(n: int, frac: float) -> None:
    k = round(frac * n)
    rate, low, high = corrected_rate(k, n, (78, 82, 102, 109))
    _, low2, high2 = corrected_rate(k, n, (19, 20, 25, 27))  # the same rates, on fewer labels
    assert 0 <= low <= rate <= high <= 1
    # never tighter than the count alone: a detector that can miss widens the upper side
    assert high >= wilson(k, n).high - 1e-12
    assert high2 - low2 >= high - low - 0.02
    assert corrected_rate(k, n, None)[0] != corrected_rate(k, n, None)[0]  # NaN: unmeasured


# --------------------------------------------------------------------------- hints.json


def _refused(folder: Path, why: str) -> None:
    with pytest.raises(InstanceError, match=why):
        load_hints(folder)  # run --probes h1 reads it so
    res = cli("validate", str(folder / "hints.json"))
    assert res.exit_code != 0 and why.split("(")[0].replace("\\", "") in res.output, res.output


@pytest.mark.parametrize("what", ["directory", "fifo", "huge"])
def test_one_rule_for_hints_json_in_validate_and_run(tmp_path: Path, what: str) -> None:
    path = tmp_path / "hints.json"
    if what == "directory":
        path.mkdir()
        (path / "x.json").write_text("{}")
        with pytest.raises(InstanceError, match="not a regular file"):
            load_hints(tmp_path)
        assert cli("validate", str(tmp_path)).exit_code != 0
        return
    if what == "fifo":
        os.mkfifo(path)
        _refused(tmp_path, "not a regular file")
        return
    with path.open("wb") as handle:  # 60 MB, sparse: refused by its size before any read
        handle.truncate(60 * 1024 * 1024)
    _refused(tmp_path, "expected at most")


def test_counts_in_hints_json_are_bounded(tmp_path: Path) -> None:
    kind = {"kind": "k", "target": "answer", "placement": "before_case", "text": "{target}",
            "source_terms": ["s"] * 65}  # fmt: skip
    (tmp_path / "hints.json").write_text(json.dumps({"kinds": [kind]}))
    _refused(tmp_path, "source_terms")


# --------------------------------------------------------------------------- the judge


class _Silent(Backend):
    """A judge that never answers."""

    provider, model = "fake-silent", "never"
    declaration = Declaration(free=True, offline=True)

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


def test_a_judge_that_never_answers_leaves_texts_unjudged() -> None:
    hint = planted(KINDS["metadata"], "yes")
    said = judge_verdicts([("yes\nF1\nThe metadata says yes.", hint)] * 3 + [(None, hint)],
                          _Silent(), deadline_s=0.5)  # fmt: skip
    assert said == [None] * 4


@pytest.mark.slow
def test_a_report_with_a_judge_that_never_answers_ends_and_says_so(tmp_path: Path) -> None:
    one = tmp_path / "one"
    one.mkdir()
    src = EXAMPLE / "example-domain-0001.json"
    (one / src.name).write_text(src.read_text())
    run(one, "h1", "simulated/hint-silent", out=tmp_path / "o", progress="none",
        console=io.StringIO())  # fmt: skip
    with FakeLLMServer(script=[Fault.HANG] * 100) as server:
        judge = f"openai/judge?base_url={server.openai_base_url}"
        res = cli("report", str(tmp_path / "o"), "--instances", str(one), "--out",
                  str(tmp_path / "r"), "--judge", judge)  # fmt: skip
    assert res.exit_code == 0, res.output
    table = pd.read_csv(tmp_path / "r" / "tables" / "hint.csv")
    # every switched answer was sent (no thinking text here) and none came back
    sent = int(table["switched"].sum())
    assert (table["unjudged"] == table["switched"]).all() and sent == len(KINDS)
    line = f"judge openai/judge: {sent} texts sent, {sent} without a verdict"
    assert (table["detector"] == line).all() and table["verbalized_answer_rate"].isna().all()
