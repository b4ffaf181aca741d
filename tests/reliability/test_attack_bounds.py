"""Issue 39.6: bounded, checked inputs everywhere, each refused in one line before any call.

- a CLI number is held to the bound its sweep-file field has (``--repeats 10^26`` is
  refused within seconds, not planned);
- a value under a secret-looking key of ``extra_body`` is found in no file of the sweep
  or the cache (sweep.json, records, cache entries), while the request still carries it;
- a ``--base-url`` that cannot be read (a fullwidth ``＠``, a bad port, another scheme) is
  one line that never quotes its password;
- notebook and ``reproduce`` parameters are checked against the parameters cell's types;
- a SOCKS proxy without its package is one line, and no request leaves.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakes import FakeLLMServer
from hypothesis import given, settings
from hypothesis import strategies as st
from reliability_helpers import CLI, cli, instances_folder, run_args

from facetlab.errors import ConfigError
from facetlab.notebook_params import check_parameters

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "hunter2-pw-0123"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")


def _error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--repeats", "99999999999999999999999999"), ("--repeats", "0"),
     ("--seed", "99999999999999999999999999"), ("--temperature", "1e400"),
     ("--budget-usd", "1e999"), ("--rpm", "-1"), ("--timeout", "inf")],
)  # fmt: skip
def test_a_number_out_of_bounds_is_refused_at_once(flag: str, value: str, tmp_path: Path) -> None:
    args = ["run", "-i", str(ROOT / "instances"), "-p", "p1", "-m", "simulated/wadd",
            flag, value, "--out", str(tmp_path / "o"), "--quiet"]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", CLI, *args], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert time.monotonic() - started < 30  # the process, import included: never planned
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = _error_lines(done.stderr + done.stdout)
    assert flag in line or flag.lstrip("-") in line
    assert not (tmp_path / "o" / "records").exists()


def test_extra_body_secrets_reach_the_server_and_no_file(tmp_path: Path) -> None:
    secrets = {"api_key": "xk-value-1", "token": "tk-value-2", "client_secret": "cs-value-3",
               "password": "pw-value-4", "Authorization": "Basic au-value-5"}  # fmt: skip
    instances = instances_folder(tmp_path / "inst", 2)
    with FakeLLMServer() as server:
        sweep = tmp_path / "sweep.yaml"
        sweep.write_text(json.dumps({
            "instances": str(instances), "probes": ["p1"],
            "models": [{"model": "openai/fake-model", "base_url": server.openai_base_url,
                        "extra_body": {"metadata": secrets, "min_p": 0.1}}],
        }))  # fmt: skip
        out = tmp_path / "out"
        result = cli("run", str(sweep), "--out", str(out), "--quiet")
        assert result.exit_code == 0, result.output
        sent = [r.body.get("metadata") for r in server.requests if r.api == "openai"]
    assert sent and all(s == secrets for s in sent)  # the request carries them as given
    for path in [p for p in tmp_path.rglob("*") if p.is_file() and p != sweep]:
        text = path.read_bytes().decode("utf-8", "replace")
        assert not [v for v in secrets.values() if v.split()[-1] in text], path
    assert result.output.count("error") == 0
    again = cli("run", str(sweep), "--out", str(out), "--quiet")  # the digest holds
    assert again.exit_code == 0 and "2 already recorded" in again.output, again.output


_URLS = st.sampled_from(
    [f"http://admin:{PASSWORD}\uff20127.0.0.1:9/v1", f"http://admin:{PASSWORD}@127.0.0.1:99999/v1",
     f"http://admin:{PASSWORD}@[::1/v1", f"ftp://admin:{PASSWORD}@host/v1",
     f"http://admin:{PASSWORD}\uff05{40}host/v1", f"http://ad min:{PASSWORD}@host/v1",
     f"http://admin:{PASSWORD}@host:port/v1", f"http://admin\uff1a{PASSWORD}@host/v1",
     f"http://admin:{PASSWORD}@host\u0000/v1", f"//admin:{PASSWORD}@host/v1"]
)  # fmt: skip


@settings(max_examples=10, deadline=None)
@given(url=_URLS)
def test_a_base_url_that_cannot_be_read_is_one_line_without_its_password(url: str) -> None:
    result = cli("run", "-i", str(ROOT / "instances"), "-p", "p1", "-m", "openai/x",
                 "--base-url", url, "--out", "/nonexistent/never-written", "--quiet")  # fmt: skip
    assert result.exit_code == 2, result.output
    (line,) = _error_lines(result.output)
    assert "--base-url" in line and PASSWORD not in result.output
    assert "Traceback" not in result.output


_PLAIN = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=5), st.booleans(),
                   st.lists(st.integers(), max_size=2), st.none())  # fmt: skip


@given(default=_PLAIN, value=st.one_of(_PLAIN, st.dates(), st.binary(max_size=4)))
def test_a_parameter_of_another_type_is_one_line_naming_it(default: object, value: object) -> None:
    def kind(v: object) -> str:
        if isinstance(v, bool):
            return "bool"
        return "number" if isinstance(v, (int, float)) else type(v).__name__

    try:
        check_parameters({"threshold": value}, {"threshold": default}, "study.ipynb")
    except ConfigError as exc:
        message = str(exc)
        assert message.startswith("parameter 'threshold' for study.ipynb: ") and "\n" not in message
        assert default is not None or kind(value) in ("date", "bytes")
    else:
        assert kind(value) not in ("date", "bytes")
        lists_take_text = isinstance(default, list) and isinstance(value, str)
        assert default is None or kind(default) == kind(value) or lists_take_text


@pytest.mark.parametrize("value", ["threshold=abc", "threshold=2024-01-01",
                                   "threshold=!!binary aGVsbG8=", "formats=5"])  # fmt: skip
def test_reproduce_parameters_of_another_type_are_one_line(value: str, tmp_path: Path) -> None:
    result = cli("reproduce", "-p", value, "--out", str(tmp_path / "o"), "--check")
    assert result.exit_code == 2, result.output
    (line,) = _error_lines(result.output)
    assert f"parameter '{value.split('=')[0]}'" in line and "Traceback" not in result.output
    assert not (tmp_path / "o").exists() or not list((tmp_path / "o").rglob("*.ipynb"))


def test_a_socks_proxy_without_its_package_is_one_line_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("aiohttp")
    if __import__("importlib").util.find_spec("socksio") is not None:
        pytest.skip("socksio is installed: a SOCKS proxy works")
    instances = instances_folder(tmp_path / "inst", 2)
    with FakeLLMServer() as server:
        monkeypatch.setenv("ALL_PROXY", f"socks5://user:{PASSWORD}@127.0.0.1:1080")
        result = cli(*run_args(server, instances, tmp_path / "out"))  # type: ignore[arg-type]
        assert server.requests == []
    (line,) = _error_lines(result.output)
    assert "ALL_PROXY" in line and "socksio" in line and PASSWORD not in result.output
    assert not list((tmp_path / "out").rglob("*.json"))
