"""A record edited by hand is named when loaded and excluded (counted), never silently
used; a record written before the digest still loads, said once. Every trial stays a row:
nothing is lost, and the sweep is free (simulated), so nothing is paid."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from reliability_helpers import cli

from facetlab.errors import RecordWarning
from facetlab.records import load_trials
from facetlab.records.compaction import compact
from facetlab.records.received import EDITED, received_digest
from facetlab.records.schema import TrialRecord

pytestmark = pytest.mark.slow  # a sweep (a subprocess-free CLI run of ~40 trials)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A free sweep of the example domain: P1, P2, P3 and C2 with the simulated reasoner."""
    out = tmp_path_factory.mktemp("sweep") / "s"
    result = cli(
        "run", "-i", str(ROOT / "instances"), "-p", "p1,p2,p3,c2", "-m", "simulated/wadd",
        "-k", "2", "--out", str(out), "--quiet",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def _copy(sweep: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    (target / "records").mkdir(parents=True)
    for path in (sweep / "records").glob("*.json"):
        (target / "records" / path.name).write_bytes(path.read_bytes())
    return target


def _p3(folder: Path) -> tuple[Path, dict[str, object]]:
    path = sorted((folder / "records").glob("p3.*.json"))[0]
    return path, json.loads(path.read_text(encoding="utf-8"))


def _load(folder: Path) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = load_trials(records=folder)
    return frame, [str(w.message) for w in caught if issubclass(w.category, RecordWarning)]


def test_every_record_of_a_sweep_proves_itself(sweep: Path) -> None:
    frame, said = _load(sweep)
    assert frame.attrs["edited"] == [] and frame.attrs["undigested"] == 0  # type: ignore[attr-defined]
    assert said == []


@pytest.mark.parametrize("forger", ["edits the parse", "also recomputes the digest"])
def test_a_parse_edited_by_hand_is_named_and_excluded(
    sweep: Path, tmp_path: Path, forger: str
) -> None:
    folder = _copy(sweep, tmp_path)
    path, data = _p3(folder)
    weights = data["parsed"]["weights"]  # type: ignore[index]
    foi = str(data["factor_of_interest"])
    said_by_reply = weights[foi]
    assert f"{foi}: {said_by_reply:g}" in str(data["raw_response"])
    weights[foi] = 99.0  # the reply still says the old number
    if forger == "also recomputes the digest":
        data["received_sha256"] = received_digest(TrialRecord.model_validate(data))
    path.write_text(json.dumps(data), encoding="utf-8")

    frame, said = _load(folder)
    row = frame[frame["trial_id"] == data["trial_id"]].iloc[0]  # type: ignore[index]
    expected = f"parsed.weights.{foi} is 99.0, the reply says {float(said_by_reply)}"
    assert row["excluded_reason"] == EDITED + expected
    assert row["weights"] is None and row["foi_weight"] != row["foi_weight"]  # NaN: never used
    assert frame.attrs["edited"] == [(str(path), EDITED + expected)]  # type: ignore[attr-defined]
    (line,) = [s for s in said if "do not match" in s]
    assert str(path) in line and "excluded" in line and "\n" not in line
    assert len(frame) == len(list((folder / "records").glob("*.json")))  # nothing lost
    # the study tables never see it: the P3 cell mean is the reply's, not 99
    usable = frame[frame["excluded_reason"].isna() & (frame["probe"] == "P3")]  # type: ignore[index]
    assert 99.0 not in set(usable["foi_weight"])


def test_a_reply_edited_with_its_parse_is_caught_by_the_digest(sweep: Path, tmp_path: Path) -> None:
    folder = _copy(sweep, tmp_path)
    path, data = _p3(folder)
    foi = str(data["factor_of_interest"])
    old = data["parsed"]["weights"][foi]  # type: ignore[index]
    data["raw_response"] = str(data["raw_response"]).replace(f"{foi}: {old:g}", f"{foi}: 99")
    data["parsed"]["weights"][foi] = 99.0  # type: ignore[index]
    path.write_text(json.dumps(data), encoding="utf-8")
    frame, _ = _load(folder)
    (name, reason) = frame.attrs["edited"][0]  # type: ignore[attr-defined]
    assert name == str(path) and "received_sha256 differs" in reason


def test_an_edit_is_kept_excluded_through_compaction(sweep: Path, tmp_path: Path) -> None:
    folder = _copy(sweep, tmp_path)
    path, data = _p3(folder)
    data["parsed"]["weights"][str(data["factor_of_interest"])] = 99.0  # type: ignore[index]
    path.write_text(json.dumps(data), encoding="utf-8")
    done = compact(folder)
    assert done.part is not None and done.records == len(list(sweep.glob("records/*.json")))
    frame, _ = _load(folder)
    ((shown, reason),) = frame.attrs["edited"]  # type: ignore[attr-defined]
    assert shown == str(done.part) and reason.startswith(EDITED)


def test_records_written_before_the_digest_load_and_are_said_once(
    sweep: Path, tmp_path: Path
) -> None:
    folder = _copy(sweep, tmp_path)
    files = sorted((folder / "records").glob("*.json"))
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        del data["received_sha256"]
        path.write_text(json.dumps(data), encoding="utf-8")
    frame, said = _load(folder)
    assert frame.attrs["undigested"] == len(files) and frame.attrs["edited"] == []  # type: ignore[attr-defined]
    assert len([s for s in said if "carry no digest" in s]) == 1
    assert frame["excluded_reason"].isna().all()  # type: ignore[index]


def test_the_digest_moves_with_an_edited_parse() -> None:
    record = TrialRecord(
        trial_id="t", probe="p2", instance_id="i", n_factors=2, model="m", provider="p",
        model_id="m", backend="b", template="facet-v3", prompt="", prompt_sha256="",
        status="ok", raw_response="F1: 16\nF2: 84\nno", started_at="", finished_at="",
        facetlab_version="0",
    )  # fmt: skip
    record.received_sha256 = received_digest(record)
    record.parsed.weights = {"F1": 99.0}
    assert received_digest(record) != record.received_sha256
