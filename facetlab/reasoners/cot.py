"""Simulated reasoners whose dependence on their own reasoning is known (COT / COTX probes).

``simulated/<rule>+cot-<mode>`` (:mod:`facetlab.reasoners.simulated` routes the COT and
COTX probes here). Every mode writes the same reasoning for a ``cot`` trial, from the
rule's decision: K-1 sentences that weigh the case for the answer it will not give (one
per other factor it weighed, heaviest first; none left: the case in general), then one
that names its top factor three times and concludes. The modes differ only in how they
answer a ``cotx`` prompt, which quotes a reasoning back:

- ``decorative``: the rule's answer, decided before the reasoning and blind to it;
- ``dependent``: the conclusion of the quoted reasoning, the direction (yes/no) it
  states last; a reasoning that states none (cut to nothing, filler) is a coin flip;
- ``mixed``: dependent with probability one half per trial, else decorative.

A reasoner without ``+cot-`` answers as ``decorative``.

>>> split_spec("wadd+cot-dependent?noise=2")
('dependent', 'wadd?noise=2')
>>> print(reasoning_text("yes", "F2", {"F1": 20.0, "F2": 50.0, "F3": 30.0}))
Read on its own, F3 could point to no. F1 might also suggest no. Some would still say no. But F2 outweighs them all: F2 is what matters here, and F2 favours yes, so the answer is yes.
"""

import random
import re
from collections.abc import Mapping
from typing import Any

from facetlab.errors import ConfigError
from facetlab.probes.cot import QUOTE_CLOSE, QUOTE_OPEN, SENTENCES, YES_NO

MODES = ("decorative", "dependent", "mixed")
PROBES = ("cot", "cotx")
_MODE = re.compile(r"(^|\+)cot-([a-z]*)")
_AGAINST = ("Read on its own, {f} could point to {o}.", "{f} might also suggest {o}.",
            "{f} leaves room for {o} as well.")  # fmt: skip


def split_spec(spec: str) -> tuple[str | None, str]:
    """``(mode, the spec without +cot-<mode>)``; ``(None, spec)`` without one."""
    found = _MODE.search(spec)
    if found and found.group(2) not in MODES:
        raise ConfigError(f"simulated reasoner {spec!r}: +cot-MODE takes one of {', '.join(MODES)}")
    rest = spec[: found.start()] + spec[found.end() :] if found else spec
    return (found.group(2) if found else None), ("wadd" + rest if found and rest[:1] in ("", "?", "+") else rest)  # fmt: skip


def with_mode(name: str, mode: str | None) -> str:
    """A reasoner's canonical name with ``+cot-<mode>`` put back before its options."""
    return re.sub(r"^[^?]*", lambda head: f"{head[0]}+cot-{mode}", name, count=1) if mode else name


def reasoning_text(answer: str, top: str, weights: Mapping[str, float]) -> str:
    """The reasoning of a ``cot`` trial (see the module docstring)."""
    other = "no" if answer == "yes" else "yes"
    rest = sorted((f for f in weights if f != top and weights[f] > 0), key=lambda f: -weights[f])
    said = [
        (_AGAINST[i].format(f=rest[i], o=other) if i < len(rest) else f"Some would still say {other}.")
        for i in range(SENTENCES - 1)
    ]  # fmt: skip
    return " ".join([*said, f"But {top} outweighs them all: {top} is what matters here, and "
                     f"{top} favours {answer}, so the answer is {answer}."])  # fmt: skip


def follows(mode: str | None, rng: random.Random) -> bool:
    """Whether a ``cotx`` reply follows the quoted reasoning: ``dependent`` always, ``mixed``
    on the trials whose seeded ``rng`` draws below one half (the truth the validity study scores)."""
    return mode == "dependent" or (mode == "mixed" and rng.random() < 0.5)


def reply(mode: str | None, decision: Any, context: Mapping[str, Any], prompt: str,
          rng: random.Random) -> str:  # fmt: skip
    """The reply of a ``cot`` or ``cotx`` trial; ``decision`` is the rule's
    (:class:`facetlab.reasoners.simulated.Decision`)."""
    if context.get("probe") == "cot":
        return f"{reasoning_text(decision.answer, decision.top, decision.weights)}\nAnswer: {decision.answer}"
    if not follows(mode, rng):
        return f"Answer: {decision.answer}"  # decorative: the rule's answer
    stated = YES_NO.findall(prompt.partition(QUOTE_OPEN)[2].partition(QUOTE_CLOSE)[0])
    return f"Answer: {stated[-1].lower() if stated else rng.choice(('yes', 'no'))}"
