"""AWS Bedrock backend: the ``bedrock-runtime`` Converse API through boto3.

    get_backend("bedrock/deepseek.v3.2", region="us-west-2")
    get_backend("bedrock/us.meta.llama4-scout-17b-instruct-v1:0?profile=research")

Credentials and region come from the boto3 session: ``profile=`` (else
``AWS_PROFILE``), ``region=`` (else ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` / the
profile's region). boto3 is synchronous, so each call runs in a worker thread
(``asyncio.to_thread``); botocore's own retries are off (the runner retries).

Sampling: ``max_tokens``, ``temperature``, ``top_p`` and ``system`` map to
``inferenceConfig`` / ``system``. Converse has no ``seed``: it is not sent, and
:meth:`BedrockBackend.effective_params` reports it as ``None``. Converse does not
echo a model id, so ``model_id`` is the requested one.

Batch inference (``--batch``): a model invocation job reads its requests from S3 and
writes the answers there. ``batch_s3`` (else ``FACETLAB_BEDROCK_BATCH_S3``) is the S3
location, ``s3://bucket/prefix``, and ``batch_role`` (else
``FACETLAB_BEDROCK_BATCH_ROLE``) the ARN of the IAM role Bedrock assumes to read and
write it; the control-plane (``bedrock``) and ``s3`` clients come from the same
session (see :mod:`facetlab.runner.batch`).
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import boto3
import botocore.config
import botocore.exceptions
import urllib3.exceptions
from botocore.parsers import ResponseParserError

from facetlab.backends._common import (
    CappedBody,
    ReplyBodyError,
    option_float,
    parse_retry_after,
    redact,
    thinking_config,
    with_extra,
)
from facetlab.backends.base import (
    DEFAULT_TIMEOUT_S,
    Backend,
    Declaration,
    ModelRequest,
    ModelResponse,
    Usage,
)
from facetlab.errors import BackendError, ConfigError, PermanentBackendError, TransientBackendError

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient

TRANSIENT_CODES = frozenset(
    {
        "ThrottlingException",
        "TooManyRequestsException",
        "ServiceUnavailableException",
        "ServiceUnavailable",
        "InternalServerException",
        "InternalServerError",
        "ModelNotReadyException",
        "ModelTimeoutException",
        "ServiceQuotaExceededException",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)
"""Converse error codes worth retrying; every other code is permanent unless its status is 429/5xx."""

REFUSAL_STOPS = frozenset({"guardrail_intervened", "content_filtered"})

THINKING_MODELS = "anthropic.claude"
"""What the id of a Bedrock model that takes ``thinking`` contains: Claude models, by
their own id, a cross-region profile (``us.anthropic.claude-…``) or either's ARN."""


def takes_thinking(model: str) -> bool:
    """Whether the Bedrock model ``model`` takes ``thinking`` (the Messages API's setting,
    sent in ``additionalModelRequestFields``): Claude models do, other models answer 400.

    An application inference profile's ARN does not say which model it runs, so it is
    given the benefit of the doubt (the provider's answer says).

    >>> takes_thinking("us.anthropic.claude-sonnet-4-6"), takes_thinking("deepseek.v3.2")
    (True, False)
    """
    return THINKING_MODELS in model.lower() or ":application-inference-profile/" in model


def response_from_converse(
    response: dict[str, Any], *, model_id: str, latency_s: float | None = None
) -> ModelResponse:
    """Convert a Converse response dict to a :class:`ModelResponse`.

    Text is the concatenation of the ``text`` content blocks (reasoning blocks are
    skipped); ``refusal`` is true for ``guardrail_intervened`` / ``content_filtered``.
    """
    message = (response.get("output") or {}).get("message") or {}
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    text = "".join(str(block["text"]) for block in blocks if "text" in block)
    thinking = "".join(
        str(((block.get("reasoningContent") or {}).get("reasoningText") or {}).get("text", ""))
        for block in blocks
        if "reasoningContent" in block
    )
    usage = response.get("usage") or {}
    stop = response.get("stopReason")
    meta = response.get("ResponseMetadata") or {}
    return ModelResponse(
        text=text,
        model_id=model_id,
        usage=Usage(
            input_tokens=usage.get("inputTokens"),
            output_tokens=usage.get("outputTokens"),
            cached_input_tokens=usage.get("cacheReadInputTokens"),
        ),
        stop_reason=stop,
        latency_s=latency_s,
        refusal=stop in REFUSAL_STOPS,
        provider_request_id=meta.get("RequestId"),
        thinking=thinking or None,
    )


def map_bedrock_error(exc: BaseException, *, secrets: tuple[str | None, ...] = ()) -> BackendError:
    """Map a botocore exception to a facetlab backend error (see ``TRANSIENT_CODES``)."""
    if isinstance(exc, ReplyBodyError):  # too large (not retried), or broken off
        kind = TransientBackendError if exc.transient else PermanentBackendError
        return kind(redact(f"bedrock: {exc}", secrets), provider="bedrock")
    if isinstance(exc, botocore.exceptions.ClientError):
        error = exc.response.get("Error", {})
        meta = exc.response.get("ResponseMetadata", {})
        code = str(error.get("Code", "Unknown"))
        message = str(error.get("Message", "") or exc)
        status = meta.get("HTTPStatusCode")
        request_id = meta.get("RequestId")
        suffix = f" [request id {request_id}]" if request_id else ""
        text = redact(f"bedrock {code} (HTTP {status}): {message}{suffix}", secrets)
        transient = code in TRANSIENT_CODES or (
            isinstance(status, int) and (status in (408, 429) or status >= 500)
        )
        if transient:
            return TransientBackendError(
                text,
                provider="bedrock",
                status=status,
                retry_after=parse_retry_after(meta.get("HTTPHeaders") or {}),
            )
        return PermanentBackendError(text, provider="bedrock", status=status)
    if isinstance(  # urllib3's own error: a body that broke off while cap_replies read it
        exc,
        botocore.exceptions.ConnectionError
        | botocore.exceptions.HTTPClientError
        | botocore.exceptions.ResponseStreamingError
        | urllib3.exceptions.HTTPError,
    ):
        return TransientBackendError(
            redact(
                f"bedrock: connection failed, dropped or timed out ({type(exc).__name__}: {exc})",
                secrets,
            ),
            provider="bedrock",
        )
    if isinstance(
        exc, botocore.exceptions.NoCredentialsError | botocore.exceptions.PartialCredentialsError
    ):
        return PermanentBackendError(
            "bedrock: no AWS credentials: set AWS_PROFILE (or pass profile=...) or "
            "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY",
            provider="bedrock",
        )
    name = type(exc).__name__
    if isinstance(exc, ResponseParserError | UnicodeDecodeError):  # a garbage body (a proxy's)
        return TransientBackendError(
            redact(f"bedrock: unparseable response body ({name}: {exc})", secrets),
            provider="bedrock",
        )
    return PermanentBackendError(
        redact(f"bedrock: unexpected client error ({name}: {exc})", secrets), provider="bedrock"
    )


def cap_replies(client: Any) -> None:
    """Read each reply of a botocore ``client`` within the one cap (:class:`CappedBody`):
    botocore reads a body whole before it looks at it. (It does not decompress: a gzip
    bomb stays its compressed size and fails to parse.)"""
    session = getattr(getattr(client, "_endpoint", None), "http_session", None)
    send = getattr(session, "send", None)
    if send is None:
        return

    def capped(request: Any) -> Any:
        request.stream_output = True  # botocore leaves the body unread: read it here
        response = send(request)
        body = CappedBody(response.headers)
        for chunk in response.raw.stream(2**16, decode_content=False):
            body.add(chunk)
        response._content = b"".join(body.parts)
        return response

    session.send = capped  # type: ignore[union-attr]


class BedrockBackend(Backend):
    """Models on AWS Bedrock through Converse."""

    provider = "bedrock"
    declaration = Declaration(
        http_timeout=True,
        sends=frozenset({"max_tokens", "system", "temperature", "top_p"}),
        endpoint_env=("AWS_REGION", "AWS_DEFAULT_REGION"),
        endpoint_option="region",
        thinking=frozenset({"off", "adaptive", "budget"}),
        min_thinking_budget=1024,
        batch_api="bedrock",
    )

    @classmethod
    def declaration_for(cls, model: str) -> Declaration:
        """What ``model`` takes: the provider's declaration, with no ``thinking`` setting
        for a model that does not take one (see :func:`takes_thinking`)."""
        if takes_thinking(model):
            return cls.declaration
        return replace(
            cls.declaration,
            thinking=frozenset(),
            no_thinking_reason=(
                f"bedrock model {model} does not take it; on bedrock only Claude models "
                f"({THINKING_MODELS}-*, us.{THINKING_MODELS}-*, ...) take thinking "
                "(off, adaptive or a budget)"
            ),
        )

    def __init__(
        self,
        model: str,
        *,
        region: str | None = None,
        profile: str | None = None,
        timeout: float | str | None = DEFAULT_TIMEOUT_S,
        endpoint_url: str | None = None,
        base_url: str | None = None,
        client: BedrockRuntimeClient | None = None,
        batch_s3: str | None = None,
        batch_role: str | None = None,
        control_client: Any = None,
        s3_client: Any = None,
        **options: Any,
    ) -> None:
        if options:
            raise TypeError(f"BedrockBackend: unknown options {sorted(options)}")
        self.model = model
        self.declaration = self.declaration_for(model)
        self.region = region
        self.profile = profile
        self._access_key_id: str | None = None
        self.batch_s3 = batch_s3
        self.batch_role = batch_role
        self._control = control_client
        self._s3 = s3_client
        self._session: boto3.Session | None = None
        self._config: botocore.config.Config | None = None
        if client is None:
            # boto3 reads AWS_DEFAULT_REGION; AWS_REGION (the AWS SDKs' and CLI v2's name) too
            region = region or os.environ.get("AWS_REGION", "").strip() or None
            try:
                session = boto3.Session(profile_name=profile, region_name=region)
            except botocore.exceptions.ProfileNotFound as exc:
                raise ConfigError(f"bedrock: AWS profile {profile!r} not found ({exc})") from None
            credentials = session.get_credentials()
            if credentials is None:
                raise ConfigError(
                    "bedrock: no AWS credentials: set AWS_PROFILE (or pass profile=...) or "
                    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                )
            self._access_key_id = credentials.access_key
            if not session.region_name:
                raise ConfigError(
                    "bedrock: no AWS region: set AWS_REGION (or pass region=..., or set a "
                    "region in the profile)"
                )
            self.region = session.region_name
            read_timeout = (
                option_float({"timeout": timeout}, "timeout", DEFAULT_TIMEOUT_S)
                or DEFAULT_TIMEOUT_S
            )
            config = botocore.config.Config(
                retries={"total_max_attempts": 1, "mode": "standard"},
                read_timeout=read_timeout,
                connect_timeout=min(60.0, read_timeout),
                max_pool_connections=64,
            )
            client = session.client(
                "bedrock-runtime", config=config, endpoint_url=endpoint_url or base_url
            )
            self._session, self._config = session, config
        cap_replies(client)
        self.client: BedrockRuntimeClient = client

    def __repr__(self) -> str:
        extra = "".join(
            f", {k}={v!r}" for k, v in (("region", self.region), ("profile", self.profile)) if v
        )
        return f"BedrockBackend(model={self.model!r}{extra})"

    __str__ = __repr__

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact ``converse`` keyword arguments for ``request``."""
        params = request.params
        inference: dict[str, Any] = {"maxTokens": params.max_tokens}
        if params.temperature is not None:
            inference["temperature"] = params.temperature
        if params.top_p is not None:
            inference["topP"] = params.top_p
        body: dict[str, Any] = {
            "modelId": self.model,
            "messages": [{"role": "user", "content": [{"text": request.prompt}]}],
            "inferenceConfig": inference,
        }
        if params.system is not None:
            body["system"] = [{"text": params.system}]
        if params.thinking is not None:
            # Claude on Bedrock takes the Messages API's thinking as a model-specific field
            body["additionalModelRequestFields"] = {"thinking": thinking_config(params.thinking)}
        return with_extra(body, request.extra_body, into="additionalModelRequestFields")

    def batch_location(self) -> tuple[str, str]:
        """Where batch jobs read and write (``s3://bucket/prefix``) and the IAM role they run as."""
        s3 = self.batch_s3 or os.environ.get("FACETLAB_BEDROCK_BATCH_S3", "").strip()
        role = self.batch_role or os.environ.get("FACETLAB_BEDROCK_BATCH_ROLE", "").strip()
        if not s3 or not role:
            raise ConfigError(
                "--batch on bedrock needs an S3 location and an IAM role: set "
                "FACETLAB_BEDROCK_BATCH_S3=s3://<bucket>/<prefix> and "
                "FACETLAB_BEDROCK_BATCH_ROLE=arn:aws:iam::<account>:role/<name>"
            )
        if not s3.startswith("s3://"):
            raise ConfigError(
                f"FACETLAB_BEDROCK_BATCH_S3 is {s3!r}; expected s3://<bucket>/<prefix>"
            )
        return s3, role

    def batch_clients(self) -> tuple[Any, Any]:
        """The ``bedrock`` control-plane and ``s3`` clients of this backend's session."""
        if self._control is None or self._s3 is None:
            session = self._session or boto3.Session(
                profile_name=self.profile, region_name=self.region
            )
            self._control = self._control or session.client("bedrock", config=self._config)
            self._s3 = self._s3 or session.client("s3", config=self._config)
        return self._control, self._s3

    def map_error(self, exc: BaseException) -> BackendError:
        return map_bedrock_error(exc, secrets=(self._access_key_id,))

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        body = self.request_body(request)
        started = time.perf_counter()
        try:
            response = await asyncio.to_thread(lambda: dict(self.client.converse(**body)))
        except (
            botocore.exceptions.BotoCoreError,
            botocore.exceptions.ClientError,
            ResponseParserError,
            ReplyBodyError,
            UnicodeDecodeError,
            urllib3.exceptions.HTTPError,
        ) as exc:
            raise self.map_error(exc) from None
        return response_from_converse(
            response, model_id=self.model, latency_s=time.perf_counter() - started
        )

    async def aclose(self) -> None:
        self.client.close()
