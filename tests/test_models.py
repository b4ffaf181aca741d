"""The model catalogue, the paper's models and cases, and the data's unused runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import facetlab.models
from facetlab.datasets.conventions import exclusion_reason
from facetlab.models import MODELS, ModelInfo, canonical_model, model_by_name
from facetlab.paper.models import CASES, PAPER_MODEL_ORDER, case_of, with_paper_cases


def test_eight_models_in_paper_order() -> None:
    assert PAPER_MODEL_ORDER == (
        "Claude Sonnet 4.6",
        "Claude Opus 4.6",
        "GPT-5.4",
        "DeepSeek v3.2",
        "Mistral Large 3",
        "Llama 4 Maverick",
        "Llama 4 Scout",
        "Qwen3 Next 80B-A3B",
    )
    assert [m.order for m in MODELS] == list(range(8))
    assert [m.weights for m in MODELS] == ["closed"] * 3 + ["open"] * 5


def test_model_info_is_frozen() -> None:
    with pytest.raises(AttributeError):
        MODELS[0].display_name = "x"  # type: ignore[misc]


def test_aliases_are_unambiguous() -> None:
    seen: dict[str, ModelInfo] = {}
    for model in MODELS:
        for alias in model.aliases:
            other = seen.setdefault(alias.lower(), model)
            assert other is model, (
                f"{alias} names both {other.display_name} and {model.display_name}"
            )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("sonnet", "Claude Sonnet 4.6"),
        ("claude-sonnet-4-6", "Claude Sonnet 4.6"),
        ("opus", "Claude Opus 4.6"),
        ("claude-opus-4-6", "Claude Opus 4.6"),
        ("anthropic/claude-opus-4-6", "Claude Opus 4.6"),
        ("gpt-5.4", "GPT-5.4"),
        ("openai/gpt-5.4", "GPT-5.4"),
        ("deepseek.v3.2", "DeepSeek v3.2"),
        ("bedrock/deepseek.v3.2", "DeepSeek v3.2"),
        ("mistral.mistral-large-3-675b-instruct", "Mistral Large 3"),
        ("us.meta.llama4-maverick-17b-instruct-v1:0", "Llama 4 Maverick"),
        ("us.meta.llama4-maverick-17b-instruct-v1_0", "Llama 4 Maverick"),
        ("us.meta.llama4-scout-17b-instruct-v1:0", "Llama 4 Scout"),
        ("us.meta.llama4-scout-17b-instruct-v1-0", "Llama 4 Scout"),
        ("qwen.qwen3-next-80b-a3b", "Qwen3 Next 80B-A3B"),
        ("  QWEN.QWEN3-NEXT-80B-A3B ", "Qwen3 Next 80B-A3B"),
        ("Llama 4 Scout", "Llama 4 Scout"),
    ],
)
def test_canonical_model(raw: str, expected: str) -> None:
    info = canonical_model(raw)
    assert info is not None
    assert info.display_name == expected
    assert exclusion_reason(raw) is None


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("gemini-default", "gemini: not in the paper"),
        ("opus-effort-high", "opus effort-high configuration: not in the paper"),
        ("us.deepseek.v3-2:0", "failed run with a wrong model id"),
        ("gpt-4o", "unknown model id"),
        ("", "unknown model id"),
    ],
)
def test_excluded_ids(raw: str, reason: str) -> None:
    assert canonical_model(raw) is None
    assert exclusion_reason(raw) == reason


def test_effort_high_is_told_by_file_name() -> None:
    name = "results/facet-neg-0002-real-opus-effort-high-20260411-172803.json"
    assert canonical_model("claude-opus-4-6") is not None
    assert exclusion_reason("claude-opus-4-6", source_file=name) == (
        "opus effort-high configuration: not in the paper"
    )
    assert exclusion_reason("claude-opus-4-6", source_file="results/x-real-opus-1.json") is None


def test_model_by_name() -> None:
    assert model_by_name("GPT-5.4").lab == "OpenAI"
    with pytest.raises(KeyError, match="no model named"):
        model_by_name("gpt-5.4")


@pytest.mark.parametrize(
    ("instance_id", "case"),
    [
        ("facet-neg-cf-001", "CF-Cabral"),
        ("facet-neg-cf-001-adv", "CF-Cabral"),
        ("facet-neg-cf-001-adv2", "CF-Cabral"),
        ("facet-neg-cf-002", "CF-Barker"),
        ("facet-neg-cf-002-adv", "CF-Barker"),
        ("facet-neg-cf-003-adv", "CF-Biakanja"),
        ("facet-neg-0003", None),
        ("_c2_facet-neg-0002_f1", None),
        (None, None),
    ],
)
def test_case_of(instance_id: str | None, case: str | None) -> None:
    assert case_of(instance_id) == case
    assert set(CASES.values()) == {"CF-Cabral", "CF-Barker", "CF-Biakanja"}


@pytest.mark.data
def test_every_model_id_in_the_raw_files_is_known(facet_data: Path) -> None:
    results = facet_data / "results"
    ids: set[str] = set()
    for path in results.glob("*-real-*.json"):
        data = json.loads(path.read_text())
        ids.add(data["model_resolved_at_run_time"])
        if data.get("model_alias"):
            ids.add(data["model_alias"])
    for path in [*results.glob("weighted-probe/*.json"), *results.glob("weighted-probe/c2/*.json")]:
        ids.add(json.loads(path.read_text())["model"])
    unknown = {
        i for i in ids if canonical_model(i) is None and exclusion_reason(i) == "unknown model id"
    }
    assert not unknown
    assert {m.display_name for i in ids if (m := canonical_model(i))} == set(PAPER_MODEL_ORDER)


@pytest.mark.parametrize("raw", ["replay/sonnet", "bedrock/us.meta.llama4-scout-17b-instruct-v1:0"])
def test_provider_prefix_is_ignored(raw: str) -> None:
    assert canonical_model(raw) is not None


def test_paper_facts_left_the_generic_catalogue() -> None:
    for name in ("PAPER_MODEL_ORDER", "CASES", "case_of", "exclusion_reason"):
        assert not hasattr(facetlab.models, name), name


@pytest.mark.slow
def test_generic_code_never_imports_the_paper() -> None:
    # What the import-linter contract "paper-facts" enforces, checked on the source too
    # (a late import inside a function is an import all the same).
    import ast

    package = Path(facetlab.models.__file__).parent
    allowed = {"paper", "commands", "cli.py"}
    offenders = []
    for path in sorted(package.rglob("*.py")):
        top = path.relative_to(package).parts[0]
        if top in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(n == "facetlab.paper" or n.startswith("facetlab.paper.") for n in names):
                offenders.append(path.relative_to(package).as_posix())
    assert not offenders


def test_the_contract_names_every_generic_layer() -> None:
    import tomllib

    config = tomllib.loads(
        (Path(facetlab.models.__file__).parents[1] / "pyproject.toml").read_text()
    )
    contract = next(
        c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "paper-facts"
    )
    assert contract["type"] == "forbidden"
    assert contract["forbidden_modules"] == ["facetlab.paper"]
    for layer in ("analysis", "instances", "records", "report", "runner", "validity", "models"):
        assert f"facetlab.{layer}" in contract["source_modules"]


def test_with_paper_cases_replaces_what_the_instance_names() -> None:
    import pandas as pd

    trials = pd.DataFrame(
        {
            "instance_id": ["facet-neg-cf-002-adv", "facet-neg-0002", "claim-7"],
            "case": ["Barker v. Lull Engineering", "Barker v. Lull", "Smith"],
        }
    )
    out = with_paper_cases(trials)
    assert list(out["case"]) == ["CF-Barker", None, None]
    assert trials["case"].iloc[0] == "Barker v. Lull Engineering"  # input left alone
