"""Credentials never reach a file or an output; batch-submit errors are one line.

The password of a URL in a model string is refused without being echoed; one in
``--base-url`` is redacted everywhere; a key a provider echoes back in its reply
is removed before the reply is cached or recorded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import FakeLLMServer, Fault
from reliability_helpers import cli, instances_folder, run_args, write_instance

pytestmark = pytest.mark.timeout(60)

PASSWORD = "PASSWORD-8c1f2e"
KEY = "sk-test-0123456789abcdefSECRET"


def _files_containing(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


@pytest.mark.parametrize("dry_run", [False, True])
def test_password_in_a_model_string_url_is_refused_and_never_echoed(
    tmp_path: Path, dry_run: bool
) -> None:
    folder = instances_folder(tmp_path / "i")
    with FakeLLMServer() as server:
        host = server.openai_base_url.split("://", 1)[1]
        args = run_args(server, folder, tmp_path / "o")
        args[args.index("--model") + 1] = (
            f"openai/fake-model?base_url=http://admin:{PASSWORD}@{host}"
        )
        del args[args.index("--base-url") : args.index("--base-url") + 2]
        result = cli(*args, *(["--dry-run"] if dry_run else []))
        assert server.requests == []
    assert result.exit_code == 2 and "user name or password" in result.output
    assert PASSWORD not in result.output and "Traceback" not in result.output
    assert _files_containing(tmp_path, PASSWORD) == []


def test_password_in_base_url_is_redacted_from_every_file_and_output(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i")
    out = tmp_path / "o"
    with FakeLLMServer() as server:
        host = server.openai_base_url.split("://", 1)[1]
        args = run_args(server, folder, out)
        args[args.index("--base-url") + 1] = f"http://admin:{PASSWORD}@{host}"
        result = cli(*args)
        assert server.paid_calls().total() == 3
    assert result.exit_code == 0, result.output
    assert PASSWORD not in result.output
    assert _files_containing(tmp_path, PASSWORD) == []


def test_a_reply_echoing_the_key_is_stored_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = instances_folder(tmp_path / "i", n=2)
    out = tmp_path / "o"
    with FakeLLMServer(script=[Fault.ECHO_KEY, Fault.ECHO_KEY]) as server:
        result = cli(*run_args(server, folder, out))
        assert [r.outcome for r in server.requests] == ["echo_key", "echo_key"]
    assert result.exit_code == 0, result.output
    assert KEY not in result.output
    assert _files_containing(tmp_path, KEY) == []
    assert list((out / "records").glob("*.json"))


def test_batch_submit_error_is_one_line_with_the_providers_message(tmp_path: Path) -> None:
    folder = instances_folder(tmp_path / "i")
    with FakeLLMServer() as server:  # no batch routes: the upload answers 404
        result = cli(*run_args(server, folder, tmp_path / "o", "--batch"))
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output
    assert "--batch: submitting 3 request(s) to openai failed" in errors[0]
    assert "no route POST /v1/files" in errors[0]


# Each hides a credential from a check on the raw string: an encoded "//", an encoded
# ":"/"@", a space (also as "+"), an encoded "?key=", double encoding, a fullwidth "@".
BYPASSES = [
    ("slashes", "base_url=http:%2F%2Fadmin:{secret}@{host}"),
    ("colon-at", "base_url=http://admin%3A{secret}%40{host}"),
    ("space", "base_url=http://ad min:{secret}@{host}"),
    ("plus", "base_url=http://ad+min:{secret}@{host}"),
    ("key-query", "base_url=http://{host}/v1%3Fkey%3D{secret}"),
    ("token-query", "base_url=http://{host}/v1%3Faccess_token%3D{secret}"),
    ("double", "base_url=http%253A%252F%252Fadmin%253A{secret}%2540{host}"),
    ("fullwidth", "base_url=http://admin:{secret}\uff20{host}"),
    ("option-name", "Api-Key={secret}"),
    ("key-shape", "region={key}"),
]


@pytest.mark.parametrize(("name", "option"), BYPASSES, ids=[b[0] for b in BYPASSES])
def test_encoded_credentials_in_a_model_string_refused_without_echo(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], name: str, option: str
) -> None:
    folder = instances_folder(tmp_path / "i")
    out = tmp_path / "o"
    with FakeLLMServer() as server:
        host = server.openai_base_url.split("://", 1)[1]
        args = run_args(server, folder, out)
        args[args.index("--model") + 1] = "openai/fake-model?" + option.format(
            secret=PASSWORD, host=host, key=KEY
        )
        del args[args.index("--base-url") : args.index("--base-url") + 2]
        result = cli(*args)
        assert server.requests == []  # refused before any request
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "credentials may not go into a model string" in errors[0]
    assert "Traceback" not in result.output
    printed = result.output + "".join(capfd.readouterr())
    assert PASSWORD not in printed and KEY not in printed
    assert _files_containing(tmp_path, PASSWORD) == [] and _files_containing(tmp_path, KEY) == []


def test_encoded_credentials_refused_from_python_without_echo(tmp_path: Path) -> None:
    from facetlab.errors import ConfigError
    from facetlab.runner import run

    folder = instances_folder(tmp_path / "i")
    with FakeLLMServer() as server:
        host = server.openai_base_url.split("://", 1)[1]
        model = f"openai/fake-model?base_url=http://admin%3A{PASSWORD}%40{host}"
        with pytest.raises(ConfigError) as caught:
            run(folder, "p1", model, out=tmp_path / "o", progress="none")
        assert server.requests == []
    assert PASSWORD not in str(caught.value)
    assert _files_containing(tmp_path, PASSWORD) == []


def test_a_reply_carrying_secret_shapes_is_stored_and_printed_without_them(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # keys the environment does not hold (so no exact-value redaction applies): the last
    # line of defence recognises their shapes in records, cache entries and sweep.json
    shapes = [
        "sk-ant-api03-AAAABBBBCCCCDDDDEEEE",
        "sk-proj-0123456789abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyA-0123456789abcdefghijklmnopqrstu",
        "Bearer eyJhbGciOiJIUzI1NiJ9eyJzdWIi",
        "http://admin:hunter2pw@example.com/v1",
    ]
    leaked = " ".join(shapes)
    folder = instances_folder(tmp_path / "i", n=2)
    out = tmp_path / "o"
    with FakeLLMServer(responder=lambda request: f"F1: 60, F2: 40. {leaked}") as server:
        result = cli(*run_args(server, folder, out))
        assert server.paid_calls().total() == 2
    assert result.exit_code == 0, result.output
    printed = result.output + "".join(capfd.readouterr())
    for secret in (
        "AAAABBBBCCCCDDDDEEEE",
        "0123456789abcdefghij",
        "AKIAIOSFODNN7EXAMPLE",
        "0123456789abcdefghijklmnopqrstu",
        "eyJhbGciOiJIUzI1NiJ9eyJzdWIi",
        "hunter2pw",
    ):
        assert secret not in printed
        assert _files_containing(out, secret) == [], secret
    records = list((out / "records").glob("*.json"))
    assert len(records) == 2
    assert all("***" in path.read_text() for path in records)


def test_the_console_is_redacted_too(tmp_path: Path) -> None:
    # an instance id shaped like an OpenAI key, printed in the list of skipped probes:
    # whatever prints it, the command's stdout/stderr carry no key shape
    shaped = "sk-proj-0123456789abcdefghij"
    folder = tmp_path / "i"
    write_instance(folder, shaped)
    result = cli(
        "run", "-i", str(folder), "--probes", "p1,p2", "--model", "simulated/wadd",
        "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "skipped P2" in result.output and "***" in result.output
    assert shaped not in result.output


@pytest.mark.slow  # an unreachable URL is retried with backoff
@pytest.mark.parametrize(
    "url",
    [
        "http:%2F%2Fadmin:{secret}@{host}",
        "http://admin%3A{secret}%40{host}",
        "http://{host}?key={secret}",
        "http://{host}/v1%3Fkey%3D{secret}",
    ],
    ids=["slashes", "colon-at", "key-query", "encoded-query"],
)
def test_base_url_credentials_however_encoded_reach_no_file_or_output(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], url: str
) -> None:
    folder = instances_folder(tmp_path / "i", n=1)
    with FakeLLMServer() as server:
        host = server.openai_base_url.split("://", 1)[1]
        args = run_args(server, folder, tmp_path / "o")
        args[args.index("--base-url") + 1] = url.format(secret=PASSWORD, host=host)
        result = cli(*args)  # the server may not be reachable at such a URL: any outcome
    assert "Traceback" not in result.output
    assert PASSWORD not in result.output + "".join(capfd.readouterr())
    assert _files_containing(tmp_path, PASSWORD) == []


def test_redaction_keeps_a_record_valid_json() -> None:
    import json

    from facetlab.backends._common import redact_secrets

    text = (
        'aws_secret_access_key="' + "A" * 40 + '" Bearer abcdefghijklmnopqrstu "quoted" '
        "http://u:p@host http%3A%2F%2Fu%3Ap%40host ?key=v\\ sk-ant-" + "x" * 30 + ' AIza"'
    )
    doc = json.dumps({"text": text, "key": "ab" * 32, "trial_id": "p2.task-0001.r0.3f9a01c2"})
    out = json.loads(redact_secrets(doc))
    assert out["key"] == "ab" * 32 and out["trial_id"] == "p2.task-0001.r0.3f9a01c2"
    for secret in ("A" * 40, "abcdefghijklmnopqrstu", "u:p@", "u%3Ap", "x" * 30):
        assert secret not in out["text"]
