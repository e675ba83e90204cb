#!/usr/bin/env bash
# Builds the test OpenTelemetry Collector (hack/tools/otelcol: the OTLP receiver and the OTLP/HTTP
# exporter) and prints the binary's path on the last line of stdout; progress on stderr. Cached
# under ${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/otelcol/<version>, the version read from the
# go.mod's otelcol require line (the one pin). Built with the go hack/go.sh picks, GOTOOLCHAIN=local.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MOD_DIR="$HACK_DIR/tools/otelcol"
log() { echo "build-otelcol: $*" >&2; }

VERSION="$(awk '$1 == "go.opentelemetry.io/collector/otelcol" && $2 ~ /^v/ { print $2; exit }' "$MOD_DIR/go.mod")"
[[ -n "$VERSION" ]] || { log "error: no otelcol version in $MOD_DIR/go.mod"; exit 1; }
# Keyed by the wrapper's sources too, so a change to main.go or go.sum rebuilds.
KEY="$VERSION-$(cat "$MOD_DIR/go.mod" "$MOD_DIR/go.sum" "$MOD_DIR/main.go" | sha256sum | cut -c1-12)"
OUT="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/otelcol/$KEY/otelcol"
if [[ ! -x "$OUT" ]]; then
  GO_BIN="$(bash "$HACK_DIR/go.sh")"
  log "building the OpenTelemetry Collector $VERSION (a few minutes the first time)"
  mkdir -p "$(dirname "$OUT")"
  tmp="$(mktemp "$OUT.XXXXXX")"
  trap 'rm -f "$tmp"' EXIT
  (cd "$MOD_DIR" && env -u GOROOT GOTOOLCHAIN=local GOFLAGS=-mod=readonly "$GO_BIN/go" build -trimpath -ldflags '-s -w' -o "$tmp" .)
  mv -f "$tmp" "$OUT"
  trap - EXIT
fi
echo "$OUT"
