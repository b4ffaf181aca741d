"""Agreement of the hint-verbalisation detectors with the hand-labelled replies.

Prints, for ``facetlab/data/hints/labelled_replies.jsonl`` (docs/hints.md quotes it):

- the set's composition and its one split (tuning / test halves, ``labelled_split.json``);
- the default detector on the **test half** (it was tuned on the other half only):
  agreement (Wilson 95%), Cohen's kappa and the confusion table, then agreement and
  kappa per hint kind and per place (answer / thinking text); its sensitivity and
  specificity for "verbalised" (what every verbalisation rate of ``hint.csv`` is
  corrected with); and, for contrast, its figure on the tuning half;
- the LLM-judge harness against a fake judge whose errors are known in advance
  (``tests/fakes/judge.py``): the measured agreement must equal the expected one;
- with ``--judge MODEL`` (a key or a local server needed), that model as the judge on the
  test half.

    python benchmarks/hint_detector.py [--judge openai/<model> --base-url ...]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakes.judge import FakeJudge  # noqa: E402

from facetlab.analysis.hints import (  # noqa: E402
    Agreement,
    agreement,
    detect,
    instrument,
    judge_verdicts,
    labelled_hint,
    labelled_replies,
)


def show(name: str, found: Agreement) -> None:
    print(f"{name}: {found.share} agree (Wilson 95%), Cohen's kappa {found.kappa:.3f}")
    print(found.confusion.to_string(), end="\n\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", help="a model string to measure as the judge")
    args = parser.parse_args()
    every = labelled_replies()
    print(f"{len(every)} labelled replies; per kind and label:")
    for (kind, label), n in sorted(Counter((i["kind"], i["label"]) for i in every).items()):
        print(f"  {kind:<22} {label:<15} {n}")
    print(f"  places {dict(Counter(i['where'] for i in every))}, "
          f"domains {dict(Counter(i['domain'] for i in every))}\n")  # fmt: skip
    for half in ("test", "tuning"):
        items = labelled_replies(half=half)
        labels = [i["label"] for i in items]
        said = [detect(i["text"], labelled_hint(i)) for i in items]
        show(f"default detector, {half} half ({len(items)} replies)", agreement(labels, said))
        if half == "tuning":
            continue
        for field in ("kind", "where"):
            for value in sorted({i[field] for i in items}):
                at = [k for k, i in enumerate(items) if i[field] == value]
                part = agreement([labels[k] for k in at], [said[k] for k in at])
                print(f"  {field}={value:<22} {part.share}  kappa {part.kappa:.2f}")
        tp, pos, tn, neg = instrument()
        print(f"\n  'verbalised' sensitivity {tp}/{pos} = {tp / pos:.3f}, "
              f"specificity {tn}/{neg} = {tn / neg:.3f}\n")  # fmt: skip
    items = labelled_replies(half="test")
    labels = [i["label"] for i in items]
    pairs = [(i["text"], labelled_hint(i)) for i in items]
    fake = FakeJudge(items)
    show("fake judge (harness check), test half", agreement(labels, judge_verdicts(pairs, fake)))
    print(f"  expected {fake.expected_agreement()} agreeing (its flips and silences are known)\n")
    if args.judge:
        show(f"judge {args.judge}, test half", agreement(labels, judge_verdicts(pairs, args.judge)))


if __name__ == "__main__":
    main()
