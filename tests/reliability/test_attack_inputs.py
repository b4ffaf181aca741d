"""Hostile inputs are refused in one clear line, never a hang or a traceback: sweep files
(billion laughs, recursive aliases, 100,000-deep brackets, huge numbers), the study
hand-off file (symlinks, other private files, wrong shapes), and "probe P3 absent" when
every P3 trial was excluded. Nothing runs, so nothing is paid or lost."""

from __future__ import annotations

import os
import pickle
import shutil
from pathlib import Path

import pandas as pd
import pytest
from reliability_helpers import cli

from facetlab.analysis.select import select_trials
from facetlab.errors import ConfigError, DataError
from facetlab.report.study import HANDOFF, Study, example_folders, folders_state, write_handoff
from facetlab.runner.sweepconfig import load_sweep_file

pytestmark = pytest.mark.timeout(60)  # a hang fails here; the time taken is benchmarks/'s

LAUGHS = "models: [simulated/wadd]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9 if prev else ['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)
"""Nine anchors, each nine aliases of the one before: 9**9 values once expanded."""

HOSTILE = {
    "billion laughs": (LAUGHS, r"sweep.yaml:\d+: stands for more than 100,000 values"),
    "recursive alias": ("models: &m [simulated/wadd, *m]\n", "sweep.yaml:1: a recursive alias"),
    "recursive mapping": ("a: &a {b: *a}\nmodels: [simulated/wadd]\n", "a recursive alias"),
    "deep brackets": ("[" * 100_000 + "]" * 100_000, "sweep.yaml:1: nested deeper than 100"),
    "deep mappings": ("a: " + "{b: " * 100_000 + "1" + "}" * 100_000, "nested deeper than 100"),
    "huge repeats": (
        "repeats: 99999999999999999999999999\nmodels: [simulated/wadd]\n",
        r"sweep.yaml:1: repeats: Input should be less than or equal to 100000",
    ),
    "a number of 5,000 digits": (
        "seed: " + "7" * 5000 + "\nmodels: [simulated/wadd]\n",
        "sweep.yaml: a value cannot be read: Exceeds the limit",
    ),
    "a key given twice": (
        "models: [simulated/wadd]\nrepeats: 2\nrepeats: 3\n",
        "sweep.yaml:3: 'repeats' is given twice",
    ),
}


@pytest.mark.parametrize("attack", list(HOSTILE))
def test_a_hostile_sweep_file_is_one_config_error(tmp_path: Path, attack: str) -> None:
    text, message = HOSTILE[attack]
    path = tmp_path / "sweep.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as refused:
        load_sweep_file(path)
    assert "\n" not in str(refused.value)  # one line
    assert not isinstance(refused.value.__context__, RecursionError)


@pytest.mark.slow
@pytest.mark.parametrize("attack", ["billion laughs", "deep brackets", "huge repeats"])
def test_facetlab_run_refuses_it_before_anything_runs(tmp_path: Path, attack: str) -> None:
    text, _ = HOSTILE[attack]
    path = tmp_path / "sweep.yaml"
    path.write_text(text, encoding="utf-8")
    result = cli("run", str(path), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.strip()]
    assert line.startswith(f"error: {path}") and "Traceback" not in result.output
    assert not (tmp_path / "o").exists()  # nothing ran, nothing was paid


# --------------------------------------------------------------------------- hand-off

INSTANCES, RECORDS = example_folders(Path(__file__).resolve().parents[2])


@pytest.fixture
def study_folders(tmp_path: Path) -> tuple[Path, Path]:
    return (
        shutil.copytree(INSTANCES, tmp_path / "instances"),
        shutil.copytree(RECORDS[0], tmp_path / "sweep"),
    )


def _loaded_afresh(
    folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, reason: str
) -> Study:
    """Study.load with HANDOFF set as the test left it: one warning line with ``reason``,
    then the study is read from its folders (the trials are loaded again)."""
    import facetlab.records

    loads: list[int] = []
    real = facetlab.records.load_trials

    def counting(*args: object, **kwargs: object) -> pd.DataFrame:
        loads.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(facetlab.records, "load_trials", counting)
    with pytest.warns(UserWarning, match=f"{HANDOFF}=.*refused, not read .{reason}") as caught:
        study = Study.load(*folders[:1], [folders[1]])
    refusals = [w for w in caught if HANDOFF in str(w.message)]
    assert len(refusals) == 1 and "\n" not in str(refusals[0].message)
    assert loads == [1]
    return study


def test_a_genuine_hand_off_is_used(
    study_folders: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instances, sweep = study_folders
    state = folders_state(instances, [sweep])
    study = Study.load(instances, [sweep])
    signed = write_handoff(
        study, tmp_path / "h.pickle", state, exclude_stale=False, mixed_designs=False
    )
    assert signed.endswith(str(tmp_path / "h.pickle")) and len(signed.split(":")[0]) == 64
    assert oct((tmp_path / "h.pickle").stat().st_mode & 0o777) == "0o600"
    monkeypatch.setenv(HANDOFF, signed)
    again = Study.load(instances, [sweep])
    assert again.trials.equals(study.trials)


@pytest.mark.slow
def test_a_symlink_to_a_genuine_hand_off_is_refused(
    study_folders: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instances, sweep = study_folders
    state = folders_state(instances, [sweep])
    study = Study.load(instances, [sweep])
    signed = write_handoff(
        study, tmp_path / "h.pickle", state, exclude_stale=False, mixed_designs=False
    )
    (tmp_path / "link").symlink_to(tmp_path / "h.pickle")
    monkeypatch.setenv(HANDOFF, signed.replace("h.pickle", "link"))
    _loaded_afresh(study_folders, monkeypatch, "a symlink")


class _Marker:
    """Unpickling this creates a file: proof that a hand-off was unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, ...]:
        return (Path.touch, (self.path,))


@pytest.mark.slow
@pytest.mark.parametrize("key", ["the same user's key", "no key"])
def test_another_private_file_is_never_unpickled(
    study_folders: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    marker = tmp_path / "unpickled"
    hostile = tmp_path / "hostile.pickle"
    hostile.write_bytes(b"0" * 64 + b"\n" + pickle.dumps(_Marker(marker)))
    os.chmod(hostile, 0o600)
    value = f"{'ab' * 32}:{hostile}" if key != "no key" else str(hostile)
    monkeypatch.setenv(HANDOFF, value)
    reason = "not signed" if key != "no key" else "not <key>:<file>"
    _loaded_afresh(study_folders, monkeypatch, reason)
    assert not marker.exists()


@pytest.mark.slow
def test_a_signed_file_of_the_wrong_shape_is_one_line(
    study_folders: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import facetlab.report.study as module

    real_dumps = pickle.dumps
    monkeypatch.setattr(module.pickle, "dumps", lambda obj, protocol: real_dumps(["a", "list"]))
    study = Study.load(*study_folders[:1], [study_folders[1]])
    state = folders_state(*study_folders[:1], [study_folders[1]])
    signed = write_handoff(
        study, tmp_path / "h.pickle", state, exclude_stale=False, mixed_designs=False
    )
    monkeypatch.undo()
    monkeypatch.setenv(HANDOFF, signed)
    _loaded_afresh(study_folders, monkeypatch, "not a study hand-off: a list")


# --------------------------------------------------------------------------- select


def test_a_probe_whose_trials_were_all_excluded_says_so_with_the_count() -> None:
    trials = pd.DataFrame(
        {
            "model": ["m"] * 4,
            "probe": ["P3", "P3", "P3", "P1"],
            "instance_id": ["a"] * 4,
            "excluded_reason": [
                "malformed weights: F1=-500 outside [0, 100]",
                "malformed weights: F2=1e+308 outside [0, 100]",
                "record does not match its reply: parsed.weights.F1 is 99.0, the reply says 16.0",
                None,
            ],
            "failed": [False] * 4,
        }
    )
    with pytest.raises(DataError) as refused:
        select_trials(trials, probes=["P3"])
    assert str(refused.value) == (
        "0 of 4 trials left: probe P3: all 3 trial(s) excluded (2 malformed weights; "
        "1 record does not match its reply)"
    )
    with pytest.raises(DataError, match="probe C2 absent; probes present: P1"):
        select_trials(trials, probes=["C2"])
