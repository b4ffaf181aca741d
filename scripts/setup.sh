#!/usr/bin/env bash
# One command from a fresh clone: create .venv, install facetlab with its dev
# tools, obtain and verify the FACET v3 data, and run the main job
# (`facetlab reproduce`: every table, figure and claim of the paper, offline).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${FACETLAB_DATA_MIRROR:-}" ] && [ -f ../shared/facet-data/SHA256SUMS ]; then
  export FACETLAB_DATA_MIRROR="$(cd .. && pwd)/shared/facet-data"
fi
export MPLBACKEND=Agg
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[dev,inspect]"
bash scripts/git-notebook-filter.sh
.venv/bin/facetlab data fetch
.venv/bin/facetlab reproduce
