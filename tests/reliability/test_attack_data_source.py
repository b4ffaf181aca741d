"""``facetlab reproduce --check`` reads exactly the data the settings name and verifies it:
a mirror with one file edited and one result file duplicated fails the check, naming both
files and the claims they move, and a finding says so. The committed outputs are never
written from such data (nothing of the tree is lost)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from facetlab import datasets
from facetlab.cli import app
from facetlab.paper import reproduce as rep
from facetlab.paper.claims import AUDIT_COLUMNS
from facetlab.paper.notebooks import NotebookResult
from facetlab.paper.report import read_claims

ROOT = Path(__file__).resolve().parents[2]
P3 = "results/weighted-probe/"


def _edited_mirror(facet_data: Path, target: Path) -> tuple[Path, str, str]:
    """A mirror of symlinks to the real data, one GPT-5.4 P3 file edited (all its weight
    moved to F1) and one copied under a new name; the two names."""
    for name in datasets.registry():
        link = target / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(facet_data / name)
    for extra in ("reference", "LICENSE-DATA", "PROVENANCE.md"):
        if (facet_data / extra).exists():
            (target / extra).symlink_to(facet_data / extra)
    gpt = sorted(
        n
        for n in datasets.registry()
        if n.startswith(P3 + "facet-neg-cf-001-adv-") and "gpt" in n and n.count("/") == 2
    )
    edited, copied = gpt[0], gpt[1]
    data = json.loads((facet_data / edited).read_text(encoding="utf-8"))
    data["parsed_weights"] = {
        k: (0.0 if k == "F1" else v) for k, v in data["parsed_weights"].items()
    }
    (target / edited).unlink()
    (target / edited).write_text(json.dumps(data), encoding="utf-8")
    duplicate = copied.replace(".json", "-copy.json")
    (target / duplicate).write_bytes((facet_data / copied).read_bytes())
    return target, edited, duplicate


def test_check_names_the_edited_and_the_duplicated_file(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's own part, with the notebooks replaced by a claims file that moved."""
    mirror, edited, duplicate = _edited_mirror(facet_data, tmp_path / "mirror")
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(mirror))
    committed = rep.committed_claims(ROOT)
    moved = next(r for r in committed if r["status"] == "PASS" and r["kind"] == "data")
    seen: dict[str, object] = {}

    def notebooks(**kwargs: object) -> list[NotebookResult]:
        layout, params, data = kwargs["layout"], kwargs["parameters"], kwargs["data"]
        assert isinstance(layout, rep.Layout) and isinstance(params, dict)
        seen.update(layout=layout, params=params)
        rows = [dict(r) for r in committed]
        for row in rows:
            if row["id"] == moved["id"]:
                row.update(status="MISMATCH", computed_value="17")
        layout.paper.mkdir(parents=True, exist_ok=True)
        with (layout.paper / "claims.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(AUDIT_COLUMNS))
            writer.writeheader()
            writer.writerows(rows)
        finding = rep.add_data_finding(layout.paper / "claims.csv", data, ROOT)  # type: ignore[arg-type]
        seen["finding"] = finding
        return [NotebookResult("x", Path("x"), Path("y"), True, 0.1)]

    monkeypatch.setattr(rep, "reproduce", notebooks)
    result = CliRunner().invoke(app, ["reproduce", "--check", "--root", str(ROOT)])
    assert result.exit_code == 1, result.output
    out = result.output
    assert f"FACET data: {mirror} (FACETLAB_DATA_MIRROR, read in place)" in out
    assert f"altered: {edited}" in out
    assert f"not in the registry: {duplicate} (a copy of " in out
    assert f"  {moved['id']}: PASS " in out and "-> MISMATCH 17" in out
    assert "check: the data read is not the pinned data" in out
    # read in place, as it is (never the cache, never repaired), outputs under _build/check/
    layout = seen["layout"]
    assert isinstance(layout, rep.Layout) and not layout.committed
    assert str(layout.tag).startswith("data_dir-") and layout.paper.is_relative_to(ROOT / "_build")
    assert seen["params"]["data_dir"] == str(mirror)  # type: ignore[index]
    finding = seen["finding"]
    assert isinstance(finding, dict) and finding["claims"] == moved["id"]
    assert edited in finding["summary"] and duplicate in finding["summary"]
    first = read_claims(layout.paper / "findings.csv")[0]
    assert first["id"] == "data-not-pinned" and first["severity"] == "number"


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_reproduce_check_on_an_edited_mirror_end_to_end(facet_data: Path, tmp_path: Path) -> None:
    mirror, edited, duplicate = _edited_mirror(facet_data, tmp_path / "mirror")
    status = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"],
                            capture_output=True, text=True, check=False).stdout  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", "from facetlab.cli import main; main()", "reproduce", "--check"],
        cwd=ROOT,
        env={**os.environ, "FACETLAB_DATA_MIRROR": str(mirror)},
        capture_output=True,
        text=True,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert f"altered: {edited}" in out and f"not in the registry: {duplicate}" in out
    assert "claim(s) differ from the committed paper/claims.csv" in out
    tag = rep.run_tag({"data_dir": str(mirror)})
    folder = ROOT / "_build" / "check" / str(tag)
    finding = read_claims(folder / "findings.csv")[0]
    assert finding["id"] == "data-not-pinned" and len(finding["claims"].split()) >= 1
    assert edited in finding["summary"] and duplicate in finding["summary"]
    report = (folder / "REPRODUCTION.md").read_text(encoding="utf-8")
    assert "**not the pinned data**" in report and "The data read is not the pinned" in report
    after = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"],
                           capture_output=True, text=True, check=False).stdout  # fmt: skip
    assert after == status  # nothing committed was rewritten
