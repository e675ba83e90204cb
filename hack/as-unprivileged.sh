#!/usr/bin/env bash
# Runs a command of this checkout as an unprivileged user (nobody), for the security suite's
# second pass: the server it starts, its workers and their tools then run without root, as on a
# developer's laptop. Run as root.
#
#   hack/as-unprivileged.sh <node> <args...>     e.g. hack/as-unprivileged.sh node node_modules/mocha/bin/mocha.js ...
#
# The checkout and the project's Node may live under directories nobody can enter (a mktemp
# clone, /root/.cache). In a private mount namespace, both are bind-mounted under a directory of
# their own that nobody can walk, and the command runs from there with the same relative paths.
# Nothing is mounted outside that namespace, and the directory is removed afterwards.
set -euo pipefail

[ "$(id -u)" = 0 ] || { echo "as-unprivileged: run as root (it drops to nobody)" >&2; exit 2; }
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_DIR="$(dirname "$(dirname "$(command -v "$1")")")"   # .../bin/node -> its install dir
shift
USER_ID=65534 GROUP_ID=65534

VIEW="$(mktemp -d /tmp/agentplane-unprivileged-XXXXXX)"
HOME_DIR="$VIEW/home"
mkdir -p "$VIEW/app" "$VIEW/node" "$HOME_DIR"
chmod 755 "$VIEW"
chown "$USER_ID:$GROUP_ID" "$HOME_DIR"
trap 'rm -rf "$VIEW"' EXIT

# The command's own exit status is the script's.
unshare --mount --propagation private -- sh -c '
  set -e
  view=$1 root=$2 node=$3 uid=$4 gid=$5; shift 5
  mount --bind "$root" "$view/app"
  mount --bind "$node" "$view/node"
  cd "$view/app"
  exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all --bounding-set=-all -- \
    env HOME="$view/home" PATH="$view/node/bin:/usr/local/bin:/usr/bin:/bin" AGENTPLANE_TEST_UNPRIVILEGED=1 \
    "$view/node/bin/node" "$@"
' as-unprivileged "$VIEW" "$ROOT" "$NODE_DIR" "$USER_ID" "$GROUP_ID" "$@"
