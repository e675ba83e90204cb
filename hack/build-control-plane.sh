#!/usr/bin/env bash
# Builds the test cluster's binaries from the Go modules pinned in hack/tools, and prints
# the directory holding them on the last line of stdout. Progress goes to stderr so
# callers can do: bin=$(hack/build-control-plane.sh)
#
#   control plane  kube-apiserver, etcd, kubectl, kube-controller-manager
#   node           kubelet, kube-scheduler, crictl,
#                  local-path-provisioner and its local-path-helper
#
# AGENTPLANE_CP_NODE=false asks for the control plane only (what the API-only
# `control-plane.sh up` needs); the default is the whole set.
#
# Order of preference:
#   1. $KUBEBUILDER_ASSETS, when it holds kube-apiserver and etcd (what envtest/setup-envtest
#      users already have); kubectl is taken from there too, or supplied as below.
#   2. The per-version cache under ${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/control-plane.
#   3. A source build into that cache (several minutes on 2 cores the first time; the Go
#      build cache in ~/.cache/go-build makes later builds of the same version fast), with the
#      go hack/go.sh picks: the machine's when it is new enough, else the pinned toolchain,
#      fetched once from the Go module proxy.
#
#   hack/build-control-plane.sh check-go   builds local-path-helper with that go into a scratch
#                                          dir and checks which go built it (CI runs it with no
#                                          go on PATH: the cached binaries alone prove nothing)
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOLS_DIR="$HACK_DIR/tools"

log() { echo "build-control-plane: $*" >&2; }
die() { log "error: $*"; exit 1; }

# The versions come from the go.mod files, so the pin lives in exactly one place and the
# cache key cannot drift from what is actually compiled.
required_version() { # go.mod, module -> the version it requires (single-line or block form)
  awk -v m="$2" '$1 == "//" || /=>/ { next } $1 == "require" { $1 = "" ; $0 = $0 }
    $1 == m && $2 ~ /^v/ { print $2; exit }' "$1"
}
K8S_VERSION="$(required_version "$TOOLS_DIR/go.mod" k8s.io/kubernetes)"
ETCD_VERSION="$(required_version "$TOOLS_DIR/etcd/go.mod" go.etcd.io/etcd/server/v3)"
[[ -n "$K8S_VERSION" && -n "$ETCD_VERSION" ]] || die "could not read pinned versions from $TOOLS_DIR"
K8S_MINOR="$(echo "$K8S_VERSION" | cut -d. -f2)"   # v1.34.4 -> 34
LPP_VERSION="$(required_version "$TOOLS_DIR/local-path-provisioner/go.mod" github.com/rancher/local-path-provisioner)"
CRICTL_VERSION="$(required_version "$TOOLS_DIR/crictl/go.mod" sigs.k8s.io/cri-tools)"
[[ -n "$LPP_VERSION" && -n "$CRICTL_VERSION" ]] || die "could not read pinned node tool versions from $TOOLS_DIR"
NODE="${AGENTPLANE_CP_NODE:-true}"
[[ "$NODE" == true || "$NODE" == false ]] || die "AGENTPLANE_CP_NODE must be true or false, not '$NODE'"

CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/control-plane"
BIN_DIR="$CACHE_ROOT/$K8S_VERSION-$ETCD_VERSION/bin"

API_BINS=(kube-apiserver etcd kubectl kube-controller-manager)
NODE_BINS=(kubelet kube-scheduler crictl local-path-provisioner local-path-helper)
# local-path-provisioner and crictl have versions of their own, which the directory name
# (the Kubernetes and etcd versions) does not cover; this file in the bin dir does.
NODE_STAMP=".node-tools"
NODE_STAMP_TEXT="local-path-provisioner $LPP_VERSION, crictl $CRICTL_VERSION"
REQUIRED=("${API_BINS[@]}")
[[ "$NODE" == true ]] && REQUIRED+=("${NODE_BINS[@]}")

missing() { # dir -> the required binaries it lacks, one per line
  local d="$1" b stale=false
  [[ "$NODE" == true && "$(cat "$d/$NODE_STAMP" 2>/dev/null)" != "$NODE_STAMP_TEXT" ]] && stale=true
  for b in "${REQUIRED[@]}"; do
    case "$b" in crictl | local-path-*) $stale && { echo "$b"; continue; } ;; esac
    [[ -x "$d/$b" ]] || echo "$b"
  done
}

# kubectl on the machine is only good enough if it is the same minor: kubectl supports
# +/-1 minor skew, but tests assert on its output, so we want the tested version.
machine_kubectl() {
  local k v
  k="$(command -v kubectl 2>/dev/null)" || return 1
  v="$("$k" version --client -o json 2>/dev/null | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -n1)"
  [[ "$v" == v1.$K8S_MINOR.* ]] || return 1
  echo "$k"
}

# Version stamping, as the upstream release build does it (hack/lib/version.sh); without
# it the binaries report v0.0.0-master+$Format and kubectl warns about version skew.
# -X for a package a binary does not link is ignored, so one set serves all binaries.
LDFLAGS="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$K8S_MINOR"
  LDFLAGS+=" -X $pkg.gitTreeState=clean"
done

GO=""
use_go() { # sets GO to the go that builds (hack/go.sh), fetching the pinned one if need be
  [[ -n "$GO" ]] && return 0
  local bin
  bin="$(bash "$HACK_DIR/go.sh")" || die "no go to build with (hack/go.sh above; or set KUBEBUILDER_ASSETS)"
  GO="$bin/go"
  log "building with $(run_go version) ($GO)"
}
# GOTOOLCHAIN=local, no GOROOT: exactly the go hack/go.sh chose, with its own standard library,
# never a toolchain that go.mod or the environment would switch to.
run_go() { env -u GOROOT GOTOOLCHAIN=local "$GO" "$@"; }

go_build() { # module dir, output dir, packages...
  local dir="$1" out="$2"; shift 2
  # -mod=mod: go.sum may lack a hash for a platform-specific dependency; let go add it
  #   instead of failing. -buildvcs=false: the wrapper module sits inside the agentplane
  #   git checkout, whose state has nothing to do with these binaries (and VCS stamping
  #   fails outright in checkouts owned by another user).
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS="-mod=mod" \
    run_go build -trimpath -buildvcs=false -ldflags "${GO_LDFLAGS:-$LDFLAGS}" -o "$out/" "$@")
}

# Builds what `missing` reports into dir. Everything goes to a scratch dir first and is
# moved in at the end, so an interrupted build never leaves a partial set that a later
# run would mistake for a cache hit.
build_missing() { # dir
  local dir="$1" b k start=$SECONDS
  local -a want pkgs=()
  mapfile -t want < <(missing "$dir")
  ((${#want[@]})) || return 0
  use_go
  tmp="$(mktemp -d "$dir/.build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  has() { [[ " ${want[*]} " == *" $1 "* ]]; }

  for b in kube-apiserver kubelet kube-controller-manager kube-scheduler; do
    has "$b" && pkgs+=("k8s.io/kubernetes/cmd/$b")
  done
  if has kubectl; then
    if k="$(machine_kubectl)"; then
      log "using machine kubectl $k (same minor as $K8S_VERSION)"
      ln -sfn "$k" "$tmp/kubectl"
    else
      pkgs+=(k8s.io/kubernetes/cmd/kubectl)
    fi
  fi
  if ((${#pkgs[@]})); then
    log "building ${pkgs[*]##*/} $K8S_VERSION (many minutes with a cold Go build cache)"
    # One go build for all of them: they share most packages, which then compile once.
    go_build "$TOOLS_DIR" "$tmp" "${pkgs[@]}"
  fi
  if has etcd; then
    log "building etcd $ETCD_VERSION"
    go_build "$TOOLS_DIR/etcd" "$tmp" .
  fi
  if has local-path-provisioner || has local-path-helper; then
    log "building local-path-provisioner $LPP_VERSION and local-path-helper"
    # Not the Kubernetes -X flags: this links its own client-go (v0.30), whose version
    # they would misstate.
    GO_LDFLAGS="-s -w" go_build "$TOOLS_DIR/local-path-provisioner" "$tmp" \
      github.com/rancher/local-path-provisioner ./local-path-helper
  fi
  if has crictl; then
    log "building crictl $CRICTL_VERSION"
    GO_LDFLAGS="-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" \
      go_build "$TOOLS_DIR/crictl" "$tmp" sigs.k8s.io/cri-tools/cmd/crictl
  fi

  for b in "${want[@]}"; do
    [[ -x "$tmp/$b" || -L "$tmp/$b" ]] || die "build did not produce $b"
    mv -f "$tmp/$b" "$dir/$b"
  done
  [[ "$NODE" == true ]] && echo "$NODE_STAMP_TEXT" > "$dir/$NODE_STAMP"
  rm -rf "$tmp"
  trap - EXIT
  log "built ${want[*]} in $((SECONDS - start))s: $dir"
}

# The go the build would use compiles one small command of hack/tools into a scratch dir.
if [[ "${1:-}" == check-go ]]; then
  use_go
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  GO_LDFLAGS="-s -w" go_build "$TOOLS_DIR/local-path-provisioner" "$tmp" ./local-path-helper
  built="$(run_go version "$tmp/local-path-helper")"
  [[ "$built" == *": $(run_go env GOVERSION)" ]] || die "unexpected build: $built"
  log "check-go: $built"
  exit 0
fi
[[ -z "${1:-}" ]] || die "usage: hack/build-control-plane.sh [check-go]"

# 1. Pre-provisioned assets.
if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/kube-apiserver" && -x "$KUBEBUILDER_ASSETS/etcd" ]]; then
  if [[ -z "$(missing "$KUBEBUILDER_ASSETS")" ]]; then
    log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
    echo "$KUBEBUILDER_ASSETS"
    exit 0
  fi
  # The assets lack kubectl (or the node binaries): assemble one directory of symlinks
  # plus the missing binaries, so callers still get a single bin dir. Keyed by the assets
  # path so different asset sets do not collide.
  key="$(printf '%s' "$KUBEBUILDER_ASSETS" | sha256sum | cut -c1-12)"
  dir="$CACHE_ROOT/kubebuilder-assets-$key/bin"
  mkdir -p "$dir"
  for b in "${REQUIRED[@]}"; do
    [[ -x "$KUBEBUILDER_ASSETS/$b" ]] && ln -sfn "$KUBEBUILDER_ASSETS/$b" "$dir/$b"
  done
  build_missing "$dir"
  log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS (the rest from $dir)"
  echo "$dir"
  exit 0
fi

# 2. Cache hit.
mkdir -p "$BIN_DIR"
if [[ -z "$(missing "$BIN_DIR")" ]]; then
  log "cached: $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi

# 3. Build what is missing into the cache.
build_missing "$BIN_DIR"
echo "$BIN_DIR"
