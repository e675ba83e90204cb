#!/usr/bin/env bash
# Checks the image archives for real: starts a PRIVATE containerd (root, state and socket
# under a temp dir, never /run/containerd), imports the archives with `ctr images import`,
# runs containers from them, then stops containerd and removes every trace.
#
#   hack/images/verify-containerd.sh [pause] [worker]     (default: both)
#
# Needs root and Debian's containerd and runc (apt-get install -y containerd runc).
# Prints timings on stderr; exits non-zero at the first failed check.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/common.sh"

[[ $EUID -eq 0 ]] || die "needs root (containerd and runc)"
for t in containerd ctr runc containerd-shim-runc-v2; do
  command -v "$t" >/dev/null || die "$t not found: apt-get install -y containerd runc"
done
images=("$@")
[[ ${#images[@]} -gt 0 ]] || images=(pause worker)

T="$(mktemp -d /tmp/agentplane-ctr.XXXXXX)"
# containerd 1.6 always puts shim sockets in /run/containerd/s; remove what we created there.
RUN_EXISTED=false
[[ -e /run/containerd ]] && RUN_EXISTED=true
SOCK="$T/containerd.sock"
CTR=(ctr -a "$SOCK" -n k8s.io)
CPID=""
# Keep ctr's FIFOs and runc's state in the temp dir too (their defaults are under /run/containerd).
RUNOPTS=(--fifo-dir "$T/fifo" --runc-root "$T/runc")

stop_all() {
  set +e
  if [[ -n "$CPID" ]] && kill -0 "$CPID" 2>/dev/null; then
    # Kill what is still running, then containerd, then its shims (they outlive it).
    local c
    for c in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks kill -s KILL "$c" >/dev/null 2>&1; done
    sleep 0.5
    for c in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks delete -f "$c" >/dev/null 2>&1; done
    for c in $("${CTR[@]}" containers ls -q 2>/dev/null); do "${CTR[@]}" containers delete "$c" >/dev/null 2>&1; done
    kill -TERM "$CPID"
    for _ in $(seq 50); do kill -0 "$CPID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$CPID" 2>/dev/null
    wait "$CPID" 2>/dev/null
  fi
  # Shims outlive containerd; each left its pid in our state dir.
  local f
  for f in "$T"/state/io.containerd.runtime.v2.task/*/*/shim.pid; do
    [[ -f "$f" ]] && kill -KILL "$(cat "$f")" 2>/dev/null
  done
  grep -F " $T/" /proc/self/mounts | cut -d' ' -f2 | sort -r | xargs -r -n1 umount -l 2>/dev/null
  rm -rf "$T"
  rmdir /run/containerd/s 2>/dev/null
  $RUN_EXISTED || rmdir /run/containerd 2>/dev/null
  log "containerd stopped, $T removed"
}
trap stop_all EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2fs", b - a }'; }

cat >"$T/config.toml" <<EOF
version = 2
root = "$T/root"
state = "$T/state"
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = "$SOCK.debug"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  # root in this VM lacks CAP_SYS_RESOURCE, which CRI needs to lower oom_score_adj.
  restrict_oom_score_adj = true
  sandbox_image = "agentplane.local/pause:1"
EOF
containerd --config "$T/config.toml" >"$T/containerd.log" 2>&1 &
CPID=$!
for _ in $(seq 100); do
  [[ -S "$SOCK" ]] && "${CTR[@]}" version >/dev/null 2>&1 && break
  kill -0 "$CPID" 2>/dev/null || { cat "$T/containerd.log" >&2; die "containerd exited"; }
  sleep 0.1
done
"${CTR[@]}" version >/dev/null || die "containerd did not come up ($T/containerd.log)"
log "private containerd up: $SOCK"

import() { # archive, expected name
  local t0
  t0="$(now)"
  "${CTR[@]}" images import "$1" >&2
  log "import $2: $(elapsed "$t0") ($(du -h "$1" | cut -f1) archive)"
  "${CTR[@]}" images ls -q | grep -qxF "$2" || die "$2 not listed after import"
}

check_pause() {
  local archive name rc
  archive="$("$HACK_DIR/build-images.sh" pause)"
  name="$("$HACK_DIR/build-images.sh" pause-ref)"
  import "$archive" "$name"
  "${CTR[@]}" run "${RUNOPTS[@]}" --rm "$name" p1 >"$T/p1.log" 2>&1 &
  local run=$!
  for _ in $(seq 50); do
    "${CTR[@]}" tasks ls 2>/dev/null | grep -q '^p1 .*RUNNING' && break
    sleep 0.1
  done
  "${CTR[@]}" tasks ls | grep -q '^p1 .*RUNNING' || { cat "$T/p1.log" >&2; die "pause is not running"; }
  local pid
  pid="$("${CTR[@]}" tasks ls | awk '$1 == "p1" { print $2 }')"
  log "pause running: pid $pid, uid $(ps -o uid= -p "$pid" | tr -d ' ')"
  "${CTR[@]}" tasks kill -s TERM p1
  rc=0
  wait "$run" || rc=$?
  [[ $rc -eq 0 ]] || { cat "$T/p1.log" >&2; die "pause exited $rc on SIGTERM"; }
  log "ok: pause ran and exited 0 on SIGTERM ($(tr '\n' ' ' <"$T/p1.log"))"
}

check_worker() {
  local archive name
  archive="$("$HACK_DIR/build-images.sh" worker)"
  name="$("$HACK_DIR/build-images.sh" worker-ref)"
  import "$archive" "$name"
  mkdir -p "$T/workspace"
  chown 10001:10001 "$T/workspace"
  # As the runtime will run it: non-root, read-only root filesystem, /tmp a tmpfs and the
  # workspace a volume, HOME pointing at the workspace.
  # ctr 1.6 (Debian 12) has no --user: the image's own User (10001:10001) applies, which
  # the `id` check below proves. Newer ctr gets the flag too, as the runtime will set it.
  local user=()
  ctr run --help 2>&1 | grep -q -- '--user' && user=(--user 10001:10001)
  local run=("${CTR[@]}" run "${RUNOPTS[@]}" --rm "${user[@]}" --read-only
    --mount "type=tmpfs,src=tmpfs,dst=/tmp,options=nosuid:nodev:mode=1777"
    --mount "type=bind,src=$T/workspace,dst=/workspace,options=rbind:rw"
    --env HOME=/workspace --cwd /opt/agentplane)
  local n=0 out
  w() { n=$((n + 1)); "${run[@]}" "$name" "w$n" "$@"; }

  out="$(w node --version)"
  log "ok: node --version -> $out"
  out="$(w node -e "import('@anthropic-ai/claude-agent-sdk').then(()=>console.log('sdk ok'))")"
  [[ "$out" == "sdk ok" ]] || die "SDK import: $out"
  log "ok: $out"
  out="$(w bash -c 'echo hi')"
  [[ "$out" == hi ]] || die "bash: $out"
  log "ok: bash -c 'echo hi' -> $out"
  out="$(w id)"
  [[ "$out" == "uid=10001(agent) gid=10001(agent) groups=10001(agent)" ]] || die "id: $out"
  log "ok: id -> $out"
  out="$(w sh -c 'git --version && rg --version | sed -n 1p && ls /etc/ssl/certs/ca-certificates.crt')"
  log "ok: $(echo "$out" | tr '\n' ' ')"
  # The engine binary the SDK spawns, on the read-only root with HOME on the workspace.
  out="$(w sh -c 'exec "$(node -e "console.log(require.resolve(\"@anthropic-ai/claude-agent-sdk-linux-x64/package.json\").replace(/package.json$/, \"\"))")"claude --version')"
  log "ok: claude --version -> $out"
  # A real engine task (Bash tool, then a resumed session) against the scripted model.
  out="$("${run[@]}" --mount "type=bind,src=$IMAGES_DIR/worker,dst=/smoke,options=rbind:ro" \
    "$name" w-smoke node /smoke/engine-smoke.mjs 2>&1)" ||
    die "engine smoke test failed: $out"
  log "ok: $out"
  log "workspace after the engine ran: $(cd "$T/workspace" && find . -maxdepth 2 | sort | tr '\n' ' ')"
  # The worker entrypoint itself: without its settings it must fail with exit 2 and a message.
  local rc=0
  out="$("${CTR[@]}" run "${RUNOPTS[@]}" --rm "${user[@]}" --read-only "$name" w-entry 2>&1)" || rc=$?
  [[ $rc -eq 2 && "$out" == *"AGENTPLANE_SERVER_URL must be set"* ]] || die "entrypoint: exit $rc: $out"
  log "ok: entrypoint runs (exit 2 without AGENTPLANE_SERVER_URL, as designed)"
}

for i in "${images[@]}"; do
  case "$i" in
    pause) check_pause ;;
    worker) check_worker ;;
    *) die "unknown image $i" ;;
  esac
done
log "all checks passed"
