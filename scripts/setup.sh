#!/usr/bin/env bash
# One command from a fresh clone: check that the FACET v3 data can be obtained
# (first, in seconds), create .venv, install facetlab with its dev tools, obtain
# and verify the data, and run the main job (`facetlab reproduce`: every table,
# figure and claim of the paper, offline). Ends with the next steps.
#   bash scripts/setup.sh                  # all of the above
#   bash scripts/setup.sh --no-reproduce   # install only: .venv, facetlab, the git filter
set -euo pipefail
cd "$(dirname "$0")/.."
REPRODUCE=1
for arg in "$@"; do
  case "$arg" in
    --no-reproduce) REPRODUCE=0 ;;
    -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "error: unknown option $arg (expected --no-reproduce or --help)" >&2; exit 2 ;;
  esac
done
if [ -z "${FACETLAB_DATA_MIRROR:-}" ] && [ -f ../shared/facet-data/SHA256SUMS ]; then
  export FACETLAB_DATA_MIRROR="$(cd .. && pwd)/shared/facet-data"
fi
export MPLBACKEND=Agg

# --- 1. The data source, before anything slow: without it setup cannot finish.
COMMIT="$(grep -o -m1 '[0-9a-f]\{40\}' facetlab/data/registry.txt)"
URL="https://raw.githubusercontent.com/Venkateshwar-PortoAI/facet-benchmark/${COMMIT}/instances/facet-neg-0001.json"

fail_data() {
  {
    echo "error: $1"
    echo "  setup stopped before installing anything: the FACET v3 data is needed to finish."
    echo "  Fix: point FACETLAB_DATA_MIRROR at a local copy of the data (a folder holding"
    echo "  instances/ and results/ from commit ${COMMIT:0:7}, or the unpacked Zenodo archive"
    echo "  doi:10.5281/zenodo.19557436), then run setup again:"
    echo "    FACETLAB_DATA_MIRROR=/path/to/facet-data bash scripts/setup.sh"
  } >&2
  exit 1
}

default_data_dir() {
  case "$(uname -s)" in
    Darwin) echo "$HOME/Library/Caches/facetlab/facet-v3-${COMMIT:0:7}" ;;
    *) echo "${XDG_CACHE_HOME:-$HOME/.cache}/facetlab/facet-v3-${COMMIT:0:7}" ;;
  esac
}

check_data_source() {
  if [ -n "${FACETLAB_DATA_MIRROR:-}" ]; then
    [ -d "$FACETLAB_DATA_MIRROR" ] ||
      fail_data "FACETLAB_DATA_MIRROR=$FACETLAB_DATA_MIRROR is not a folder"
    [ -d "$FACETLAB_DATA_MIRROR/instances" ] ||
      fail_data "FACETLAB_DATA_MIRROR=$FACETLAB_DATA_MIRROR: no instances/ here (expected the FACET v3 data root holding instances/ and results/)"
    echo "data source: mirror $FACETLAB_DATA_MIRROR"
    return
  fi
  local dir="${FACETLAB_DATA_DIR:-$(default_data_dir)}"
  if [ -d "$dir/instances" ]; then
    echo "data source: already fetched in $dir"
    return
  fi
  # The pinned URL, within 15 s whatever DNS does (urllib has no DNS timeout).
  local limit=()
  command -v timeout >/dev/null && limit=(timeout 15)
  local why
  if ! why="$(${limit[@]+"${limit[@]}"} python3 - "$URL" 2>&1 <<'PY'
import sys
import urllib.request

try:
    urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="HEAD"), timeout=8)
except Exception as exc:  # any failure means: no usable network source
    sys.exit(f"{type(exc).__name__}: {exc}")
PY
  )"; then
    fail_data "no FACETLAB_DATA_MIRROR, no data in $dir, and the pinned download is not reachable (${why:-timed out})"
  fi
  echo "data source: network (pinned commit ${COMMIT:0:7})"
}

if [ "$REPRODUCE" = 1 ]; then check_data_source; fi  # install-only needs no data

# --- 2. Install, obtain and verify the data, reproduce the paper.
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
# Only what the main job needs (and the notebook git filter's nbstripout): the test
# extras (dev, inspect, browser: more than half the install time, docs/reproduction.md)
# are installed by scripts/test.sh the first time it runs.
.venv/bin/python -m pip install --quiet -e . "nbstripout>=0.7"
bash scripts/git-notebook-filter.sh
if [ "$REPRODUCE" = 0 ]; then
  cat <<'EOF'

facetlab is installed (no data fetched, nothing reproduced). Next steps:
  source .venv/bin/activate        # facetlab, craft, jupyter and papermill on PATH
  facetlab data fetch              # the FACET v3 data (or set FACETLAB_DATA_MIRROR)
  facetlab reproduce               # every table, figure and claim of the paper
  facetlab new-domain NAME         # or start your own domain (docs/instances.md)
EOF
  exit 0
fi
.venv/bin/facetlab data fetch || {
  echo "setup stopped: fix the data source named above, then run 'bash scripts/setup.sh' again." >&2
  exit 1
}
.venv/bin/facetlab reproduce

# --- 3. Where to go from here.
cat <<'EOF'

facetlab is set up. Next steps:
  source .venv/bin/activate        # puts facetlab, craft, jupyter and papermill on PATH
  jupyter lab                      # then open notebooks/01_overview.ipynb
  facetlab --help                  # the command line (facetlab data info: the data and its citation)
  paper/REPRODUCTION.md            # what `facetlab reproduce` just regenerated, next to the paper
  bash scripts/test.sh             # every check (lint, types, reproduction, tests)
EOF
