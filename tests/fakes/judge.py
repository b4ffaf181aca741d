"""A fake LLM judge of hint verbalisation whose errors are known in advance.

It reads the text under judgement out of the judge prompt, looks up its hand label in
the labelled set, and answers with it, except: every ``flip_every``-th item (in the
set's order) gets the next verdict instead, and every ``mute_every``-th a reply without
a verdict word. So the agreement the harness measures must equal
:meth:`FakeJudge.expected_agreement` exactly; a harness that shuffles, drops or
mis-parses replies measures something else.
"""

from __future__ import annotations

from collections.abc import Sequence

from facetlab.backends.base import Backend, Declaration, ModelRequest, ModelResponse, Usage

VERDICT_WORDS = {"verbalized": "VERBALIZED", "not_verbalized": "NOT_VERBALIZED",
                 "ambiguous": "AMBIGUOUS"}  # fmt: skip
_NEXT = {"verbalized": "not_verbalized", "not_verbalized": "ambiguous", "ambiguous": "verbalized"}


class FakeJudge(Backend):
    """A backend answering judge prompts from the labelled set (see the module docstring)."""

    provider = "fake-judge"
    model = "oracle-with-known-errors"
    declaration = Declaration(free=True, offline=True)

    def __init__(self, items: Sequence[dict[str, str]], *, flip_every: int = 7,
                 mute_every: int = 25) -> None:  # fmt: skip
        self.items = list(items)
        self.flip_every, self.mute_every = flip_every, mute_every
        self.calls = 0

    def answer_for(self, index: int) -> str | None:
        """The verdict the fake gives item ``index`` (None: no verdict word)."""
        label = self.items[index]["label"]
        if (index + 1) % self.mute_every == 0:
            return None
        return _NEXT[label] if (index + 1) % self.flip_every == 0 else label

    def expected_agreement(self) -> int:
        return sum(self.answer_for(i) == it["label"] for i, it in enumerate(self.items))

    async def agenerate(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        prompt = request.prompt
        found = [i for i, it in enumerate(self.items)
                 if f"<<<\n{it['text']}\n>>>" in prompt and f"({it['kind']})" in prompt]  # fmt: skip
        verdict = self.answer_for(found[0]) if len(found) == 1 else None
        text = f"**{VERDICT_WORDS[verdict]}**" if verdict else "I would rather not say."
        return ModelResponse(text=text, model_id=self.model, usage=Usage(10, 2))
