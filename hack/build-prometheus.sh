#!/usr/bin/env bash
# Builds prometheus and promtool from the Go module pinned in hack/tools/prometheus and prints
# the directory holding them on the last line of stdout (progress goes to stderr), so callers
# can do: bin=$(hack/build-prometheus.sh)
#
# Cached per version and build tags under ${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/prometheus/<version>-<tags>/bin.
# Tag remove_all_sd leaves out every service discovery but the static and file ones (the tests
# scrape a server on loopback by static_configs): no cloud SDKs to download and compile, which
# more than halves a first build.
# Built with the go hack/go.sh picks, GOTOOLCHAIN=local, like hack/build-control-plane.sh, and
# without the builtinassets tag: the web UI's assets are built by npm upstream and are not in
# the Go module; Prometheus then serves its HTTP API (all the tests use) and no UI pages.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
MOD_DIR="$HACK_DIR/tools/prometheus"

log() { echo "build-prometheus: $*" >&2; }
die() { log "error: $*"; exit 1; }

VERSION="$(awk '$1 == "github.com/prometheus/prometheus" && $2 ~ /^v/ { print $2; exit }' "$MOD_DIR/go.mod")"
[[ -n "$VERSION" ]] || die "could not read the pinned version from $MOD_DIR/go.mod"
TAGS=remove_all_sd
BIN_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/prometheus/$VERSION-$TAGS/bin"
BINS=(prometheus promtool)

have_all() { local b; for b in "${BINS[@]}"; do [[ -x "$BIN_DIR/$b" ]] || return 1; done; }
if have_all; then
  log "cached: $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi

GO="$(bash "$HACK_DIR/go.sh")/go" || die "no go to build with (hack/go.sh above)"
run_go() { env -u GOROOT GOTOOLCHAIN=local "$GO" "$@"; }
log "building prometheus and promtool $VERSION with $(run_go version) (minutes with a cold Go build cache)"
start=$SECONDS
mkdir -p "$BIN_DIR"
# A scratch dir moved in at the end: an interrupted build never leaves a half set behind.
tmp="$(mktemp -d "$BIN_DIR/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
# The -X flags are what upstream's promu stamps, so `prometheus --version` tells the truth.
# -mod=mod and -buildvcs=false as in build-control-plane.sh (go.sum platform entries; the
# wrapper sits in the agentplane checkout, whose VCS state is not Prometheus').
# The module version v0.MNN.P is Prometheus M.NN.P (v0.316.0: 3.16.0).
ver=github.com/prometheus/common/version
release="$VERSION"
[[ "$VERSION" =~ ^v0\.([0-9])([0-9]{2})\.([0-9]+)$ ]] && release="v${BASH_REMATCH[1]}.$((10#${BASH_REMATCH[2]})).${BASH_REMATCH[3]}"
(cd "$MOD_DIR" && CGO_ENABLED=0 GOFLAGS="-mod=mod" run_go build -trimpath -buildvcs=false -tags "$TAGS" \
  -ldflags "-s -w -X $ver.Version=${release#v} -X $ver.Branch=HEAD -X $ver.Revision=$VERSION" \
  -o "$tmp/" github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool)
for b in "${BINS[@]}"; do
  [[ -x "$tmp/$b" ]] || die "build did not produce $b"
  mv -f "$tmp/$b" "$BIN_DIR/$b"
done
log "built ${BINS[*]} $VERSION in $((SECONDS - start))s: $BIN_DIR"
echo "$BIN_DIR"
