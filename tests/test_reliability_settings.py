"""Check before paying: bad settings, paths and instances are refused before the first request.

Each case runs ``facetlab run`` against the loopback fake and asserts one clear
``error:`` line, no traceback and zero requests at the fake.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeLLMServer
from reliability_helpers import cli, instances_folder, run_args, write_instance

pytestmark = pytest.mark.timeout(60)


def _refused(server: FakeLLMServer, args: list[str], expected: str) -> str:
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert expected in result.output, result.output
    assert "Traceback" not in result.output
    assert [line for line in result.output.splitlines() if line.startswith("error:")]
    assert server.requests == []  # nothing asked, nothing paid
    return result.output


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (["--budget-usd", "nan"], "--budget-usd is nan; expected a finite number >= 0"),
        (["--budget-usd", "-1"], "--budget-usd is -1.0; expected a finite number >= 0"),
        (["--rpm", "nan"], "requests_per_minute (--rpm) is nan; expected a finite number > 0"),
        (["--rpm", "0"], "requests_per_minute (--rpm) is 0.0; expected a finite number > 0"),
        (["--tpm", "inf"], "tokens_per_minute (--tpm) is inf"),
        (["--rpm-window", "-1"], "rate_window_s (--rpm-window) is -1.0"),
        (["--rpm-window", "nan"], "rate_window_s (--rpm-window) is nan"),
        (["--repeats", "0"], "--repeats is 0; expected at least 1"),
        (["--timeout", "nan"], "--timeout is nan"),
        (["--max-retry-after", "-5"], "max_retry_after_s (--max-retry-after) is -5.0"),
        (["--template", "facet-v9"], "unknown prompt template 'facet-v9'; known templates:"),
        (["--temperature", "nan"], "--temperature is nan; expected a finite number in [0, 2]"),
        (["--temperature", "inf"], "--temperature is inf; expected a finite number in [0, 2]"),
        (["--temperature", "-5"], "--temperature is -5.0; expected a finite number in [0, 2]"),
        (["--temperature", "7"], "--temperature is 7.0; expected a finite number in [0, 2]"),
        (["--seed", "-3"], "--seed is -3; expected a whole number from 0 to"),
    ],
)
def test_bad_numbers_refused_before_any_request(
    tmp_path: Path, extra: list[str], expected: str
) -> None:
    with FakeLLMServer() as server:
        _refused(
            server,
            run_args(server, instances_folder(tmp_path / "i"), tmp_path / "o", *extra),
            expected,
        )


@pytest.mark.parametrize("price", ["NaN", "-3.0"])
def test_nan_or_negative_price_refused_before_any_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, price: str
) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(f'{{"fake-model": {{"input": {price}, "output": 1.0}}}}')
    monkeypatch.setenv("FACETLAB_PRICES", str(prices))
    with FakeLLMServer() as server:
        args = run_args(
            server, instances_folder(tmp_path / "i"), tmp_path / "o", "--budget-usd", "5"
        )
        _refused(server, args, "/fake-model/input is")


def test_empty_out_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeLLMServer() as server:
        args = run_args(server, instances_folder(tmp_path / "i"), tmp_path / "o")
        args[args.index("--out") + 1] = ""
        _refused(server, args, "--out is empty")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["i"]  # nothing written here


def test_cache_dir_that_is_a_file_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "cache-file"
    blocker.write_text("not a folder")
    with FakeLLMServer() as server:
        args = run_args(
            server, instances_folder(tmp_path / "i"), tmp_path / "o", "--cache-dir", str(blocker)
        )
        _refused(server, args, f"--cache-dir {blocker} is a file; expected a folder")


def test_out_that_is_a_file_refused(tmp_path: Path) -> None:
    out = tmp_path / "o"
    out.write_text("x")
    with FakeLLMServer() as server:
        _refused(server, run_args(server, instances_folder(tmp_path / "i"), out), "is a file")


@pytest.mark.parametrize(
    ("bad_id", "expected"),
    [
        ("ops/facet-neg-0005", "contains '/'"),
        ("case\u0000nul", "NUL"),
        ("x" * 300, "is 300 bytes long"),
    ],
)
def test_unsafe_instance_ids_fail_validate_and_run_before_paying(
    tmp_path: Path, bad_id: str, expected: str
) -> None:
    folder = tmp_path / "i"
    path = write_instance(folder, bad_id)
    checked = cli("validate", str(path))
    assert checked.exit_code != 0 and expected in checked.output
    assert f"{path}:/instance_id: error" in checked.output
    with FakeLLMServer() as server:
        _refused(server, run_args(server, folder, tmp_path / "o"), expected)
    assert not (tmp_path / "o" / "records").exists()


def test_nan_weight_estimate_refused_before_paying(tmp_path: Path) -> None:
    folder = tmp_path / "i"
    factors = json.loads(write_instance(tmp_path / "tmpl", "t").read_text())["factors"]
    for f in factors:
        f["in_case_weight_estimate"] = 0.2
    factors[2]["in_case_weight_estimate"] = float("nan")
    write_instance(folder, "case-nan", factors=factors)
    with FakeLLMServer() as server:
        _refused(server, run_args(server, folder, tmp_path / "o"), "NaN is not a JSON number")


def test_unknown_perturbation_target_refused_by_run_as_by_validate(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i", n=1)
    pert = folder / "perturbations"
    pert.mkdir()
    (pert / "case-0000-c2.json").write_text(
        json.dumps(
            {
                "base_instance_id": "case-0000",
                "perturbation_type": "c2_neutral_rewrite",
                "perturbations": [
                    {
                        "variant_id": f"case-0000-c2-{fid}",
                        "perturbed_factor_id": fid,
                        "neutral_rewrite": f"A neutral fact about {fid}.",
                    }
                    for fid in ("f1", "f9")
                ],
            }
        )
    )
    checked = cli("validate", str(folder))
    assert "unknown factor 'f9'" in checked.output
    with FakeLLMServer() as server:
        args = run_args(server, folder, tmp_path / "o")
        args[args.index("--probes") + 1] = "c2"
        _refused(server, args, "unknown factor 'f9'")


def test_another_design_in_the_same_out_refused_unless_asked(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i", n=1)
    out = tmp_path / "o"
    with FakeLLMServer() as server:
        first = cli(*run_args(server, folder, out))
        assert first.exit_code == 0, first.output
        paid = server.paid_calls().total()
        output = _refused_after(server, run_args(server, folder, out, "--temperature", "0.7"))
        assert "holds another design" in output and "params" in output
        assert server.paid_calls().total() == paid
        again = cli(*run_args(server, folder, out, "--temperature", "0.7", "--new-design"))
        assert again.exit_code == 0, again.output
    designs = json.loads((out / "sweep.json").read_text())["designs"]
    assert [d["params"]["temperature"] for d in designs] == [None, 0.7]


def _refused_after(server: FakeLLMServer, args: list[str]) -> str:
    before = len(server.requests)
    result = cli(*args)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(server.requests) == before
    return result.output


@pytest.mark.parametrize(
    ("sampling", "seed", "expected"),
    [
        ({"temperature": float("nan")}, 0, "--temperature is nan"),
        ({"temperature": -0.5}, 0, "--temperature is -0.5"),
        ({"top_p": 0.0}, 0, "top_p is 0.0; expected a finite number in (0, 1]"),
        ({"top_p": 1.01}, 0, "top_p is 1.01"),
        ({"top_p": float("nan")}, 0, "top_p is nan"),
        ({"max_tokens": 0}, 0, "--max-tokens is 0; expected a whole number at least 1"),
        ({"max_tokens": -10}, 0, "--max-tokens is -10"),
        ({}, -1, "--seed is -1"),
        ({"seed": 2**64}, 0, "--seed is 18446744073709551616"),
    ],
)
def test_bad_sampling_values_refused_from_python_before_any_request(
    tmp_path: Path, sampling: dict[str, Any], seed: int, expected: str
) -> None:
    from facetlab.backends.base import SamplingParams
    from facetlab.errors import ConfigError
    from facetlab.runner import run

    folder = instances_folder(tmp_path / "i")
    with FakeLLMServer() as server:
        with pytest.raises(ConfigError) as caught:
            run(
                folder,
                "p1",
                "openai/fake-model",
                out=tmp_path / "o",
                base_url=server.openai_base_url,
                seed=seed,
                sampling=SamplingParams(**sampling),
                progress="none",
            )
        assert server.requests == []
    message = str(caught.value)
    assert expected in message and "\n" not in message
    assert not (tmp_path / "o" / "records").exists()
