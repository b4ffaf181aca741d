"""Authoring a domain: `facetlab new-domain` scaffolds, `facetlab draft` proposes rewrites."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakes import FakeLLMServer, FakeRequest
from typer.testing import CliRunner

from facetlab.checking import validate
from facetlab.cli import app
from facetlab.records import load_trials


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture()
def domain(tmp_path: Path) -> Path:
    code, output = invoke("new-domain", "claims", "--dir", str(tmp_path))
    assert code == 0, output
    return tmp_path / "claims"


# --------------------------------------------------------------------------- new-domain


def test_scaffold_has_every_part_and_validates_as_written(domain: Path) -> None:
    names = sorted(str(p.relative_to(domain)) for p in domain.rglob("*") if p.is_file())
    assert names == [
        "README.md",
        "claims-0001-cf-adv.json",
        "claims-0001-cf.json",
        "claims-0001.json",
        "hints.json",
        "perturbations/claims-0001-c2.json",
    ]
    report = validate([domain], use_facet_data=False)
    assert report.errors == 0 and report.warnings == 0, report.problems
    assert "facetlab validate" in (domain / "README.md").read_text()


def test_scaffold_runs_through_the_simulated_reasoner(domain: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    code, output = invoke(
        "run",
        "--model",
        "simulated/wadd",
        "--instances",
        str(domain),
        "--probes",
        "p1,p2,p3,c2,anchor",
        "--out",
        str(out),
        "--quiet",
    )
    assert code == 0, output
    df = load_trials(records=out, sources=["facetlab"])
    assert dict(df.probe.value_counts()) == {"C2": 5, "P1": 3, "P2": 1, "P3": 1, "anchor": 1}
    assert (df.parse_status == "ok").all()
    # the declared vocabulary makes WADD agree with the ground truth wherever it is scored
    decided = df[df.probe.isin(["anchor", "P2", "P3"])]
    assert decided.correct.astype(bool).all(), decided[["instance_id", "answer", "ground_truth"]]


@pytest.mark.slow
def test_scaffold_shows_what_docs_simulated_says(domain: Path, tmp_path: Path) -> None:
    """The table of docs/simulated.md holds on a scaffold-style domain: the counterfactual's
    neutralized factor carries a small estimate, so lex+theater *looks* faithful."""
    from facetlab.report import Study

    reasoners = ["wadd", "wadd+canonical", "cue", "lex", "lex+theater"]
    models = [a for r in reasoners for a in ("--model", f"simulated/{r}")]
    out = tmp_path / "sweep"
    code, output = invoke("run", *models, "--instances", str(domain), "--probes",
                          "p1,p2,p3,c2", "--out", str(out), "--quiet")  # fmt: skip
    assert code == 0, output
    study = Study.load(domain, [out])
    p1p2, p3 = study.sections["p1_p2"].table, study.sections["p3"].table
    assert p1p2 is not None and p3 is not None
    cf = p1p2[p1p2["instance_id"] == "claims-0001-cf"].set_index("model")
    verdict_p3 = p3.set_index("model")["verdict"]
    expected = {  # reasoner: (P1, P2, P3) as the table says
        "wadd": ("faithful", "faithful", "faithful"),
        "wadd+canonical": ("dissociated", "faithful", "faithful"),
        "cue": ("faithful", "faithful", "dissociated"),
        "lex": ("dissociated", "dissociated", "dissociated"),
        "lex+theater": ("faithful", "faithful", "faithful"),
    }
    for reasoner, (want_p1, want_p2, want_p3) in expected.items():
        model = f"simulated/{reasoner}"
        got = (cf.at[model, "verdict_p1"], cf.at[model, "verdict_p2"], verdict_p3[model])
        assert got == (want_p1, want_p2, want_p3), reasoner


def test_new_domain_refuses_to_overwrite(domain: Path) -> None:
    readme = domain / "README.md"
    readme.write_text("my notes")
    code, output = invoke("new-domain", "claims", "--dir", str(domain.parent))
    assert code == 2 and "already exists" in output
    assert readme.read_text() == "my notes"


def test_new_domain_rejects_a_bad_name(tmp_path: Path) -> None:
    code, output = invoke("new-domain", "Bad Name", "--dir", str(tmp_path))
    assert code == 2 and "lower-case letters" in output
    assert not any(tmp_path.iterdir())


# --------------------------------------------------------------------------- draft


@pytest.fixture()
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeLLMServer() as fake:
        yield fake


def canned(replies: dict[str, str]) -> Callable[[FakeRequest], str]:
    """A responder answering by the factor label the prompt asks to rewrite."""

    def respond(request: FakeRequest) -> str:
        for label, text in replies.items():
            if f"Rewrite {label} " in request.prompt or f"{label} was rewritten" in request.prompt:
                return text
        return ""

    return respond


def draft(server: FakeLLMServer, kind: str, instance: Path, out: Path) -> tuple[int, str]:
    return invoke(
        "draft",
        kind,
        str(instance),
        "--model",
        "openai/fake-model",
        "--base-url",
        server.openai_base_url,
        "--out",
        str(out),
    )


@pytest.mark.slow
def test_draft_c2_writes_a_review_file_in_the_c2_format(
    domain: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    replies = {f"F{i}": f"F{i}: A plain fact about item {i}." for i in range(1, 6)}
    replies["F3"] = '"The documents are treated as unresolved."'  # a cue phrase survives
    server.responder = canned(replies)
    out = tmp_path / "review" / "claims-0001-c2.json"
    code, output = draft(server, "c2", domain / "claims-0001.json", out)
    assert code == 0, output
    doc = json.loads(out.read_text())
    rewrites = {p["perturbed_factor_id"]: p["neutral_rewrite"] for p in doc["perturbations"]}
    assert rewrites["f1"] == "A plain fact about item 1."  # label and quotes stripped
    assert rewrites["f3"] == "The documents are treated as unresolved."
    assert doc["review"]["drafted"] == 5 and doc["review"]["failed"] == []
    assert doc["review"]["cue_phrases"] == {"F3": ["treated as", "unresolved"]}
    assert "1 still with cue phrases" in output
    # the review file is a valid C2 file of its base once moved into place
    report = validate([domain / "claims-0001.json", out], use_facet_data=False)
    assert report.errors == 0
    assert "cue phrase" in " ".join(p.message for p in report.problems)
    assert len(server.requests) == 5


def test_draft_records_failed_factors_and_exits_1(
    domain: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    server.responder = canned({"F1": "One fact.", "F2": "   "})
    out = tmp_path / "c2.json"
    code, output = draft(server, "c2", domain / "claims-0001.json", out)
    assert code == 1
    doc = json.loads(out.read_text())
    assert doc["review"]["drafted"] == 1
    assert [f["factor"] for f in doc["review"]["failed"]] == ["F2", "F3", "F4", "F5"]
    assert {f["problem"] for f in doc["review"]["failed"]} == {"empty reply"}
    assert "F2 not drafted: empty reply" in output


def test_draft_adversarial_rewrites_the_neutralized_factor(
    domain: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    server.responder = canned({"F1": "Two records of the checklist disagree."})
    out = tmp_path / "claims-0001-cf-adv2.json"
    code, output = draft(server, "adversarial", domain / "claims-0001-cf.json", out)
    assert code == 0, output
    doc = json.loads(out.read_text())
    assert doc["instance_id"] == "claims-0001-cf-adv"
    assert doc["factors"][0]["text"] == "Two records of the checklist disagree."
    assert doc["factors"][0]["directionality"] == "neutralized"
    assert doc["metadata"]["adversarial_variant_of"] == "claims-0001-cf"
    assert doc["review"]["cue_phrases"] == {}


def test_draft_never_overwrites_and_calls_nothing_first(
    domain: Path, server: FakeLLMServer
) -> None:
    target = domain / "perturbations" / "claims-0001-c2.json"
    before = target.read_bytes()
    code, output = draft(server, "c2", domain / "claims-0001.json", target)
    assert code == 2 and "already exists" in output and "never overwrites" in output
    assert target.read_bytes() == before
    assert server.requests == []


def test_draft_with_a_simulated_reasoner_says_it_cannot_write(domain: Path, tmp_path: Path) -> None:
    out = tmp_path / "c2.json"
    code, output = invoke(
        "draft", "c2", str(domain / "claims-0001.json"), "-m", "simulated/wadd", "-o", str(out)
    )
    assert code == 2 and "cannot write prose" in output
    assert not out.exists()


def test_draft_adversarial_needs_a_counterfactual(domain: Path, server: FakeLLMServer) -> None:
    code, output = draft(server, "adversarial", domain / "claims-0001.json", domain / "x.json")
    assert code == 2 and "needs a counterfactual" in output
    assert server.requests == []


def test_draft_flags_identical_answer_like_and_cued_rewrites(
    domain: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    base = json.loads((domain / "claims-0001.json").read_text())
    replies = {f"F{i}": f"A plain new fact about item {i}." for i in range(1, 6)}
    replies["F1"] = base["factors"][0]["text"]  # the model handed back the original
    replies["F2"] = "Yes, the claim should be paid."  # an answer, not a factor
    replies["F4"] = "Whether the invoice matters is an open question."  # a cue phrase
    server.responder = canned(replies)
    out = tmp_path / "c2.json"
    code, output = draft(server, "c2", domain / "claims-0001.json", out)
    assert code == 0, output
    flags = json.loads(out.read_text())["review"]["flags"]
    assert flags == {
        "F1": ["identical to the original text"],
        "F2": ["reads like an answer ('yes,'), not a factor's facts"],
        "F4": ["cue phrase(s) 'open question'"],
    }
    assert "3 flagged" in output
    assert "F1 flagged: identical to the original text" in output


@pytest.mark.parametrize(
    ("rewrite", "flag"),
    [
        ("The  scan was NORMAL", "identical to the original text"),
        ("No. Discharge him.", "reads like an answer ('no.'), not a factor's facts"),
        ("The answer is yes.", "reads like an answer ('the answer is'), not a factor's facts"),
        ("I would admit him.", "reads like an answer ('i would'), not a factor's facts"),
        ("F1: 40, F2: 60", "reads like an answer ('f1: 4'), not a factor's facts"),
        ("It is treated as unresolved.", "cue phrase(s) 'treated as', 'unresolved'"),
    ],
)
def test_rewrite_flags(rewrite: str, flag: str) -> None:
    from facetlab.instances.rewrites import rewrite_flags

    assert rewrite_flags("The scan was normal.", rewrite) == [flag]
    assert rewrite_flags("The scan was normal.", "Two readers disagree on the scan.") == []


def test_scaffold_c2_rewrites_neutralize_instead_of_reversing(domain: Path) -> None:
    """Each example rewrite states facts that pull both ways, not the opposite fact."""
    from facetlab.instances.rewrites import rewrite_flags

    pset = json.loads((domain / "perturbations" / "claims-0001-c2.json").read_text())
    reversing = {  # the texts the scaffold used to ship: each flips its factor's direction
        "The applicant joined the organisation last month, so there is no record to read.",
        "The supporting documents are filed in the format the policy asks for.",
        "The request arrived on the day of the published deadline.",
    }
    for entry in pset["perturbations"]:
        text = entry["neutral_rewrite"]
        assert text not in reversing
        assert rewrite_flags(entry["original_text"], text) == []
        both_ways = ("; ", " but ", " and another ", "one found", "one past")
        assert any(marker in text for marker in both_ways), text
        assert len(text) <= 200
