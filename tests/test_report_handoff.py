"""The study `facetlab report` loads is handed to its notebook kernel (one load, not
two), and only while the arguments and every file under the folders are the same."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import facetlab.records
from facetlab.errors import DataError
from facetlab.report.study import HANDOFF, Study, example_folders, folders_state, write_handoff

ROOT = Path(__file__).resolve().parents[1]
INSTANCES, RECORDS = example_folders(ROOT)

pytestmark = pytest.mark.slow


@pytest.fixture
def handed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Study]:
    """A copy of the example domain, its study written as a handoff, HANDOFF set."""
    instances = shutil.copytree(INSTANCES, tmp_path / "instances")
    sweep = shutil.copytree(RECORDS[0], tmp_path / "sweep")
    state = folders_state(instances, [sweep])
    study = Study.load(instances, [sweep])
    path = tmp_path / "study.pickle"
    signed = write_handoff(study, path, state, exclude_stale=False, mixed_designs=False)
    monkeypatch.setenv(HANDOFF, signed)
    return instances, sweep, study


def _no_load(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the trials were loaded again")

    monkeypatch.setattr(facetlab.records, "load_trials", refuse)


def test_same_arguments_take_the_handed_off_study(
    handed: tuple[Path, Path, Study], monkeypatch: pytest.MonkeyPatch
) -> None:
    instances, sweep, study = handed
    _no_load(monkeypatch)
    again = Study.load(str(instances), [str(sweep)])
    assert again.trials.equals(study.trials)
    assert again.trials.attrs == study.trials.attrs
    for name, section in study.sections.items():
        assert section.table is not None and again.sections[name].table is not None
        assert again.sections[name].table.equals(section.table)


@pytest.mark.parametrize("change", ["threshold", "models", "exclude_stale"])
def test_other_arguments_load_afresh(
    handed: tuple[Path, Path, Study], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    instances, sweep, study = handed
    _no_load(monkeypatch)
    model = str(study.trials["model"].iloc[0])
    kwargs = {"threshold": {"threshold": 20}, "models": {"models": [model]}}.get(
        change, {"exclude_stale": True}
    )
    with pytest.raises(AssertionError, match="loaded again"):
        Study.load(instances, [sweep], **kwargs)  # type: ignore[arg-type]


def test_an_edited_instance_is_checked_again(handed: tuple[Path, Path, Study]) -> None:
    instances, sweep, _ = handed
    edited = instances / "example-domain-0001-cf.json"
    data = json.loads(edited.read_text())
    data["factors"][0]["directionality"] = "toward_observation"
    data["factors"][1]["directionality"] = "neutralized"
    edited.write_text(json.dumps(data, indent=2))
    # a fresh load, not the handed-off study: the stale check applies
    with pytest.raises(DataError, match="stale trial"):
        Study.load(instances, [sweep])


def test_a_new_record_file_is_not_missed(
    handed: tuple[Path, Path, Study], monkeypatch: pytest.MonkeyPatch
) -> None:
    instances, sweep, _ = handed
    (sweep / "records" / "extra.txt").write_text("x")
    _no_load(monkeypatch)
    with pytest.raises(AssertionError, match="loaded again"):
        Study.load(instances, [sweep])


def test_a_file_others_may_write_is_not_read(
    handed: tuple[Path, Path, Study], monkeypatch: pytest.MonkeyPatch
) -> None:
    instances, sweep, _ = handed
    os.chmod(os.environ[HANDOFF].partition(":")[2], 0o666)
    _no_load(monkeypatch)
    with (
        pytest.warns(UserWarning, match="refused, not read .not a private regular file"),
        pytest.raises(AssertionError, match="loaded again"),
    ):
        Study.load(instances, [sweep])
