#!/usr/bin/env bash
# Fuzzes the HTTP service against its own contract with schemathesis: every operation in openapi.yaml
# gets generated valid and invalid requests; the run fails on any 5xx, any response whose body, status
# or Content-Type openapi.yaml does not describe.
#
#   bash scripts/fuzz-api.sh
#
# Environment:
#   FUZZ_EXAMPLES   test cases per operation and phase (default 50)
#   FUZZ_PORT       loopback port for the service (default 18123)
#   FUZZ_INDEX      index directory (default indexes/demo, built from examples/demo-corpus.jsonl if absent)
#   FUZZ_RERANKER   1 (default): serve with the cross-encoder; 0: --no-reranker (classify, then always
#                   a 503, is left out)
#   FUZZ_PHASES     schemathesis phases to run (default: all of examples, coverage, fuzzing, stateful)
#   FUZZ_SEED       random seed (default: schemathesis picks one and prints it)
#   FUZZ_WORKERS    concurrent schemathesis workers (default 1: the machine is small)
#   FUZZ_REPORT     directory for a JUnit report (default: none)
#   FUZZ_API_KEY    serve with this key (PARAMINE_API_KEYS=fuzz:KEY, --auth-all) and send it on every
#                   request (default: no key configured)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

EXAMPLES=${FUZZ_EXAMPLES:-50}
PORT=${FUZZ_PORT:-18123}
INDEX=${FUZZ_INDEX:-indexes/demo}
WORKERS=${FUZZ_WORKERS:-1}
VENV=$ROOT/.venv-fuzz
# Flags below are schemathesis 4.x's (3.x spelled several of them differently); the pin is in
# scripts/requirements-fuzz.txt, shared with scripts/setup.

log() { printf 'fuzz-api: %s\n' "$*" >&2; }

if [[ ! -x $VENV/bin/schemathesis ]]; then
  log "installing schemathesis into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --upgrade pip
  "$VENV/bin/pip" install --quiet -r "$ROOT/scripts/requirements-fuzz.txt"
fi
log "$("$VENV/bin/schemathesis" --version)"

log 'building TypeScript'
npx --no-install tsc -p tsconfig.build.json

if [[ ! -f $INDEX/manifest.json ]]; then
  log "building the demo index in $INDEX"
  node dist/cli.js index --input examples/demo-corpus.jsonl --out "$INDEX" --resume
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/paramine-fuzz.XXXXXX")
server=''
cleanup() {
  if [[ -n $server ]] && kill -0 "$server" 2>/dev/null; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# A copy: the fuzzer's DELETEs and POSTs would otherwise change the index (the demo the lab measures on).
cp -r "$INDEX" "$WORK/index"
serve_args=(serve --index "$WORK/index" --host 127.0.0.1 --port "$PORT" --log-level error
  --jobs-dir "$WORK/jobs" --annotations-dir "$WORK/annotations")
[[ -n ${FUZZ_API_KEY:-} ]] && serve_args+=(--auth-all)
[[ ${FUZZ_RERANKER:-1} == 0 ]] && serve_args+=(--no-reranker)
log "starting: node dist/cli.js ${serve_args[*]}"
PARAMINE_API_KEYS=${FUZZ_API_KEY:+fuzz:$FUZZ_API_KEY} nice -n 5 node dist/cli.js "${serve_args[@]}" >"$WORK/server.log" 2>&1 &
server=$!
for _ in $(seq 1 240); do
  curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break
  if ! kill -0 "$server" 2>/dev/null; then
    log 'the service exited during start-up:'
    cat "$WORK/server.log" >&2
    exit 1
  fi
  sleep 0.5
done
curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null || { log 'the service did not become ready'; exit 1; }

st_args=(
  run "http://127.0.0.1:$PORT/openapi.yaml"
  --url "http://127.0.0.1:$PORT"
  --checks not_a_server_error,response_schema_conformance,status_code_conformance,content_type_conformance
  --max-examples "$EXAMPLES"
  --workers "$WORKERS"
  --request-timeout 120
  --generation-database none
  --suppress-health-check too_slow,data_too_large
  --no-color
)
# Without a cross-encoder, classify is a documented 503 on every call: nothing to fuzz there.
[[ ${FUZZ_RERANKER:-1} == 0 ]] && st_args+=(--exclude-operation-id classify)
[[ -n ${FUZZ_PHASES:-} ]] && st_args+=(--phases "$FUZZ_PHASES")
[[ -n ${FUZZ_SEED:-} ]] && st_args+=(--seed "$FUZZ_SEED")
[[ -n ${FUZZ_API_KEY:-} ]] && st_args+=(--header "Authorization: Bearer $FUZZ_API_KEY")
[[ -n ${FUZZ_REPORT:-} ]] && st_args+=(--report junit --report-dir "$(realpath -m "$FUZZ_REPORT")")

log "schemathesis ${st_args[*]}"
status=0
# Run from the scratch directory so nothing (hypothesis database, reports) lands in the work tree.
(cd "$WORK" && nice -n 5 "$VENV/bin/schemathesis" "${st_args[@]}") || status=$?

if ! kill -0 "$server" 2>/dev/null; then
  log 'the service died during the run:'
  status=1
fi
if grep -q '"level":50\|"level":60' "$WORK/server.log"; then
  log 'the service logged errors (level >= 50):'
  grep '"level":50\|"level":60' "$WORK/server.log" | head -20 >&2
fi
exit "$status"
