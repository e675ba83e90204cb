#!/usr/bin/env bash
# Builds the chart's test tools from the Go modules pinned in hack/tools and prints the
# directory holding them on the last line of stdout (progress on stderr), like
# build-control-plane.sh:  bin=$(hack/build-tools.sh)
#
#   helm         helm.sh/helm/v3/cmd/helm              (tools/helm/go.mod)
#   kubeconform  github.com/yannh/kubeconform/cmd/...  (tools/kubeconform/go.mod)
#
# Cached per version in ${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/tools/<name>-<version>/,
# built with the go hack/go.sh picks (GOTOOLCHAIN=local), into a scratch dir first and moved
# into place when complete, so an interrupted build is never taken for a cache hit.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOLS_DIR="$HACK_DIR/tools"
log() { echo "build-tools: $*" >&2; }
die() { log "error: $*"; exit 1; }

required_version() { # go.mod, module -> the version it requires (single-line or block form)
  awk -v m="$2" '$1 == "//" || /=>/ { next } $1 == "require" { $1 = "" ; $0 = $0 }
    $1 == m && $2 ~ /^v/ { print $2; exit }' "$1"
}
HELM_VERSION="$(required_version "$TOOLS_DIR/helm/go.mod" helm.sh/helm/v3)"
KUBECONFORM_VERSION="$(required_version "$TOOLS_DIR/kubeconform/go.mod" github.com/yannh/kubeconform)"
[[ -n "$HELM_VERSION" && -n "$KUBECONFORM_VERSION" ]] || die "could not read pinned versions from $TOOLS_DIR"

CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/tools"
BIN_DIR="$CACHE_ROOT/bin-helm-$HELM_VERSION-kubeconform-$KUBECONFORM_VERSION"

GO=""
use_go() {
  [[ -n "$GO" ]] && return 0
  local bin
  bin="$(bash "$HACK_DIR/go.sh")" || die "no go to build with (hack/go.sh above)"
  GO="$bin/go"
}
run_go() { env -u GOROOT GOTOOLCHAIN=local "$GO" "$@"; }

build() { # name, version, package, ldflags -> $CACHE_ROOT/<name>-<version>-<ldflags hash>/<name>
  local name="$1" version="$2" pkg="$3" ldflags="$4" dir tmp start=$SECONDS
  # The flags are part of the key: they stamp versions into the binary.
  dir="$CACHE_ROOT/$name-$version-$(echo "$ldflags" | sha256sum | cut -c1-8)"
  BUILT="$dir/$name"
  [[ -x "$dir/$name" ]] && return 0
  rm -rf "$CACHE_ROOT/$name-$version"-*  # an older recipe's build
  use_go
  mkdir -p "$CACHE_ROOT"
  tmp="$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")"
  log "building $name $version with $(run_go env GOVERSION) (a few minutes with a cold Go build cache)"
  # -mod=mod, -buildvcs=false, -trimpath, CGO_ENABLED=0: as build-control-plane.sh builds.
  (cd "$TOOLS_DIR/$name" && CGO_ENABLED=0 GOFLAGS=-mod=mod \
    run_go build -trimpath -buildvcs=false -ldflags "-s -w $ldflags" -o "$tmp/$name" "$pkg") ||
    { rm -rf "$tmp"; die "go build of $name failed"; }
  rm -rf "$dir"
  mv "$tmp" "$dir"
  log "built $name $version in $((SECONDS - start))s: $dir/$name"
}

# As Helm's Makefile does: its version, and the Kubernetes version `helm template` and `helm lint`
# assume without a cluster, from the client-go it links (v0.37 -> 1.37). Without them `helm
# version` says v3.x-dev and `helm template` takes the cluster for Kubernetes 1.20.
CLIENT_GO="$(required_version "$TOOLS_DIR/helm/go.mod" k8s.io/client-go)"
K8S_MINOR="$(echo "$CLIENT_GO" | cut -d. -f2)"
[[ -n "$K8S_MINOR" ]] || die "could not read client-go's version from $TOOLS_DIR/helm/go.mod"
helm_ldflags="-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  helm_ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$K8S_MINOR"
done
build helm "$HELM_VERSION" helm.sh/helm/v3/cmd/helm "$helm_ldflags"
helm_bin="$BUILT"
build kubeconform "$KUBECONFORM_VERSION" github.com/yannh/kubeconform/cmd/kubeconform ""
kubeconform_bin="$BUILT"

# One directory holding both (symlinks), so callers put one dir on PATH.
mkdir -p "$BIN_DIR"
ln -sfn "$helm_bin" "$BIN_DIR/helm"
ln -sfn "$kubeconform_bin" "$BIN_DIR/kubeconform"
log "ready: helm $HELM_VERSION, kubeconform $KUBECONFORM_VERSION in $BIN_DIR"
echo "$BIN_DIR"
