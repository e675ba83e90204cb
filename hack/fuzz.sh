#!/usr/bin/env bash
# `make fuzz`: schemathesis against a real agentplane (embedded home, --demo: the scripted model)
# on loopback, driven by the OpenAPI document the server publishes at /openapi.json. Every phase
# (examples, coverage, fuzzing, stateful), every check, with the bounded budget and the
# documented exceptions of hack/fuzz/schemathesis.toml. Exit status: schemathesis'.
#
# schemathesis (PyPI, pinned below) lives in a virtualenv under ~/.cache/agentplane/schemathesis,
# made on first use. FUZZ_MAX_EXAMPLES overrides the per-operation budget.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HACK_DIR")"
VERSION=4.32.5
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/schemathesis/$VERSION"

log() { echo "fuzz: $*" >&2; }

# Run through the venv's python: the venv is made under a temporary name and moved, which leaves
# the shebang of its bin/schemathesis pointing at the old name; python finds its venv wherever it is.
schemathesis() { "$VENV/bin/python" -m schemathesis.cli "$@"; }
if [[ ! -x "$VENV/bin/schemathesis" ]]; then
  log "installing schemathesis $VERSION into $VENV"
  rm -rf "$VENV.tmp"
  python3 -m venv "$VENV.tmp"
  "$VENV.tmp/bin/pip" install -q --disable-pip-version-check "schemathesis==$VERSION"
  rm -rf "$VENV" && mv "$VENV.tmp" "$VENV"
fi

work="$(mktemp -d)"
server=""
cleanup() {
  [[ -n "$server" ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
node "$REPO/dist/cmd/agentplane/main.js" serve --demo --host 127.0.0.1 --port "$port" --data-dir "$work/data" >"$work/server.log" 2>&1 &
server=$!
url="http://127.0.0.1:$port"
for _ in $(seq 1 150); do
  curl -fsS "$url/readyz" >/dev/null 2>&1 && break
  kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; log "the server exited"; exit 1; }
  sleep 0.2
done
log "agentplane at $url; schemathesis $VERSION"

status=0
schemathesis --config-file "$HACK_DIR/fuzz/schemathesis.toml" run "$url/openapi.json" \
  --checks all --phases examples,coverage,fuzzing,stateful \
  ${FUZZ_MAX_EXAMPLES:+--max-examples "$FUZZ_MAX_EXAMPLES"} \
  --seed "${FUZZ_SEED:-$RANDOM}" --no-color || status=$?
# The aggregated API (agentplane.io/v1alpha1), served in the embedded home too, from its own
# OpenAPI v3 document, every check, every operation but the /watch/ paths (their streams: see
# docs/reliability.md). hack/fuzz/hooks.py sends logs with follow=false and lists with watch=false, and gives schemathesis the
# REST document's portable `model` pattern (taken from the build). A time budget
# keeps the whole of `make fuzz` to a few minutes (FUZZ_AGG_MAX_TIME, default 120 s).
log "aggregated API: $url/openapi/v3/apis/agentplane.io/v1alpha1"
patterns="$(cd "$REPO" && node --input-type=module -e 'const m = await import("./dist/pkg/api/agent.js"); console.log(m.MODEL_PATTERN); console.log(m.MODEL_PATTERN_PORTABLE)')"
AGENTPLANE_MODEL_PATTERN="$(sed -n 1p <<<"$patterns")" AGENTPLANE_MODEL_PATTERN_PORTABLE="$(sed -n 2p <<<"$patterns")" \
  SCHEMATHESIS_HOOKS=hooks PYTHONPATH="$HACK_DIR/fuzz${PYTHONPATH:+:$PYTHONPATH}" \
  schemathesis --config-file "$HACK_DIR/fuzz/schemathesis-aggregated.toml" run "$url/openapi/v3/apis/agentplane.io/v1alpha1" \
  --url "$url" --checks all --phases examples,coverage,fuzzing,stateful \
  --exclude-operation-id-regex '^watch' --max-time "${FUZZ_AGG_MAX_TIME:-120}" \
  ${FUZZ_AGG_MAX_EXAMPLES:+--max-examples "$FUZZ_AGG_MAX_EXAMPLES"} \
  --seed "${FUZZ_SEED:-$RANDOM}" --no-color || status=$?
# A crash the API hid behind a 4xx would still show in the log as an unhandled error.
if grep -q '"level":60' "$work/server.log"; then
  log "the server logged a fatal error:"; grep '"level":60' "$work/server.log" >&2; status=1
fi
kill -0 "$server" 2>/dev/null || { log "the server died during the run"; status=1; }
exit "$status"
