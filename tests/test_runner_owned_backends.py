"""The backends the runner builds: the aiohttp pool, and an HTTP timeout that never ends a
call before the run's own ``--timeout`` does."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer
from test_runner_helpers import StubSuite, make_instances

import facetlab.backends
from facetlab.runner import RunOptions, run


def _built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: str, **options: Any
) -> dict[str, Any]:
    """The keyword options the runner built ``model``'s backend with."""
    seen: dict[str, Any] = {}
    real = facetlab.backends.get_backend

    def spy(model: str, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return real(model, **kwargs)

    monkeypatch.setattr(facetlab.backends, "get_backend", spy)
    with FakeLLMServer() as server:
        result = run(make_instances(1), "p1", model, out=tmp_path / "o", suite=StubSuite(),
                     base_url=server.openai_base_url, progress="none", console=io.StringIO(),
                     **options)  # fmt: skip
    assert result.stats is not None and result.stats.ok == len(result.plan) > 0
    return seen


@pytest.mark.slow
def test_a_long_timeout_reaches_the_http_client_and_the_pool_is_aiohttp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _built(tmp_path, monkeypatch, "openai/m", options=RunOptions(timeout_s=1800))
    assert seen["timeout"] == 1805.0  # the SDK's own 600 s would end a 1800 s call first
    assert seen["http_transport"] == "aiohttp"


@pytest.mark.slow
def test_options_in_the_model_string_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _built(tmp_path, monkeypatch, "openai/m?timeout=30&http_transport=httpx")
    assert "timeout" not in seen and "http_transport" not in seen  # the string's win


@pytest.mark.slow
def test_backend_options_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _built(tmp_path, monkeypatch, "openai/m",
                  backend_options={"timeout": 12, "http_transport": "httpx"})  # fmt: skip
    assert seen["timeout"] == 12 and seen["http_transport"] == "httpx"


def test_a_proxy_in_the_environment_keeps_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    # facetlab's aiohttp session does not read HTTPS_PROXY: a machine behind a proxy
    # keeps the SDK's httpx pool, which does
    from facetlab.backends.openai import OpenAIBackend

    url = "http://127.0.0.1:9/v1"
    plain = OpenAIBackend("m", base_url=url, http_transport="aiohttp")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    proxied = OpenAIBackend("m", base_url=url, http_transport="aiohttp")
    assert plain.sends_directly and not proxied.sends_directly
    assert not OpenAIBackend("m", base_url=url + "?key=1", http_transport="aiohttp").sends_directly


@pytest.mark.slow
def test_a_batch_run_keeps_httpx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --batch makes a few requests, file uploads among them: the SDKs' default transport
    seen: dict[str, Any] = {}

    def spy(model: str, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise RuntimeError("stop here: the options are what this test reads")

    monkeypatch.setattr(facetlab.backends, "get_backend", spy)
    with pytest.raises(RuntimeError, match="stop here"):
        run(make_instances(1), "p1", "openai/m", out=tmp_path / "o", suite=StubSuite(),
            base_url="http://127.0.0.1:9/v1", progress="none", console=io.StringIO(),
            options=RunOptions(batch=True))  # fmt: skip
    assert "http_transport" not in seen and seen["timeout"] == 605.0
