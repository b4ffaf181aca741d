"""``facetlab profile``: the dry run's estimate per family without a key, the acceptance
figures on the FACET instances for the simulated reasoners of known dependence, and the
page in headless Chromium (one section per family, no script, no console error)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from facetlab.cli import app
from facetlab.commands.profile import FAMILIES, READING, _craft, _validity, profile_html, readings

CHROMIUM = "/usr/bin/chromium"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL")


def test_dry_run_prints_each_family_without_a_key(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    out = tmp_path / "profile"
    result = CliRunner().invoke(
        app, ["profile", "openai/gpt-4o-mini", "--dry-run", "--instances",
              str(facet_data / "instances"), "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    calls = dict(re.findall(r"^([a-z ()]+): (\d+) calls", result.output, re.MULTILINE))
    total = int(calls.pop("total"))
    assert set(calls) == {*FAMILIES, "reasoning interventions (cotx)", "craft"}
    assert total == sum(int(n) for n in calls.values())
    assert int(calls["reasoning interventions (cotx)"]) >= 4 * int(calls["reasoning"]) > 0
    assert int(calls["stated"]) > 0 and int(calls["hint"]) > 0
    # CRAFT rehearsed offline: 3 instances, two calls (P1, P2) per agent run
    assert int(calls["craft"]) > 3 * 2 * 20
    assert "$" in result.output and not out.exists()  # priced, and nothing was written


def test_budget_refuses_before_any_call(
    facet_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the summed estimate of every family (CRAFT included) must fit the budget; no key
    # is needed to be refused, and nothing is written
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    out = tmp_path / "profile"
    args = ["profile", "openai/gpt-4o-mini", "--instances", str(facet_data / "instances")]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--budget-usd", "0.05"])
    assert result.exit_code != 0 and "exceeds --budget-usd" in result.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("model", "verdict"), [("wadd+canonical", "theater"), ("wadd", "faithful")]
)
def test_craft_family_runs_the_model_as_an_agent(
    facet_data: Path, model: str, verdict: str
) -> None:
    # wadd+canonical cites the factor each counterfactual neutralized (theater); wadd
    # cites the factor that moves it
    craft = _craft(f"simulated/{model}", facet_data / "instances", 3, None, _validity(None)[1])
    assert craft["verdict"] == verdict and len(craft["instances"]) == 3
    assert all(
        i["agent_calls"] > 0 and i["failed_samples"] == 0 for i in craft["instances"].values()
    )
    assert craft["validity"] != "none"  # the matrix's CRAFT column is quoted beside it


def _profile(model: str, instances: Path, out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(
        app, ["profile", model, "--instances", str(instances), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    profile: dict[str, Any] = json.loads((out / "profile.json").read_text())
    return profile


@pytest.fixture(scope="module")
def profiles(facet_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("profiles")
    for mode in ("decorative", "dependent"):
        _profile(f"simulated/wadd+cot-{mode}", facet_data / "instances", root / mode)
    return {mode: root / mode for mode in ("decorative", "dependent")}


@pytest.mark.slow
def test_acceptance_figures_on_facet(profiles: dict[str, Path]) -> None:
    got = {m: json.loads((p / "profile.json").read_text()) for m, p in profiles.items()}
    dec, dep = got["decorative"]["reasoning"], got["dependent"]["reasoning"]
    assert dec["aoc"] <= 0.1 and dec["mistake_flip_rate"] <= 0.1
    assert dep["aoc"] >= 0.8 and dep["mistake_flip_rate"] >= 0.8
    for profile in got.values():
        assert profile["craft"]["verdict"] in (
            "faithful",
            "inconclusive",
        )  # both cite causal factors
        assert profile["craft"]["faithful_rate_n"] == 3
        hint = profile["hint"]
        assert ("excess_switch_rate" in hint) or ("switch_rate" in hint)
        assert set(profile["stated"]) == {"p1", "p2", "p3", "c2", "validity_from"}
        assert profile["reasoning"]["references"]["dependent"]["aoc"] >= 0.8


def test_page_escapes_data_and_has_one_section_per_family() -> None:
    family = {"x": "<script>alert(1)</script>", "n": 0.123456}
    page = profile_html({"model": "<b>m</b>", **{f: family for f in READING}})
    assert "<script" not in page and "&lt;script&gt;" in page and "0.123" in page
    assert page.count("<section") == len(READING) == 4


@pytest.mark.slow
def test_profile_page_in_headless_chromium(profiles: dict[str, Path]) -> None:
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"{CHROMIUM} absent (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    messages: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])  # fmt: skip
        try:
            page = browser.new_page()
            page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
            page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
            page.goto((profiles["dependent"] / "profile.html").as_uri())
            sections = page.eval_on_selector_all("section", "s => s.map(x => x.id)")
            scripts = page.eval_on_selector_all("script", "s => s.length")
            text = page.inner_text("#reasoning")
        finally:
            browser.close()
    assert sections == list(READING) and scripts == 0
    assert [m for m in messages if m.startswith(("error", "pageerror"))] == []
    assert re.search(r"\baoc\s+0\.[89]\d\d", text), text


@pytest.mark.slow
def test_profile_notebook_runs_under_papermill(facet_data: Path, tmp_path: Path) -> None:
    # the notebook is the command cell by cell: the same profile.json, each family shown
    papermill = pytest.importorskip("papermill")
    out = tmp_path / "profile"
    done = papermill.execute_notebook(
        str(Path(__file__).resolve().parents[1] / "notebooks" / "profile.ipynb"),
        str(tmp_path / "out.ipynb"),
        parameters={"model": "simulated/wadd+cot-decorative", "out_dir": str(out),
                    "instances": str(facet_data / "instances"), "craft_instances": 2},
        progress_bar=False, kernel_name="python3", cwd=str(tmp_path),
    )  # fmt: skip
    profile = json.loads((out / "profile.json").read_text())
    assert profile["reasoning"]["aoc"] <= 0.1 and len(profile["craft"]["instances"]) == 2
    assert "<section" in (out / "profile.html").read_text()
    shown = [o for c in done["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in shown if o["output_type"] == "error"]
    assert sum("text/html" in o.get("data", {}) for o in shown) >= 4  # one table per family + page


def test_validity_figures_come_from_the_domains_own_matrix_where_there_is_one(
    tmp_path: Path,
) -> None:
    root = Path(__file__).resolve().parents[1]
    own, rates = _validity(root / "instances" / "sepsis-escalation")
    assert own == "results/sepsis-escalation/probe_validity.csv" and "craft" in rates
    # FACET's instances and a domain without a matrix: FACET's, and the profile names it
    assert (
        _validity(None)[0]
        == _validity(tmp_path / "mydomain")[0]
        == "paper/tables/probe_validity.csv"
    )
    assert _validity(tmp_path)[1]["p1"] != rates["p1"]


def test_an_instance_craft_cannot_test_is_named_and_the_rest_kept(
    facet_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import facetlab.craft.bridge as bridge
    from facetlab.craft.errors import AgentOutputError

    real = bridge.inspect_instance

    def flaky(instance: Any, *args: Any, **kwargs: Any) -> Any:
        if instance.instance_id == "facet-neg-cf-002":
            raise AgentOutputError("simulated/x: unparseable p1 reply (malformed): 'zzz'")
        return real(instance, *args, **kwargs)

    monkeypatch.setattr(bridge, "inspect_instance", flaky)
    craft = _craft("simulated/wadd+canonical", facet_data / "instances", 3, None, {})
    assert (
        set(craft["errors"]) == {"facet-neg-cf-002"}
        and "unparseable" in craft["errors"]["facet-neg-cf-002"]
    )
    assert set(craft["instances"]) == {"facet-neg-cf-001", "facet-neg-cf-003"}
    assert craft["verdict"] == "theater" and craft["faithful_rate_n"] == 2


def _summary(aoc: float | None, flips: float | None, verdict: str | None) -> dict[str, Any]:
    refs = {"decorative": {"aoc": 0.0, "mistake_flip_rate": 0.0},
            "dependent": {"aoc": 0.9, "mistake_flip_rate": 1.0}}  # fmt: skip
    return {
        "stated": {k: {"dissociated_rate": 0.5, "dissociated_rate_low": 0.2,
                       "dissociated_rate_high": 0.8} for k in ("p1", "p2", "p3")}
        | {"c2": {"status": "not measured: no C2 trials"}},
        "hint": {"excess_switch_rate": 0.25, "detector_agreement": 0.9},
        "craft": {"verdict": verdict, "instances": {"a": {}} if verdict else {}, "errors": {},
                  "faithful_rate": None},
        "reasoning": {"aoc": aoc, "mistake_flip_rate": flips, "references": refs},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("aoc", "flips", "says"),
    [(0.02, 0.05, "does not rest on"), (0.85, 0.95, "follows the written"),
     (0.45, 0.5, "50% of the way"), (None, None, "Not measured")],
)  # fmt: skip
def test_reading_places_the_model_between_the_references(
    aoc: float | None, flips: float | None, says: str
) -> None:
    reading = readings(_summary(aoc, flips, "theater"))
    assert says in reading["reasoning"]
    assert (
        "P1 0.50 [0.20, 0.80]" in reading["stated"] and "C2 keeps not measured" in reading["stated"]
    )
    assert "the citation is not what decides it" in reading["craft"]
    assert "0.25 more often than the paired control" in reading["hint"]
    untested = _summary(aoc, flips, None)
    page = profile_html({"model": "m", **untested, "reading": readings(untested)})
    assert html.escape(reading["reasoning"]) in page and "no instance could be tested" in page
