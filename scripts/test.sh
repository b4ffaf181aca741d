#!/usr/bin/env bash
# Run every check: lint, types, the paper reproduction (committed CSVs must not
# change), then the test suite. Uses the project's .venv. The paper is computed once:
# pytest reuses this run's outputs (FACETLAB_REPRODUCED) instead of regenerating them.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || { echo "No .venv: run 'bash scripts/setup.sh' first." >&2; exit 2; }
# setup.sh installs what the main job needs; the checks need the test extras (once)
if ! "$PY" -c "import pytest, mypy, importlinter, hypothesis, moto, playwright" 2>/dev/null; then
  echo "== installing the test extras (dev, inspect, browser): once"
  "$PY" -m pip install --quiet -e ".[dev,inspect,browser]"
fi
if [ -z "${FACETLAB_DATA_MIRROR:-}" ] && [ -f ../shared/facet-data/SHA256SUMS ]; then
  export FACETLAB_DATA_MIRROR="$(cd .. && pwd)/shared/facet-data"
fi
export MPLBACKEND=Agg
LINTED=(facetlab tools tests benchmarks examples notebooks/*.ipynb)

echo "== ruff"
.venv/bin/ruff check "${LINTED[@]}"
.venv/bin/ruff format --check "${LINTED[@]}"

echo "== mypy --strict"
.venv/bin/mypy facetlab

echo "== lint-imports (declared layers, pyproject [tool.importlinter])"
.venv/bin/lint-imports

echo "== facetlab reproduce"
# exits 1 when a notebook fails or a claim is ERROR / not the registry's expected status;
# executed notebooks go to _build/notebooks (read by the tests below)
.venv/bin/facetlab reproduce
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # REPRODUCTION.md records no commit or code digest, so it changes only with a result
  if ! git diff --exit-code --stat -- 'paper/tables/*.csv' paper/claims.csv paper/findings.csv paper/REPRODUCTION.md; then
    echo "Regenerating the paper changed the committed outputs above: review the diff and commit it." >&2
    exit 1
  fi
fi

echo "== pytest"
FACETLAB_REPRODUCED="$PWD/_build/notebooks" "$PY" -m pytest -q "$@"
