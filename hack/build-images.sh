#!/usr/bin/env bash
# Builds agentplane's container images as OCI image-layout archives, with no Docker engine
# and no registry, and prints the archive's path on stdout (progress goes to stderr):
#
#   hack/build-images.sh pause        # agentplane.local/pause:1
#   hack/build-images.sh worker       # agentplane.local/worker:<content hash>
#   hack/build-images.sh pause-ref    # the image names only, without building (the worker's
#   hack/build-images.sh worker-ref   #   tag is a hash of its inputs, so it is known up front)
#   hack/build-images.sh all          # both archives, one per line
#
# Load an archive with `ctr -n k8s.io images import <archive>` (or `docker load -i`).
# Archives are cached under ${XDG_CACHE_HOME:-$HOME/.cache}/agentplane/images, keyed by the
# content of every input; see hack/README.md, section "Images".
set -euo pipefail
HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() { sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

case "${1:-}" in
  pause) exec "$HACK_DIR/images/pause/build.sh" ;;
  pause-ref) exec "$HACK_DIR/images/pause/build.sh" --ref ;;
  worker) exec "$HACK_DIR/images/worker/build.sh" ;;
  worker-ref) exec "$HACK_DIR/images/worker/build.sh" --ref ;;
  all)
    "$HACK_DIR/images/pause/build.sh"
    "$HACK_DIR/images/worker/build.sh"
    ;;
  *) usage ;;
esac
