"""Hostile Inspect logs: ``import-inspect`` bounds what it reads and checks before writing.

Issue 23's battery: an ``.eval`` zip bomb of 1.6 MB took 3.25 GB, a 1 GB ``.json`` log
4.3 GB, badly typed sample metadata gave a raw TypeError/MemoryError, and a log with a
``../`` id was refused only after records were written. Each is refused here with one
line, before anything is written.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="needs the inspect extra: pip install -e '.[dev,inspect]'")

from inspect_helpers import p3_meta, write_p3_log

from facetlab.errors import RecordError
from facetlab.interop.logfile import LogLimits
from facetlab.interop.logs import import_logs

BIN = Path(sys.executable).parent
MIB = 2**20


def _refused(paths: list[Path], out: Path, match: str, **kw: Any) -> str:
    with pytest.raises(RecordError, match=match) as caught:
        import_logs(paths, out, **kw)
    message = str(caught.value)
    assert "\n" not in message, message  # one line
    assert not out.exists() or not any(out.rglob("*.json")), "a refused import wrote files"
    return message


def _bomb(path: Path, inflated_mib: int, member: str = "samples/s0_epoch_1.json") -> Path:
    """An .eval whose one member inflates to ``inflated_mib`` MiB of spaces."""
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open(member, "w", force_zip64=True) as stream,
    ):
        block = b" " * MIB
        for _ in range(inflated_mib):
            stream.write(block)
    return path


def test_an_eval_member_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    bomb = _bomb(tmp_path / "bomb.eval", 8)
    assert bomb.stat().st_size < 64 * 1024  # a few KB that inflate to 8 MiB
    message = _refused(
        [bomb], tmp_path / "out", "over the limit", limits=LogLimits(max_member_bytes=4 * MIB)
    )
    assert "bomb.eval" in message and "samples/s0_epoch_1.json" in message


def test_an_eval_with_too_many_members_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "many.eval"
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(50):
            archive.writestr(f"samples/{i}.json", "{}")
    _refused([path], tmp_path / "out", "member count", limits=LogLimits(max_members=20))


def test_a_json_log_over_the_size_limit_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(1024 * MIB)  # 1 GiB, sparse: no disk used, never read
    message = _refused([big], tmp_path / "out", "file size 1024.0 MB is over the limit")
    assert "--max-log-mb" in message


def test_a_corrupt_eval_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.eval"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    _refused([bad], tmp_path / "out", "not a readable Inspect log")


@pytest.mark.slow
def test_a_zip_bomb_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    # ~1 MB on disk, 1 GiB inflated: the default limits refuse it by its declared size and
    # the importer's peak memory stays far below what inflating it would take.
    bomb = _bomb(tmp_path / "bomb.eval", 1024)
    assert bomb.stat().st_size < 2 * MIB
    code = (
        "import resource, sys\n"
        "from facetlab.errors import RecordError\n"
        "from facetlab.interop.logs import import_logs\n"
        "try:\n"
        f"    import_logs([{str(bomb)!r}], {str(tmp_path / 'out')!r})\n"
        "except RecordError as exc:\n"
        "    print(exc)\n"
        # VmHWM is this process's own peak: ru_maxrss also keeps the peak of the process
        # it was forked from (pytest's, hundreds of MB late in a full run)
        "status = open('/proc/self/status').read().split('VmHWM:')\n"
        "hwm = status[1].split()[0] if len(status) > 1 else None\n"
        "print(hwm or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    message, peak_kib = done.stdout.strip().splitlines()
    assert "over the limit" in message
    assert int(peak_kib) < 600 * 1024, f"peak RSS {int(peak_kib) // 1024} MiB"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0


@pytest.mark.parametrize("ext", ["eval", "json"])
@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"instance_id": "../escape"}, r"instance_id is '\.\./escape': contains '/'"),
        ({"instance_id": ".."}, "starts with '.'"),
        ({"instance_id": 7}, "instance_id is 7: Input should be a valid string"),
        ({"base_instance_id": "a\\b"}, "base_instance_id is 'a\\\\\\\\b': contains"),
        ({"n_factors": "3"}, "n_factors is '3': Input should be a valid integer"),
        ({"n_factors": 10**12}, "n_factors is 1000000000000: Input should be less than or equal"),
        ({"n_factors": True}, "n_factors is True"),
        (
            {"weight_estimates": [1, 2]},
            "weight_estimates is \\[1, 2\\]: Input should be a valid dict",
        ),
        (
            {"weight_estimates": {"F1": "x"}},
            "weight_estimates.F1 is 'x': Input should be a valid number",
        ),
        ({"factor_of_interest": {"a": 1}}, "factor_of_interest is"),
        ({"prompt_sha256": None}, "prompt_sha256 is None"),
        ({"variant": ["a"]}, "variant is"),
        ({"ground_truth": 1}, "ground_truth is 1"),
        ({"probe": ["p3"]}, r"probe is \['p3'\]"),
    ],
)
def test_badly_typed_or_unsafe_metadata_is_one_line_and_writes_nothing(
    tmp_path: Path, ext: str, changes: dict[str, Any], match: str
) -> None:
    good = write_p3_log(str(tmp_path / f"good.{ext}"), [p3_meta()])
    bad = write_p3_log(str(tmp_path / f"bad.{ext}"), [p3_meta("y-adv"), p3_meta(**changes)])
    message = _refused([Path(good), Path(bad)], tmp_path / "out", match)
    assert f"bad.{ext}: sample 's1'" in message


def test_negative_token_usage_is_refused(tmp_path: Path) -> None:
    bad = write_p3_log(str(tmp_path / "bad.json"), [p3_meta()], output_tokens=-41800)
    _refused([Path(bad)], tmp_path / "out", "usage.output_tokens is -41800")


def test_a_good_log_still_imports(tmp_path: Path) -> None:
    path = write_p3_log(str(tmp_path / "ok.eval"), [p3_meta(), p3_meta("y-adv")])
    result = import_logs([path], tmp_path / "out")
    assert result.records == 2 and result.unparsed == 0
    assert sorted(p.name.split(".")[1] for p in (tmp_path / "out" / "records").iterdir()) == [
        "x-cf-001-adv",
        "y-adv",
    ]
