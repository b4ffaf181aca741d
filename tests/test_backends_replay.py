"""The replay backend answers every recorded FACET v3 prompt with its recorded response."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from pathlib import Path

import pytest

from facetlab.backends import ModelRequest, get_backend
from facetlab.errors import ConfigError, PermanentBackendError
from facetlab.models import canonical_model
from facetlab.paper.models import PAPER_MODEL_ORDER
from facetlab.reasoners.replay import ReplayBackend, load_index, model_key

pytestmark = pytest.mark.data


def _key(raw_model: str) -> str:
    info = canonical_model(raw_model)
    return info.display_name if info is not None else raw_model.lower()


def _weighted_files(root: Path) -> list[Path]:
    base = root / "results" / "weighted-probe"
    return sorted(base.glob("*.json")) + sorted((base / "c2").glob("*.json"))


def test_every_weighted_and_c2_file_replays_its_raw_response(facet_data: Path) -> None:
    files = _weighted_files(facet_data)
    assert len(files) == 162 + 144
    # group the raw files by (model, prompt); within a group, successful runs in time
    # order first, failed (empty) runs after: repeat i is the i-th of that order
    groups: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["_file"] = path.name
        groups[(_key(data["model"]), data["prompt"])].append(data)
    backends: dict[str, ReplayBackend] = {}

    async def check() -> int:
        checked = 0
        for (model, prompt), runs in groups.items():
            runs.sort(key=lambda d: (not d["raw_response"].strip(), d["timestamp"], d["_file"]))
            backend = backends.setdefault(model, ReplayBackend(model, data_dir=facet_data))
            for repeat, run in enumerate(runs):
                response = await backend.agenerate(ModelRequest(prompt, context={"repeat": repeat}))
                assert response.text == run["raw_response"], (run["_file"], repeat)
                assert response.model_id == run["model"]
                assert response.provider_request_id is not None
                assert response.provider_request_id.endswith(f"/{run['_file']}#/raw_response")
                checked += 1
            with pytest.raises(PermanentBackendError, match=f"repeat {len(runs)} requested"):
                await backend.agenerate(ModelRequest(prompt, context={"repeat": len(runs)}))
        return checked

    assert asyncio.run(check()) == len(files)


def test_paper_replications_in_recorded_order(facet_data: Path) -> None:
    # GPT-5.4 was run 16 times on the cf-001-adv prompt; repeat i is the i-th by timestamp
    runs = []
    for path in sorted((facet_data / "results" / "weighted-probe").glob("*cf-001-adv-codex*")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["instance_id"] == "facet-neg-cf-001-adv":
            runs.append(data)
    assert len(runs) == 16
    runs.sort(key=lambda d: d["timestamp"])
    backend = get_backend("replay/openai/gpt-5.4", data_dir=str(facet_data))
    recorded = backend.recordings(runs[0]["prompt"])  # type: ignore[attr-defined]
    assert [r.timestamp for r in recorded] == [d["timestamp"] for d in runs]
    assert [r.response for r in recorded] == [d["raw_response"] for d in runs]


def test_failed_run_comes_after_its_rerun(facet_data: Path) -> None:
    path = facet_data / "results" / "weighted-probe" / "facet-neg-cf-002-opus-20260412-233846.json"
    failed = json.loads(path.read_text(encoding="utf-8"))
    assert failed["raw_response"] == ""
    backend = ReplayBackend("opus", data_dir=facet_data)
    recordings = backend.recordings(failed["prompt"])
    assert len(recordings) >= 2
    assert recordings[0].response.strip() and recordings[0].timestamp > failed["timestamp"]
    assert recordings[-1].failed and recordings[-1].source.endswith(f"{path.name}#/raw_response")


def test_every_pilot_prompt_is_replayable(facet_data: Path) -> None:
    index = load_index(facet_data)
    seen = 0
    for path in sorted((facet_data / "results").glob("*-real-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        label = (
            "opus-effort-high"
            if "opus-effort-high" in path.name
            else data["model_resolved_at_run_time"]
        )
        for name, condition in data["conditions"].items():
            for prompt_key, answer_key in (
                ("prompt", "answer"),
                ("direct_probe_prompt", "direct_probe_answer"),
                ("reconstruction_check_prompt", "reconstruction_check_answer"),
            ):
                if prompt_key not in condition:
                    continue
                found = index.lookup(label, condition[prompt_key])
                sources = [r.source for r in found]
                assert (
                    f"{path.relative_to(facet_data).as_posix()}#/conditions/{name}/{answer_key}"
                    in sources
                )
                match = found[sources.index(next(s for s in sources if path.name in s))]
                assert match.response == condition[answer_key]
                seen += 1
    assert seen > 1000


def test_index_size_and_one_cell_per_prompt(facet_data: Path) -> None:
    index = load_index(facet_data)
    assert index.size == 1871  # every recorded prompt field of the data set
    for (_model, _prompt), recordings in index:
        # a prompt identifies its instance and probe, so the prompt alone is the key
        assert len({(r.instance_id, r.probe, r.form) for r in recordings}) == 1
    assert set(index.models()) >= {*PAPER_MODEL_ORDER, "opus-effort-high", "gemini-default"}


def test_model_labels_are_equivalent(facet_data: Path) -> None:
    assert model_key("sonnet") == model_key("claude-sonnet-4-6") == model_key("Claude Sonnet 4.6")
    assert model_key("us.meta.llama4-scout-17b-instruct-v1_0") == "Llama 4 Scout"
    prompt = next(p for (m, p), _ in load_index(facet_data) if m == "Claude Sonnet 4.6")
    texts = {
        label: asyncio.run(
            ReplayBackend(label, data_dir=facet_data).agenerate(ModelRequest(prompt))
        ).text
        for label in (
            "sonnet",
            "claude-sonnet-4-6",
            "Claude Sonnet 4.6",
            "anthropic/claude-sonnet-4-6",
        )
    }
    assert len(set(texts.values())) == 1


def test_unknown_prompt_and_model_errors(facet_data: Path) -> None:
    backend = ReplayBackend("gpt-5.4", data_dir=facet_data)
    request = ModelRequest("not a recorded prompt", context={"probe": "p2", "instance_id": "x"})
    with pytest.raises(PermanentBackendError) as info:
        asyncio.run(backend.agenerate(request))
    message = str(info.value)
    assert "no recording for model GPT-5.4" in message and "probe='p2'" in message
    assert "no model has this exact prompt" in message
    # a prompt recorded only for other models says which
    sonnet_only = next(
        p
        for (m, p), _ in load_index(facet_data)
        if m == "Claude Sonnet 4.6" and "GPT-5.4" not in load_index(facet_data).models_with(p)
    )
    with pytest.raises(
        PermanentBackendError, match=r"recorded for other models: .*Claude Sonnet 4\.6"
    ):
        asyncio.run(backend.agenerate(ModelRequest(sonnet_only)))
    with pytest.raises(PermanentBackendError, match="repeat"):
        asyncio.run(backend.agenerate(ModelRequest("x", context={"repeat": -1})))
    with pytest.raises(ConfigError, match=r"no recordings for model 'llama3\.1'.*GPT-5\.4"):
        ReplayBackend("llama3.1", data_dir=facet_data)
    with pytest.raises(ConfigError, match="holds no results/ folder"):
        ReplayBackend("gpt-5.4", data_dir=facet_data / "instances")


def test_data_dir_from_environment(facet_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACETLAB_DATA_MIRROR", str(facet_data))
    backend = get_backend("replay/deepseek.v3.2")
    assert isinstance(backend, ReplayBackend)
    assert backend.index.root == facet_data
