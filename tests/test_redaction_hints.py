"""The secret patterns run only where a substring they need is present (issue 27: CPU per
trial). Skipping one must never let a secret through: on any text the result is the
same as running every pattern."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from facetlab.backends import _common
from facetlab.backends._common import REDACTED, redact_secrets


def _every_pattern(text: str) -> str:
    """The reference: each pattern run, in the same order, whatever the text holds."""
    text = _common._SECRET_SHAPES.sub(REDACTED, text)
    text = _common._AWS_SECRET.sub(rf"\1{REDACTED}", text)
    text = _common._BEARER.sub(rf"\1{REDACTED}", text)
    text = _common._USERINFO_ANY.sub(rf"\1{REDACTED}\2", text)
    text = _common._KEY_QUERY.sub(rf"\1{REDACTED}", text)
    return _common._SECRET_KEY_VALUE.sub(rf"\1{REDACTED}\2", text)


# pieces of every secret shape and of the text around them, in both cases, encoded and not
_PIECES = [
    "sk-", "ant-", "proj-", "AKIA", "ASIA", "AIza", "ya29.", "risk-benefit", "abcdEFGH0123",
    "A" * 16, "x" * 20, "aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "=", "%3D", "%3d",
    '"', ":", " ", "\\", "Bearer ", "BEARER\t", "bearer ", "@", "%40", "://", "//", "/",
    "%2F", "%2f", "%3A", "%3a", "http", "user", ":pw", "?", "&", ";", "%3F", "%26", "key",
    "api_key", "token", "secret", "sig", "\u017f", "\u212a", "\u0130", "\u0131", "é", "—",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=24).map("".join))
def test_redaction_is_every_pattern_run(text: str) -> None:
    assert redact_secrets(text) == _every_pattern(text)


@pytest.mark.parametrize(
    "text",
    [
        "see http%3A//admin:hunter2pass@host/v1",  # a half-encoded URL (was let through)
        "http:/%2Fadmin:hunter2pass@host",
        "aws_secret_access_\u212aey=" + "A" * 40,  # a Kelvin sign read as k by (?i)
        "\u017fk-" + "x" * 20 + " Bearer abcdefghijklmnop1234",
    ],
)
def test_secrets_the_hints_must_not_miss(text: str) -> None:
    out = redact_secrets(text)
    assert out == _every_pattern(text) and out != text


def test_words_that_look_like_a_key_prefix_are_left_alone() -> None:
    text = "a risk-benefit test, a task-level duty, a desk-bound clerk"
    assert redact_secrets(text) == text


# the names a JSON string is redacted under, near misses (a record's own "key", "keys",
# "monkey", "potential") and what may stand before and after them
_NAMES = [
    "apikey", "api_key", "api-key", "accesskey", "access_key", "access-key", "privatekey",
    "private_key", "private-key", "secret", "token", "password", "passwd", "pwd",
    "authorization", "credential", "credentials", "cookie", "key", "keys", "monkey",
    "potential", "passw", "api key", "\u212aey", "to\u212aen",
]  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(
    st.sampled_from(["", "x", "my_", "X-", "a" * 40]),
    st.sampled_from(_NAMES),
    st.sampled_from([str.lower, str.upper, str.title]),
    st.sampled_from(["", "s", "_id"]),
    st.sampled_from(["", " ", "\n  "]),
    st.text(alphabet='ab\\"', max_size=6),
)
def test_a_json_string_under_a_secret_name_is_every_pattern_run(
    before: str, name: str, case: Any, after: str, space: str, value: str
) -> None:
    text = (
        f'{{"{before}{case(name)}{after}"{space}:{space}"v{value}", "prompt": "a potential key"}}'
    )
    assert redact_secrets(text) == _every_pattern(text)
