#!/usr/bin/env bash
# Run every check: lint, types, the test suite (which includes the paper
# reproduction and the claims audit). Uses the project's .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
[ -x "$PY" ] || { echo "No .venv: run 'bash scripts/setup.sh' first." >&2; exit 2; }
if [ -z "${FACETLAB_DATA_MIRROR:-}" ] && [ -f ../shared/facet-data/SHA256SUMS ]; then
  export FACETLAB_DATA_MIRROR="$(cd .. && pwd)/shared/facet-data"
fi
export MPLBACKEND=Agg

echo "== ruff"; .venv/bin/ruff check facetlab tests benchmarks examples notebooks/*.py && .venv/bin/ruff format --check facetlab tests benchmarks examples notebooks/*.py
echo "== mypy --strict"; .venv/bin/mypy facetlab
echo "== pytest"; "$PY" -m pytest -q "$@"
