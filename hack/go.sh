#!/usr/bin/env bash
# Prints the directory holding the `go` that builds the test cluster (hack/build-control-plane.sh).
#
# The machine's go when it is at least what hack/tools' go.mod files need (their `go` and
# `toolchain` lines); otherwise the pinned toolchain (hack/go.env), the golang.org/toolchain
# module fetched once from the Go module proxy ($GOPROXY, as the go command reads it), checked
# against its pinned go.sum hash and cached under ~/.cache/agentplane/go/<version>. Needs curl
# and unzip (hack/prerequisites.txt), no Go.
#
#   hack/go.sh          print the bin directory (stdout), progress on stderr
#
# AGENTPLANE_GO=pinned uses the pinned toolchain even when the machine's go is new enough.
# Run the printed go with GOTOOLCHAIN=local and without GOROOT (as build-control-plane.sh does),
# so it neither switches to another toolchain nor reads another Go's standard library.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=go.env
source "$HACK_DIR/go.env"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/go/$GO_VERSION"

log() { echo "go.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }

newer_or_same() { # a b -> whether version a >= b (Go's numbering: 1.24 < 1.24rc1 < 1.24.0 is close enough here)
  [[ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1)" == "$2" ]]
}

# The newest `go` or `toolchain` version any hack/tools go.mod names: with GOTOOLCHAIN=local a
# go older than a module's `go` line refuses to build it.
required() {
  find "$HACK_DIR/tools" -name go.mod -exec awk '$1 == "go" { print $2 } $1 == "toolchain" { sub(/^go/, "", $2); print $2 }' {} + |
    sort -V | tail -n1
}
REQUIRED="$(required)"
[[ -n "$REQUIRED" ]] || die "no go version in $HACK_DIR/tools/**/go.mod"
newer_or_same "$GO_VERSION" "$REQUIRED" ||
  die "hack/go.env pins go $GO_VERSION but hack/tools needs go >= $REQUIRED: raise GO_VERSION (and its hash)"

machine_version() { # the machine's go version without the "go" prefix, e.g. 1.26.8
  local v
  v="$(env -u GOROOT GOTOOLCHAIN=local go env GOVERSION 2>/dev/null)" || return 1
  [[ "$v" =~ ^go[0-9]+\.[0-9]+ ]] || return 1   # "devel ..." builds are not compared
  echo "${v#go}"
}

system_ok() {
  [[ "${AGENTPLANE_GO:-}" != pinned ]] || return 1
  local v
  v="$(machine_version)" || return 1
  newer_or_same "$v" "$REQUIRED"
}

# The proxies to try, in order: each URL of $GOPROXY (as the go command reads it: the
# environment, then go's env file), up to an "off"; "direct" cannot serve the toolchain module.
proxies() {
  local list="${GOPROXY:-}" envfile="${GOENV:-${XDG_CONFIG_HOME:-$HOME/.config}/go/env}" p
  [[ -z "$list" && -r "$envfile" ]] && list="$(sed -n 's/^GOPROXY=//p' "$envfile" | tail -n1)"
  for p in $(echo "${list:-https://proxy.golang.org}" | tr ',|' '  '); do
    case "$p" in
      off) return 0 ;;
      direct) ;;
      *) echo "${p%/}" ;;
    esac
  done
}

# The go.sum hash of a module zip's files, as Go's dirhash.Hash1 computes it: SHA-256 over
# the sorted "<sha256 hex>  <path>" lines of its files, base64.
h1() { # dir holding the extracted zip (paths relative to it are the zip's names)
  local sum
  sum="$(cd "$1" && find . -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 -r sha256sum | sha256sum | cut -c1-64)"
  printf "h1:%s\n" "$(printf "$(sed 's/../\\x&/g' <<<"$sum")" | base64)"
}

fetch_pinned() {
  [[ -x "$CACHE/bin/go" ]] && return 0
  local arch want mod zip proxy names prefix tool
  case "$(uname -sm)" in
    "Linux x86_64") arch=amd64; want="$GO_H1_LINUX_AMD64" ;;
    *) die "no pinned Go toolchain for $(uname -sm); install go >= $REQUIRED" ;;
  esac
  for tool in curl unzip sha256sum base64; do
    command -v "$tool" >/dev/null || die "$tool is needed to fetch the Go toolchain (hack/prerequisites.txt)"
  done
  mod="v0.0.1-go$GO_VERSION.linux-$arch"
  prefix="golang.org/toolchain@$mod/"
  if [[ "${AGENTPLANE_GO:-}" == pinned ]]; then
    log "AGENTPLANE_GO=pinned; fetching golang.org/toolchain@$mod"
  else
    log "machine go $(machine_version 2>/dev/null || echo none) is older than $REQUIRED; fetching golang.org/toolchain@$mod"
  fi
  dl="$(mktemp -d)"   # global: the EXIT trap reads it
  trap 'rm -rf "$dl"' EXIT
  zip="$dl/toolchain.zip"
  for proxy in $(proxies); do
    curl -fsSL --retry 3 -o "$zip" "$proxy/golang.org/toolchain/@v/$mod.zip" && break
    log "could not fetch it from $proxy"
    rm -f "$zip"
  done
  [[ -s "$zip" ]] || die "no proxy of GOPROXY=${GOPROXY:-https://proxy.golang.org} served golang.org/toolchain@$mod"
  # Before unzip writes anything: only regular files, each once, all inside the module's directory.
  names="$(unzip -Z1 "$zip")" || die "golang.org/toolchain@$mod is not a zip"
  if awk -v p="$prefix" 'index($0, p) != 1 || /(^|\/)\.\.(\/|$)/ || seen[$0]++ { bad = 1 } END { exit !bad }' <<<"$names" ||
    unzip -Z "$zip" | sed '1,2d;$d' | grep -q -v '^-'; then
    die "golang.org/toolchain@$mod holds entries outside $prefix, twice, or that are not regular files"
  fi
  mkdir "$dl/x"
  unzip -q "$zip" -d "$dl/x" </dev/null || die "could not unpack golang.org/toolchain@$mod"
  local got
  got="$(h1 "$dl/x")"
  [[ "$got" == "$want" ]] || die "golang.org/toolchain@$mod has hash $got, expected $want (hack/go.env)"
  local root="$dl/x/${prefix%/}"
  # What the go command does to a toolchain it downloads itself: its commands executable.
  find "$root/bin" "$root/pkg/tool" -type f -exec chmod a+x {} +
  [[ "$(env -u GOROOT GOTOOLCHAIN=local "$root/bin/go" env GOVERSION)" == "go$GO_VERSION" ]] || die "unexpected go version"
  # Atomic: a concurrent or interrupted fetch never leaves a half-written cache entry.
  mkdir -p "$(dirname "$CACHE")"
  rm -rf "$CACHE.tmp.$$"
  mv "$root" "$CACHE.tmp.$$"
  mv -T "$CACHE.tmp.$$" "$CACHE" 2>/dev/null || rm -rf "$CACHE.tmp.$$"
  log "go $GO_VERSION in $CACHE"
}

case "${1:-bin}" in
  bin)
    if system_ok; then dirname "$(command -v go)"; else fetch_pinned; echo "$CACHE/bin"; fi
    ;;
  *) log "usage: hack/go.sh [bin]"; exit 2 ;;
esac
