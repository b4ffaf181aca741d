"""Agreement of the hint-verbalisation detectors with the hand-labelled replies.

Prints, for ``facetlab/data/hints/labelled_replies.jsonl`` (docs/hints.md quotes it):

- the rule detector: agreement (Wilson 95%), Cohen's kappa, the confusion table, and
  the agreement per hint kind and per text kind (answer / thinking);
- the LLM-judge harness against a fake judge whose errors are known in advance
  (``tests/fakes/judge.py``): the measured agreement must equal the expected one;
- with ``--judge MODEL`` (a key or a local server needed), that model as the judge.

    python benchmarks/hint_detector.py [--judge anthropic/claude-sonnet-4-6]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.judge import FakeJudge  # noqa: E402

from facetlab.analysis.hints import (  # noqa: E402
    Agreement,
    agreement,
    detect,
    judge_verdicts,
    labelled_replies,
)
from facetlab.probes.hint import load_hints, planted  # noqa: E402


def show(name: str, found: Agreement) -> None:
    print(f"{name}: {found.share} agree (Wilson 95%), Cohen's kappa {found.kappa:.3f}")
    print(found.confusion.to_string(), end="\n\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", help="a model string to measure as the judge")
    args = parser.parse_args()
    items = labelled_replies()
    kinds = {k.kind: k for k in load_hints(None).kinds}
    hints = [planted(kinds[i["kind"]], i["target"]) for i in items]
    labels = [i["label"] for i in items]
    composition = {(i["kind"], i["label"]) for i in items}
    print(f"{len(items)} labelled replies; per kind and label:")
    for kind, label in sorted(composition):
        n = sum(1 for i in items if (i["kind"], i["label"]) == (kind, label))
        print(f"  {kind:<11} {label:<15} {n}")
    print(f"  answer texts {sum(i['where'] == 'answer' for i in items)}, thinking texts "
          f"{sum(i['where'] == 'thinking' for i in items)}\n")  # fmt: skip
    rule = [detect(i["text"], h) for i, h in zip(items, hints, strict=True)]
    show("rule", agreement(labels, rule))
    for field in ("kind", "where"):
        for value in sorted({i[field] for i in items}):
            at = [k for k, i in enumerate(items) if i[field] == value]
            part = agreement([labels[k] for k in at], [rule[k] for k in at])
            print(f"  rule on {field}={value}: {part.share}")
    print()
    fake = FakeJudge(items)
    said = judge_verdicts([(i["text"], h) for i, h in zip(items, hints, strict=True)], fake)
    show("fake judge", agreement(labels, said))
    print(f"  expected {fake.expected_agreement()} agreeing (its flips and silences are known)\n")
    if args.judge:
        pairs = [(i["text"], h) for i, h in zip(items, hints, strict=True)]
        show(f"judge {args.judge}", agreement(labels, judge_verdicts(pairs, args.judge)))


if __name__ == "__main__":
    main()
