# shellcheck shell=bash
# Shared by the image builders under hack/images/: logging, the cache root and content keys.
# Like build-control-plane.sh, builders print progress on stderr and the result on stdout,
# build into a scratch directory and move it into place only when complete.

IMAGES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HACK_DIR="$(cd "$IMAGES_DIR/.." && pwd)"
REPO_DIR="$(cd "$HACK_DIR/.." && pwd)"
IMAGES_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/images"

# shellcheck source=../lib/oci-image.sh
source "$HACK_DIR/lib/oci-image.sh"

log() { echo "build-images: $*" >&2; }
die() { log "error: $*"; exit 1; }

# key_of <label> <item>... -> 64 hex chars. An item is a file (its path relative to the repo
# and its content count), or "=text" for a literal string (a version, a package list).
key_of() {
  local item
  {
    printf 'agentplane-image-key-v1 %s\n' "$1"
    shift
    for item in "$@"; do
      if [[ "$item" == =* ]]; then
        printf 'str %s\n' "${item#=}"
      else
        printf 'file %s %s\n' "${item#"$REPO_DIR"/}" "$(sha256sum <"$item" | cut -d' ' -f1)"
      fi
    done
  } | sha256sum | cut -d' ' -f1
}

# publish <scratch dir> <final dir>: atomic rename; if another build got there first, keep it.
publish() {
  mkdir -p "$(dirname "$2")"
  if ! mv -T "$1" "$2" 2>/dev/null; then
    [[ -d "$2" ]] || die "could not move $1 to $2"
    rm -rf "$1"
  fi
}

# scratch <parent dir>: sets SCRATCH to a fresh scratch directory there, removed on exit
# unless published. (It sets a variable: in a $(...) subshell the exit trap would not see it.)
SCRATCH_DIRS=()
scratch() {
  mkdir -p "$1"
  SCRATCH="$(mktemp -d "$1/.build.XXXXXX")"
  SCRATCH_DIRS+=("$SCRATCH")
}
cleanup_scratch() {
  local d
  for d in "${SCRATCH_DIRS[@]}"; do
    [[ -e "$d" ]] || continue
    # A debootstrap chroot may still have /proc or /dev mounted if it was interrupted.
    grep -F " $d/" /proc/self/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf --one-file-system "$d"
  done
}
trap cleanup_scratch EXIT

# prune <parent dir> <name glob>: keeps the $AGENTPLANE_IMAGES_KEEP (default 3) most recently
# built or used entries matching the glob, and of the rest deletes those unused for an hour
# (another worktree sharing the cache may be about to import one), so that every source
# change does not leave another few hundred MB behind. AGENTPLANE_IMAGES_KEEP=0 keeps all.
prune() {
  local keep="${AGENTPLANE_IMAGES_KEEP:-3}" d
  [[ "$keep" -gt 0 ]] || return 0
  # shellcheck disable=SC2012,SC2086 # names are our own hex keys; $2 is a glob on purpose
  ls -1dt "$1"/$2 2>/dev/null | tail -n +"$((keep + 1))" | while read -r d; do
    [[ -n "$(find "$d" -maxdepth 0 -mmin +60)" ]] || continue
    log "pruning old cache entry $d"
    rm -rf --one-file-system "$d"
  done
}

# used <dir>: marks a cache entry as just used, for prune.
used() { touch "$1" 2>/dev/null || true; }
