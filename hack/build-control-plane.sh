#!/usr/bin/env bash
# Builds the test control plane binaries (kube-apiserver, etcd, kubectl) from the Go
# modules pinned in hack/tools, and prints the directory holding them on the last line
# of stdout. Progress goes to stderr so callers can do: bin=$(hack/build-control-plane.sh)
#
# Order of preference:
#   1. $KUBEBUILDER_ASSETS, when it holds kube-apiserver and etcd (what envtest/setup-envtest
#      users already have); kubectl is taken from there too, or supplied as below.
#   2. The per-version cache under ${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/control-plane.
#   3. A source build into that cache (several minutes on 2 cores the first time; the Go
#      build cache in ~/.cache/go-build makes later builds of the same version fast).
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

CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/control-plane"
BIN_DIR="$CACHE_ROOT/$K8S_VERSION-$ETCD_VERSION/bin"

have_all() { # dir -> true when the three binaries are there and executable
  local d="$1" b
  for b in kube-apiserver etcd kubectl; do [[ -x "$d/$b" ]] || return 1; done
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

go_build() { # module dir, output dir, packages...
  local dir="$1" out="$2"; shift 2
  # -mod=mod: go.sum may lack a hash for a platform-specific dependency; let go add it
  #   instead of failing. -buildvcs=false: the wrapper module sits inside the agentplane
  #   git checkout, whose state has nothing to do with these binaries (and VCS stamping
  #   fails outright in checkouts owned by another user).
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS="-mod=mod" \
    go build -trimpath -buildvcs=false -ldflags "$LDFLAGS" -o "$out/" "$@")
}

# 1. Pre-provisioned assets.
if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/kube-apiserver" && -x "$KUBEBUILDER_ASSETS/etcd" ]]; then
  if [[ -x "$KUBEBUILDER_ASSETS/kubectl" ]]; then
    log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
    echo "$KUBEBUILDER_ASSETS"
    exit 0
  fi
  # The assets lack kubectl: assemble one directory of symlinks, so callers still get
  # a single bin dir. Keyed by the assets path so different asset sets do not collide.
  key="$(printf '%s' "$KUBEBUILDER_ASSETS" | sha256sum | cut -c1-12)"
  dir="$CACHE_ROOT/kubebuilder-assets-$key/bin"
  mkdir -p "$dir"
  ln -sfn "$KUBEBUILDER_ASSETS/kube-apiserver" "$dir/kube-apiserver"
  ln -sfn "$KUBEBUILDER_ASSETS/etcd" "$dir/etcd"
  if [[ ! -x "$dir/kubectl" ]]; then
    if k="$(machine_kubectl)"; then
      ln -sfn "$k" "$dir/kubectl"
    else
      log "KUBEBUILDER_ASSETS has no kubectl; building kubectl $K8S_VERSION"
      tmp="$(mktemp -d "$dir/.build.XXXXXX")"
      trap 'rm -rf "$tmp"' EXIT
      go_build "$TOOLS_DIR" "$tmp" k8s.io/kubernetes/cmd/kubectl
      mv -f "$tmp/kubectl" "$dir/kubectl"
    fi
  fi
  log "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS (kubectl from $dir)"
  echo "$dir"
  exit 0
fi

# 2. Cache hit.
if have_all "$BIN_DIR"; then
  log "cached: $BIN_DIR"
  echo "$BIN_DIR"
  exit 0
fi

# 3. Build. Everything goes to a scratch dir first and is moved in at the end, so an
# interrupted build never leaves a partial set that step 2 would mistake for a cache hit.
command -v go >/dev/null || die "go is required to build the control plane (or set KUBEBUILDER_ASSETS)"
mkdir -p "$BIN_DIR"
tmp="$(mktemp -d "$BIN_DIR/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

start=$SECONDS
pkgs=(k8s.io/kubernetes/cmd/kube-apiserver)
if k="$(machine_kubectl)"; then
  log "using machine kubectl $k (same minor as $K8S_VERSION)"
  ln -sfn "$k" "$tmp/kubectl"
else
  pkgs+=(k8s.io/kubernetes/cmd/kubectl)
fi
log "building ${pkgs[*]##*/} $K8S_VERSION (several minutes with a cold Go build cache)"
# One go build for both commands: they share most packages, which then compile once.
go_build "$TOOLS_DIR" "$tmp" "${pkgs[@]}"
log "building etcd $ETCD_VERSION"
go_build "$TOOLS_DIR/etcd" "$tmp" .

for b in kube-apiserver etcd kubectl; do
  [[ -x "$tmp/$b" || -L "$tmp/$b" ]] || die "build did not produce $b"
  mv -f "$tmp/$b" "$BIN_DIR/$b"
done
log "built in $((SECONDS - start))s: $BIN_DIR"
echo "$BIN_DIR"
