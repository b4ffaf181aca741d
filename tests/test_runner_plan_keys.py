"""The planner's per-cell key hashing gives exactly the cache's keys."""

from __future__ import annotations

import pytest

from facetlab.client.cache import cache_key
from facetlab.runner.plan import _repeat_keys

PROMPTS = [
    "plain",
    'quotes " and \\" and ,"repeat":0,"template":"x"} inside',
    "unicode é ✓ \u2028 and a newline\n",
    "",
]


@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("endpoint", [None, "http://127.0.0.1:8000/v1"])
def test_repeat_keys_equal_cache_keys(prompt: str, endpoint: str | None) -> None:
    params = {"temperature": 0.7, "max_tokens": 1024, "seed": 3}
    key_of = _repeat_keys("openai/x", params, "facet-v3", prompt, endpoint=endpoint)
    for repeat in (0, 1, 9, 10, 12345):
        expected = cache_key("openai/x", params, "facet-v3", prompt, repeat, endpoint=endpoint)
        assert key_of(repeat) == expected
