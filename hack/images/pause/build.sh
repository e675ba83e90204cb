#!/usr/bin/env bash
# Builds agentplane.local/pause:1, a static pause binary (pause.c) as the only file of a
# one-layer image, and prints the path of its OCI archive on stdout.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/common.sh"

NAME="agentplane.local/pause:1"
SRC="$IMAGES_DIR/pause/pause.c"
CC="${CC:-gcc}"
command -v "$CC" >/dev/null || die "$CC is required to build the pause image (apt-get install gcc libc6-dev)"

KEY="$(key_of pause "$SRC" "$IMAGES_DIR/pause/build.sh" "$IMAGES_DIR/common.sh" "$HACK_DIR/lib/oci-image.sh" \
  "=$("$CC" --version | head -n1)" "=$OCI_ARCH")"
OUT_DIR="$IMAGES_CACHE/pause/${KEY:0:16}"
ARCHIVE="$OUT_DIR/pause.oci.tar"

if [[ "${1:-}" == --ref ]]; then echo "$NAME"; exit 0; fi
if [[ -f "$ARCHIVE" ]]; then
  used "$OUT_DIR"
  log "cached: $NAME $ARCHIVE"
  echo "$ARCHIVE"
  exit 0
fi

start=$SECONDS
scratch "$IMAGES_CACHE/pause"
tmp="$SCRATCH"
mkdir -p "$tmp/rootfs" "$tmp/out"
log "compiling pause.c (static)"
# -ffile-prefix-map and a fixed build-id source keep the binary identical across checkouts.
"$CC" -static -Os -Wall -Wextra -Werror -ffile-prefix-map="$IMAGES_DIR/pause=." \
  -o "$tmp/rootfs/pause" "$SRC"
strip "$tmp/rootfs/pause"
chmod 0755 "$tmp/rootfs" "$tmp/rootfs/pause"

oci_layer --root-owned --comment "pause.c, gcc -static" "$tmp/rootfs" "$tmp/layer"
# 65535 is the user the upstream pause image runs as.
config="{\"User\":\"65535:65535\",\"Entrypoint\":$(oci_json_array /pause),\"WorkingDir\":\"/\"}"
oci_image_archive "$tmp/out/pause.oci.tar" "$NAME" "$config" "$tmp/layer"
publish "$tmp/out" "$OUT_DIR"
prune "$IMAGES_CACHE/pause" '[0-9a-f]*'
log "built $NAME in $((SECONDS - start))s: $ARCHIVE ($(stat -c %s "$ARCHIVE") bytes, manifest $(cat "$ARCHIVE.digest"))"
echo "$ARCHIVE"
