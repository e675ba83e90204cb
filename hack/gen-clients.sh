#!/usr/bin/env bash
# Generates the typed clients under clients/ from the REST mirror's OpenAPI document
# (hack/openapi-dump.mjs, from the build: `make build` first). See clients/README.md.
#
#   bash hack/gen-clients.sh          # regenerate clients/ in place
#   bash hack/gen-clients.sh DIR      # write the generated files under DIR instead (the drift test)
#
# TypeScript: openapi-typescript (npm, pinned in package.json) writes the types of every path and
# schema to typescript/src/schema.ts; openapi-fetch is the runtime that uses them.
# Python: openapi-python-client (PyPI, pinned with everything it runs, ruff included, in
# hack/clients/requirements-gen.txt) writes the package python/agentplane_client/, in a virtualenv
# under ~/.cache/agentplane/openapi-python-client/<hash of that file>, made on first use.
# The hand-written files (the WebSocket helpers, the packaging) are never touched.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HACK_DIR")"
OUT="${1:-$REPO/clients}"
# Files of the Python package that are written by hand: regeneration keeps them.
PY_HAND_WRITTEN=(events.py)

log() { echo "gen-clients: $*" >&2; }

reqs="$HACK_DIR/clients/requirements-gen.txt"
key="$(sha256sum "$reqs" | cut -c1-16)"
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/openapi-python-client/$key"
if [[ ! -x "$VENV/bin/openapi-python-client" ]]; then
  log "installing openapi-python-client ($(grep '^openapi-python-client==' "$reqs")) into $VENV"
  rm -rf "$VENV.tmp"
  python3 -m venv "$VENV.tmp"
  "$VENV.tmp/bin/pip" install -q --disable-pip-version-check -r "$reqs"
  rm -rf "$VENV" && mv "$VENV.tmp" "$VENV"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
node "$HACK_DIR/openapi-dump.mjs" >"$work/openapi.json"

mkdir -p "$OUT/typescript/src"
node "$REPO/node_modules/openapi-typescript/bin/cli.js" "$work/openapi.json" -o "$OUT/typescript/src/schema.ts" >/dev/null

# The venv was made under another name and moved: run its tools through its python, with its bin
# first on PATH (the generator runs ruff from PATH to format what it wrote).
PATH="$VENV/bin:$PATH" "$VENV/bin/python" -m openapi_python_client generate --path "$work/openapi.json" \
  --config "$HACK_DIR/clients/openapi-python-client.yaml" --meta none --output-path "$work/py" >"$work/py.log" 2>&1 ||
  { cat "$work/py.log" >&2; exit 1; }
# A warning means an operation or a schema it could not generate: the client would miss it.
if grep -q -i 'warning' "$work/py.log"; then cat "$work/py.log" >&2; log "openapi-python-client skipped something"; exit 1; fi
rm -rf "$work/py/.ruff_cache"
pkg="$OUT/python/agentplane_client"
mkdir -p "$pkg"
keep=()
for f in "${PY_HAND_WRITTEN[@]}"; do keep+=(! -name "$f"); done
find "$pkg" -mindepth 1 -maxdepth 1 "${keep[@]}" -exec rm -rf {} +
cp -R "$work/py/." "$pkg/"
log "wrote $OUT/typescript/src/schema.ts and $pkg"
