"""Bedrock batch inference against a local S3 (moto in server mode on 127.0.0.1) and a
stubbed control plane (botocore's ``Stubber`` on the real ``bedrock`` client).

The test plays Bedrock's part between the runs: it reads the JSONL the runner uploaded
and writes the job's ``.jsonl.out`` the way Bedrock documents it (``recordId``,
``modelInput``, ``modelOutput`` or ``error``). Submit -> persist -> collect, with failed
items recorded as failed trials, through the same records, cache and cost meter.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from test_runner_helpers import StubSuite, make_instances

from facetlab.backends.bedrock import BedrockBackend
from facetlab.client.pricing import cost_usd
from facetlab.errors import BackendError, ConfigError
from facetlab.runner import RunOptions, run

pytestmark = pytest.mark.slow  # a moto server in a thread

MODEL = "bedrock/deepseek.v3.2"
BUCKET = "facetlab-batches"
ROLE = "arn:aws:iam::123456789012:role/facetlab-batch"
REGION = "us-east-1"
KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
REPLY = "F1: 5, F2: 60, F3: 35\nno"
JOB_ARN = "arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/abc123def456"


@pytest.fixture(scope="module")
def s3_url() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def s3(s3_url: str) -> Any:
    client = boto3.client("s3", region_name=REGION, endpoint_url=s3_url, **KEYS)
    for obj in client.list_objects_v2(Bucket=BUCKET).get("Contents", []) if _has(client) else []:
        client.delete_object(Bucket=BUCKET, Key=obj["Key"])
    if not _has(client):
        client.create_bucket(Bucket=BUCKET)
    return client


def _has(client: Any) -> bool:
    return BUCKET in {b["Name"] for b in client.list_buckets()["Buckets"]}


class Plane:
    """The ``bedrock`` control plane, stubbed; what ``create_model_invocation_job`` got."""

    def __init__(self) -> None:
        self.client = boto3.client("bedrock", region_name=REGION, **KEYS)
        self.stub = Stubber(self.client)
        self.created: list[dict[str, Any]] = []
        self.client.meta.events.register(
            "provide-client-params.bedrock.CreateModelInvocationJob",
            lambda params, **_: self.created.append(dict(params)),
        )
        self.stub.activate()

    def job(self, status: str, message: str | None = None) -> dict[str, Any]:
        """A ``get_model_invocation_job`` reply for the job last created (a placeholder
        configuration before any)."""
        where = {"s3Uri": f"s3://{BUCKET}/placeholder"}
        sent = self.created[-1] if self.created else {
            "jobName": "pending", "modelId": "deepseek.v3.2", "roleArn": ROLE,
            "inputDataConfig": {"s3InputDataConfig": where},
            "outputDataConfig": {"s3OutputDataConfig": where},
        }  # fmt: skip
        reply = {
            "jobArn": JOB_ARN, "jobName": sent["jobName"], "modelId": sent["modelId"],
            "roleArn": sent["roleArn"], "status": status,
            "submitTime": dt.datetime(2026, 12, 1, tzinfo=dt.UTC),
            "inputDataConfig": sent["inputDataConfig"], "outputDataConfig": sent["outputDataConfig"],
            "modelInvocationType": "Converse",
        }  # fmt: skip
        if message:
            reply["message"] = message
        return reply


def _backend(plane: Plane, s3: Any) -> BedrockBackend:
    runtime = boto3.client("bedrock-runtime", region_name=REGION, **KEYS)  # never called
    return BedrockBackend("deepseek.v3.2", client=runtime, control_client=plane.client,
                          s3_client=s3, batch_s3=f"s3://{BUCKET}/sweeps/", batch_role=ROLE)  # fmt: skip


def _run(out: Path, backend: BedrockBackend, options: RunOptions) -> Any:
    return run(make_instances(), "p2,p3,c2", MODEL, out=out, backends={MODEL: backend},
               suite=StubSuite(), options=options, progress="none", console=io.StringIO())  # fmt: skip


def _converse_output(text: str) -> dict[str, Any]:
    return {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
            "stopReason": "end_turn", "usage": {"inputTokens": 1000, "outputTokens": 100,
            "totalTokens": 1100}, "metrics": {"latencyMs": 900}}  # fmt: skip


def _play_bedrock(s3: Any, created: dict[str, Any]) -> list[dict[str, Any]]:
    """Answer the uploaded records: #0 an error, #1 a malformed output, #2 missing, rest ok."""
    in_uri = created["inputDataConfig"]["s3InputDataConfig"]["s3Uri"]
    out_uri = created["outputDataConfig"]["s3OutputDataConfig"]["s3Uri"]
    key = in_uri.removeprefix(f"s3://{BUCKET}/")
    records = [
        json.loads(x) for x in s3.get_object(Bucket=BUCKET, Key=key)["Body"].read().splitlines()
    ]
    lines = []
    for i, rec in enumerate(records):
        if i == 0:
            lines.append(
                {**rec, "error": {"errorCode": 400, "errorMessage": "Malformed input request"}}
            )
        elif i == 1:
            lines.append({**rec, "modelOutput": {"output": "not a message"}})
        elif i > 2:
            lines.append({**rec, "modelOutput": _converse_output(REPLY)})
    prefix = out_uri.removeprefix(f"s3://{BUCKET}/") + JOB_ARN.rsplit("/", 1)[-1] + "/"
    body = "\n".join(json.dumps(x) for x in lines) + "\n"
    s3.put_object(Bucket=BUCKET, Key=f"{prefix}input.jsonl.out", Body=body.encode())
    s3.put_object(Bucket=BUCKET, Key=f"{prefix}manifest.json.out", Body=b'{"totalRecordCount": 8}')
    return records


def test_bedrock_batch_submit_persist_collect(tmp_path: Path, s3: Any) -> None:
    plane = Plane()
    plane.stub.add_response("create_model_invocation_job", {"jobArn": JOB_ARN})
    plane.stub.add_response("get_model_invocation_job", plane.job("InProgress"))

    # the first run submits, persists the job and returns (the job is still running)
    first = _run(tmp_path, _backend(plane, s3), RunOptions(batch=True))
    assert first.stats.ok == 0 and not (tmp_path / "records").exists()
    (sent,) = plane.created
    assert sent["modelId"] == "deepseek.v3.2" and sent["roleArn"] == ROLE
    assert sent["modelInvocationType"] == "Converse"
    assert sent["inputDataConfig"]["s3InputDataConfig"]["s3Uri"].startswith(
        f"s3://{BUCKET}/sweeps/"
    )
    (entry,) = json.loads((tmp_path / "batches.json").read_text())["batches"]
    assert entry["id"] == JOB_ARN and entry["state"] == "submitted" and len(entry["trials"]) == 8

    records = _play_bedrock(s3, sent)
    assert len(records) == 8 and {r["recordId"] for r in records} == set(entry["trials"])
    assert all(len(r["recordId"]) == 11 and r["recordId"].isalnum() for r in records)
    body = records[3]["modelInput"]  # the Converse body a direct call sends, minus modelId
    assert "modelId" not in body and body["messages"][0]["role"] == "user"
    assert body["inferenceConfig"]["maxTokens"] == 1024

    # collect: the job ended with one record unanswered
    plane.stub.add_response(
        "get_model_invocation_job",
        plane.job("PartiallyCompleted", "1 record timed out"),
        {"jobIdentifier": JOB_ARN},
    )
    done = _run(tmp_path, _backend(plane, s3), RunOptions(batch=True, batch_submit=False))
    plane.stub.assert_no_pending_responses()
    assert done.stats.ok == 5 and done.stats.failed == 3
    recs = {
        r["trial_id"]: r
        for r in (json.loads(p.read_text()) for p in (tmp_path / "records").glob("*.json"))
    }
    by_record = {rec["recordId"]: recs[entry["trials"][rec["recordId"]]] for rec in records}
    errored, malformed, missing = (by_record[records[i]["recordId"]] for i in range(3))
    assert errored["status"] == "failed" and "(400): Malformed input request" in errored["error"]
    assert malformed["status"] == "failed" and "malformed reply" in malformed["error"]
    assert missing["status"] == "failed"
    assert "bedrock batch job PartiallyCompleted: 1 record timed out" in missing["error"]
    ok = by_record[records[3]["recordId"]]
    assert ok["status"] == "ok" and ok["backend"] == "bedrock-batch"
    assert ok["parsed"]["weights"]["F2"] == 60.0
    assert ok["cost_usd"] == pytest.approx(cost_usd(MODEL, 1000, 100, batch=True))
    assert ok["cost_usd"] == pytest.approx(cost_usd(MODEL, 1000, 100) * 0.5)
    assert done.stats.spend_usd == pytest.approx(5 * ok["cost_usd"])
    assert [b["state"] for b in json.loads((tmp_path / "batches.json").read_text())["batches"]] == [
        "collected"
    ]

    # the answers are cached: a re-run pays nothing, submits nothing, calls nothing
    again = _run(tmp_path, _backend(plane, s3), RunOptions(batch=True, retry_errors=False))
    assert again.stats.already_done == 8 and len(plane.created) == 1


def test_bedrock_batch_without_s3_location_is_refused_before_upload(
    tmp_path: Path, s3: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FACETLAB_BEDROCK_BATCH_S3", raising=False)
    monkeypatch.delenv("FACETLAB_BEDROCK_BATCH_ROLE", raising=False)
    plane = Plane()
    runtime = boto3.client("bedrock-runtime", region_name=REGION, **KEYS)
    backend = BedrockBackend(
        "deepseek.v3.2", client=runtime, control_client=plane.client, s3_client=s3
    )
    with pytest.raises(ConfigError, match="FACETLAB_BEDROCK_BATCH_S3=s3://"):
        _run(tmp_path, backend, RunOptions(batch=True))
    assert not plane.created and "Contents" not in s3.list_objects_v2(Bucket=BUCKET)


def test_bedrock_batch_to_a_missing_bucket_is_one_line_and_nothing_persisted(
    tmp_path: Path, s3: Any
) -> None:
    plane = Plane()
    runtime = boto3.client("bedrock-runtime", region_name=REGION, **KEYS)
    backend = BedrockBackend("deepseek.v3.2", client=runtime, control_client=plane.client,
                             s3_client=s3, batch_s3="s3://no-such-bucket/x", batch_role=ROLE)  # fmt: skip
    with pytest.raises(BackendError) as caught:
        _run(tmp_path, backend, RunOptions(batch=True))
    message = str(caught.value)
    assert "\n" not in message and "NoSuchBucket" in message
    assert message.startswith("--batch: submitting 8 request(s) to bedrock failed")
    assert not plane.created and not (tmp_path / "batches.json").exists()
