#!/usr/bin/env bash
# A throwaway local Kubernetes cluster for agentplane's tests: etcd + kube-apiserver +
# kube-controller-manager, and (unless AGENTPLANE_CP_NODE=false) one node: containerd,
# kube-scheduler, a kubelet and local-path-provisioner, all as host processes. Without a
# node, kube-controller-manager runs only the controllers that need none (API_CONTROLLERS).
#
#   hack/control-plane.sh up     build/reuse binaries, start, wait for /readyz (and for the
#                                node to be Ready); last stdout line is the admin kubeconfig
#   hack/control-plane.sh down   stop everything, remove every trace on the machine (pods,
#                                mounts, network, cgroups, iptables) and the state dir
#   hack/control-plane.sh env    print export lines (KUBECONFIG, ...) for a running plane
#   hack/control-plane.sh check-clean
#                                list what a node-mode plane leaves on the machine; exit 1 if
#                                anything of ours is left (see hack/README.md)
#   hack/control-plane.sh crictl|ctr ARGS...
#                                run crictl / ctr (namespace k8s.io) against the node's containerd
#   hack/control-plane.sh register
#                                start agentplane (dist/, built by `make build`) in Kubernetes
#                                mode against the plane and register its APIService; waits for
#                                Available=True; last stdout line is agentplane's https URL
#
# State (certs, etcd data, pid files, logs, kubeconfigs, containerd and kubelet dirs, volumes)
# lives in ${AGENTPLANE_CP_DIR:-/tmp/agentplane-cp}. Progress goes to stderr.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE_DIR="${AGENTPLANE_CP_DIR:-/tmp/agentplane-cp}"
START_TIMEOUT="${AGENTPLANE_CP_START_TIMEOUT:-120}"   # seconds to wait for /readyz
# The aggregator has two ways to reach an APIService backend (see the flag below).
AGGREGATOR_ROUTING="${AGENTPLANE_CP_AGGREGATOR_ROUTING:-false}"

PKI="$STATE_DIR/pki"
KUBECONFIG_PATH="$STATE_DIR/admin.kubeconfig"
MARKER="$STATE_DIR/.agentplane-cp"   # proves a dir is ours before `down` deletes it
# kube-controller-manager's controllers in an API-only plane: namespace deletion and the
# garbage collector (ownerReferences, propagationPolicy), which agentplane's objects take part in.
API_CONTROLLERS="${AGENTPLANE_CP_API_CONTROLLERS:-namespace,garbagecollector}"

# --- node mode (see "node" below)
NODE="${AGENTPLANE_CP_NODE:-true}"
NODE_NAME="${AGENTPLANE_CP_NODE_NAME:-agentplane-node}"
POD_CIDR="${AGENTPLANE_CP_POD_CIDR:-10.88.0.0/16}"
WORKER_IMAGE="${AGENTPLANE_CP_WORKER_IMAGE:-true}"
NODE_STATE="$STATE_DIR/node"            # exists iff this plane has a node; `down` keys off it
BASELINE="$NODE_STATE/baseline"         # the machine as found by `up`, restored by `down`
CTRD_DIR="$STATE_DIR/containerd"
CTRD_SOCK="$CTRD_DIR/containerd.sock"
# Machine-wide names, distinct from a Debian/podman/k3s install's (cni0, 10.88 podman0, ...)
# so that `down` can tell what is ours. Only one node-mode plane runs per machine (it owns
# these names); the claim file says which state dir does.
BRIDGE=agentplane0
CNI_NETWORK=agentplane
NODE_CLAIM=/run/agentplane-cp-node

log() { echo "control-plane: $*" >&2; }
# A background image import (lib/node.sh) must not outlive a failed `up` and race `down`.
die() {
  log "error: $*"
  [[ -n "${WORKER_JOB:-}" ]] && wait "$WORKER_JOB" 2>/dev/null
  exit 1
}

# Step timing on stderr: "[ 3.2s +0.4s] what just finished".
T0="$(date +%s%N)"
T_LAST="$T0"
mark() {
  local now
  now="$(date +%s%N)"
  log "$(awk -v a="$T0" -v b="$T_LAST" -v n="$now" 'BEGIN { printf "[%5.1fs +%4.1fs]", (n - a) / 1e9, (n - b) / 1e9 }') $*"
  T_LAST="$now"
}

# shellcheck source=lib/node.sh
source "$HACK_DIR/lib/node.sh"

# ---------------------------------------------------------------------------------------
# processes

# A pid file only counts if that pid is still alive *and* its command line mentions our
# state dir: pids get reused, and we must never signal somebody else's process.
live_pid() { # name [state dir, default ours] -> pid on stdout, or failure
  local dir="${2:-$STATE_DIR}" pid
  local f="$dir/$1.pid"
  [[ -s "$f" ]] || return 1
  pid="$(cat "$f")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null < "/proc/$pid/cmdline" | grep -qF -- "$dir" || return 1
  echo "$pid"
}

plane_alive() { # state dir -> success when any daemon that plane started still runs
  local f
  for f in "$1"/*.pid; do
    [[ -e "$f" ]] || continue
    live_pid "$(basename "$f" .pid)" "$1" > /dev/null && return 0
  done
  return 1
}

# setsid detaches the process from the caller's session/process group, so it survives
# the shell (or test runner) that ran `up`. The child writes its own pid before exec'ing,
# which is the pid of the real binary rather than of a wrapper.
start_proc() { # name, binary, args...
  local name="$1"; shift
  # 9>&- : the daemons must not inherit the lock held on fd 9 (see the bottom), or every
  # later invocation would wait for them to exit.
  # shellcheck disable=SC2016 # $$ and $@ are for the inner bash
  setsid bash -c 'echo $$ > "$0"; exec "$@"' "$STATE_DIR/$name.pid" "$@" \
    > "$STATE_DIR/$name.log" 2>&1 < /dev/null 9>&- &
  local _
  for _ in $(seq 50); do [[ -s "$STATE_DIR/$name.pid" ]] && return 0; sleep 0.1; done
  die "$name did not start; see $STATE_DIR/$name.log"
}

# Alive and not a zombie: the daemons are reparented to pid 1 when `up` exits, and a pid 1
# that reaps late would otherwise make every stop look slow.
running() { # pid
  local st
  st="$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [[ -n "$st" && "$st" != Z ]]
}

stop_procs() { # names... : TERM them all, then wait (KILL after 10 s)
  local name pid _ pids=()
  for name in "$@"; do
    pid="$(live_pid "$name")" || { rm -f "$STATE_DIR/$name.pid"; continue; }
    kill -TERM "$pid" 2>/dev/null || true
    pids+=("$pid")
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 200); do running "$pid" || break; sleep 0.05; done
    if running "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  for name in "$@"; do rm -f "$STATE_DIR/$name.pid"; done
  ((${#pids[@]})) && mark "stopped $*"
  return 0
}
stop_proc() { stop_procs "$1"; }

# Starting the apiserver only once etcd accepts connections keeps its log free of a
# burst of gRPC dial errors, and turns an etcd that cannot start into a clear error.
# etcd logs at warn, so a slow start on a busy CI machine prints nothing: wait while it
# lives (60 s), and say which of "died" or "too slow" it was.
wait_etcd() { # client port -> 0 up, 1 died, 2 too slow
  local _
  for _ in $(seq 600); do
    (exec 3<> "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    # Looked at twice: one read of /proc/<pid>/stat while etcd is exec'ed may come back empty.
    live_pid etcd >/dev/null || { sleep 0.2; live_pid etcd >/dev/null; } || return 1
    sleep 0.1
  done
  return 2
}

# The ports are free when chosen but another process may bind one before etcd does
# (other tests open loopback listeners meanwhile): then etcd dies with "address already
# in use", and new ports are picked, three times at most. So does an etcd gone before it
# logged anything (seen once in CI, the log empty: the cause is not known).
start_etcd() { # sets etcd_port peer_port api_port
  local attempt rc
  for attempt in 1 2 3; do
    read -r etcd_port peer_port api_port < <(free_ports)
    rm -rf "$STATE_DIR/etcd"
    start_proc etcd "$BIN/etcd" \
      --name=agentplane-cp \
      --data-dir="$STATE_DIR/etcd" \
      --listen-client-urls="http://127.0.0.1:$etcd_port" \
      --advertise-client-urls="http://127.0.0.1:$etcd_port" \
      --listen-peer-urls="http://127.0.0.1:$peer_port" \
      --initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
      --initial-cluster="agentplane-cp=http://127.0.0.1:$peer_port" \
      --unsafe-no-fsync \
      --log-level=warn
    rc=0; wait_etcd "$etcd_port" || rc=$?
    ((rc == 0)) && return 0
    if ((rc == 1)) && grep -q "address already in use" "$STATE_DIR/etcd.log"; then
      rm -f "$STATE_DIR/etcd.pid"
      mark "etcd: a port was taken (attempt $attempt), picking others"
      continue
    fi
    if ((rc == 1)) && [[ ! -s "$STATE_DIR/etcd.log" ]]; then
      stop_proc etcd
      mark "etcd: gone before it logged anything (attempt $attempt), starting it again"
      continue
    fi
    tail -n 20 "$STATE_DIR/etcd.log" >&2 || true
    if ((rc == 2)); then
      stop_proc etcd
      die "etcd did not accept connections within 60 s; full log: $STATE_DIR/etcd.log"
    fi
    die "etcd exited; full log: $STATE_DIR/etcd.log"
  done
  die "etcd: not started after 3 attempts; full log: $STATE_DIR/etcd.log"
}

readyz() { # -> success when the apiserver reports ready
  "$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH" --request-timeout=5s get --raw /readyz >/dev/null 2>&1
}

is_up() {
  [[ -f "$STATE_DIR/bin-dir" && -f "$KUBECONFIG_PATH" ]] || return 1
  live_pid etcd >/dev/null && live_pid kube-apiserver >/dev/null && live_pid kube-controller-manager >/dev/null || return 1
  BIN="$(cat "$STATE_DIR/bin-dir")"
  if [[ -d "$NODE_STATE" ]]; then
    local name
    for name in "${NODE_PROCS[@]}"; do live_pid "$name" > /dev/null || return 1; done
  fi
  readyz
}

# The plane that is up has the mode that is asked for.
mode_matches() {
  if [[ "$NODE" == true ]]; then [[ -d "$NODE_STATE" ]]; else [[ ! -d "$NODE_STATE" ]]; fi
}

# Three distinct free loopback ports. All sockets stay bound until all are chosen, so
# the kernel cannot hand out the same port twice; the window between closing them and
# the servers binding is small enough for a test fixture.
free_ports() {
  local py='import socket
ss = [socket.socket() for _ in range(3)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))'
  local js='const net=require("net");const ps=[];let n=0;
for(let i=0;i<3;i++){const s=net.createServer();s.listen(0,"127.0.0.1",()=>{ps.push(s);
if(++n===3){console.log(ps.map(x=>x.address().port).join(" "));ps.forEach(x=>x.close());}});}'
  if command -v python3 >/dev/null; then python3 -c "$py"
  elif command -v node >/dev/null; then node -e "$js"
  else die "python3 or node is needed to pick free ports"; fi
}

# ---------------------------------------------------------------------------------------
# certificates

# Four separate trust roots, as in a kubeadm cluster, because they mean different things:
#   serving-ca      signs the apiserver's serving cert (clients verify the apiserver)
#   client-ca       signs client certs the apiserver accepts (--client-ca-file)
#   front-proxy-ca  signs the cert the aggregator presents to extension apiservers such
#                   as agentplane; they trust X-Remote-User/Group headers only from it
#   sa.key/sa.pub   service-account token signing (not a CA)
# Keeping client-ca and front-proxy-ca apart matters: otherwise any admin client cert
# could impersonate arbitrary users towards agentplane via the request headers.
gen_pki() {
  mkdir -p "$PKI"
  cat > "$PKI/openssl.cnf" <<'EOF'
[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
authorityKeyIdentifier = keyid
# 10.0.0.1 is the "kubernetes" Service IP (first IP of --service-cluster-ip-range).
subjectAltName = DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster.local, IP:127.0.0.1, IP:10.0.0.1
[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
EOF
  local ca
  for ca in serving-ca client-ca front-proxy-ca; do
    openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$ca.key" 2>/dev/null
    openssl req -x509 -new -key "$PKI/$ca.key" -subj "/CN=agentplane-$ca" -days 365 \
      -config "$PKI/openssl.cnf" -extensions ca -out "$PKI/$ca.crt"
  done
  issue serving-ca serving "/CN=kube-apiserver" server
  # system:masters is hard-wired to cluster-admin and bypasses RBAC entirely.
  issue client-ca admin "/O=system:masters/CN=admin" client
  # The built-in RBAC roles are bound to this user name.
  issue client-ca kube-controller-manager "/CN=system:kube-controller-manager" client
  # The CN must match --requestheader-allowed-names.
  issue front-proxy-ca front-proxy-client "/CN=front-proxy-client" client
  # Token signing stays RSA: RS256 is what every JWT consumer can verify.
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$PKI/sa.key" 2>/dev/null
  openssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"
  chmod 600 "$PKI"/*.key
}

issue() { # ca, name, subject, extension section
  local ca="$1" name="$2"
  openssl ecparam -name prime256v1 -genkey -noout -out "$PKI/$name.key" 2>/dev/null
  openssl req -new -key "$PKI/$name.key" -subj "$3" -config "$PKI/openssl.cnf" |
    openssl x509 -req -CA "$PKI/$ca.crt" -CAkey "$PKI/$ca.key" -days 365 \
      -set_serial "0x$(openssl rand -hex 16)" -extfile "$PKI/openssl.cnf" -extensions "$4" \
      -out "$PKI/$name.crt" 2>/dev/null
}

write_kubeconfig() { # file, server url, client cert name (pki/<name>.{crt,key})
  # Credentials are embedded rather than referenced by path, so the file keeps working
  # when copied (e.g. into a test's temp dir) and works for @kubernetes/client-node too.
  local b64='base64 -w0'
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: agentplane-cp
  cluster:
    server: $2
    certificate-authority-data: $($b64 < "$PKI/serving-ca.crt")
users:
- name: $3
  user:
    client-certificate-data: $($b64 < "$PKI/$3.crt")
    client-key-data: $($b64 < "$PKI/$3.key")
contexts:
- name: agentplane-cp
  context:
    cluster: agentplane-cp
    user: $3
current-context: agentplane-cp
EOF
  chmod 600 "$1"
}

# ---------------------------------------------------------------------------------------
# commands

cmd_up() {
  [[ "$NODE" == true || "$NODE" == false ]] || die "AGENTPLANE_CP_NODE must be true or false, not '$NODE'"
  if is_up && mode_matches; then
    log "already up"
    echo "$KUBECONFIG_PATH"
    return 0
  fi
  if [[ -d "$STATE_DIR" && -n "$(ls -A "$STATE_DIR")" && ! -f "$MARKER" ]]; then
    die "$STATE_DIR exists and was not created by this script; set AGENTPLANE_CP_DIR elsewhere"
  fi
  # A half-up plane (one process died, or a previous `up` was interrupted) is not worth
  # repairing: start from scratch so every `up` yields the same known state.
  if [[ -d "$STATE_DIR" ]]; then
    if is_up; then
      log "the plane in $STATE_DIR is up $( [[ -d "$NODE_STATE" ]] && echo with || echo without ) a node; restarting it in the other mode"
    else
      log "cleaning up stale state in $STATE_DIR"
    fi
    cmd_down
  fi

  [[ "$NODE" == true ]] && node_preflight
  BIN="$(AGENTPLANE_CP_NODE="$NODE" "$HACK_DIR/build-control-plane.sh" | tail -n1)"
  [[ -x "$BIN/kube-apiserver" && -x "$BIN/etcd" && -x "$BIN/kubectl" && -x "$BIN/kube-controller-manager" ]] || die "no binaries in '$BIN'"
  if [[ "$NODE" == true ]]; then
    PAUSE_ARCHIVE="$("$HACK_DIR/build-images.sh" pause | tail -n1)"
    [[ -f "$PAUSE_ARCHIVE" ]] || die "hack/build-images.sh pause did not produce an archive"
    PAUSE_IMAGE="$("$HACK_DIR/build-images.sh" pause-ref | tail -n1)"
  fi
  mark "binaries and images ready"

  mkdir -p "$STATE_DIR"
  touch "$MARKER"
  echo "$BIN" > "$STATE_DIR/bin-dir"
  gen_pki
  [[ "$NODE" == true ]] && node_pki "$(node_gateway)"
  mark "certificates"

  local etcd_port peer_port api_port
  # Plain HTTP on loopback only, like envtest. --unsafe-no-fsync: the data is thrown
  # away on `down`, and fsync dominates etcd latency on CI disks.
  start_etcd
  cat > "$STATE_DIR/ports.env" <<EOF
ETCD_CLIENT_PORT=$etcd_port
ETCD_PEER_PORT=$peer_port
APISERVER_PORT=$api_port
EOF
  local server="https://127.0.0.1:$api_port"
  mark "etcd ready"

  local -a mode_flags=()
  if [[ "$NODE" == true ]]; then
    mapfile -t mode_flags < <(node_apiserver_flags)
  else
    mode_flags=(--authorization-mode=RBAC --disable-admission-plugins=ServiceAccount)
  fi

  # Aggregator routing. With --enable-aggregator-routing=true the aggregator dials an
  # endpoint IP taken from the backend Service's EndpointSlices; it rejects ExternalName
  # Services ("unsupported service type"), and EndpointSlice validation rejects loopback
  # addresses, so a host-local agentplane on 127.0.0.1 is unreachable that way (and
  # nothing would maintain the slices: no endpointslice controller runs here). With false (the
  # upstream default) it dials the Service's cluster IP -- unroutable here, no kube-proxy
  # -- or, for an ExternalName Service, https://<externalName>:<port>, which is how a
  # local agentplane is reached (externalName: localhost). Hence the default of false;
  # AGENTPLANE_CP_AGGREGATOR_ROUTING=true is for backends with a routable non-loopback IP.
  # Either way the aggregator verifies the backend's serving cert against the
  # APIService caBundle for the name <service>.<namespace>.svc.
  #
  # API-only mode: --disable-admission-plugins=ServiceAccount, because that plugin rejects
  # pods until the namespace's "default" ServiceAccount exists, and only the serviceaccount
  # controller (not among API_CONTROLLERS) creates it. With a node, node_apiserver_flags (lib/node.sh) adds the
  # Node authorizer, NodeRestriction and the kubelet client flags, and keeps the plugin.
  # --endpoint-reconciler-type=none: the default reconciler publishes the advertise
  # address as the endpoint of the "kubernetes" Service; 127.0.0.1 fails Endpoints
  # validation (no loopback), which it would log every 10s. Nothing runs in-cluster
  # here, so the Service needs no endpoints.
  # --cert-dir: unused while --tls-cert-file is given, but pins any self-generated
  # files inside the state dir instead of /var/run/kubernetes.
  start_proc kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --secure-port="$api_port" \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --cert-dir="$PKI" \
    --tls-cert-file="$PKI/serving.crt" \
    --tls-private-key-file="$PKI/serving.key" \
    --client-ca-file="$PKI/client-ca.crt" \
    --service-account-key-file="$PKI/sa.pub" \
    --service-account-signing-key-file="$PKI/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-cluster-ip-range=10.0.0.0/24 \
    --endpoint-reconciler-type=none \
    --requestheader-client-ca-file="$PKI/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --requestheader-group-headers=X-Remote-Group \
    --requestheader-username-headers=X-Remote-User \
    --proxy-client-cert-file="$PKI/front-proxy-client.crt" \
    --proxy-client-key-file="$PKI/front-proxy-client.key" \
    --enable-aggregator-routing="$AGGREGATOR_ROUTING" \
    "${mode_flags[@]}"

  write_kubeconfig "$KUBECONFIG_PATH" "$server" admin
  # containerd needs no apiserver: it starts while the apiserver does.
  [[ "$NODE" == true ]] && node_up "$server"

  log "waiting for $server/readyz (up to ${START_TIMEOUT}s)"
  local deadline=$((SECONDS + START_TIMEOUT)) name
  until readyz; do
    for name in etcd kube-apiserver; do
      if ! live_pid "$name" >/dev/null; then
        tail -n 20 "$STATE_DIR/$name.log" >&2 || true
        die "$name exited; full log: $STATE_DIR/$name.log"
      fi
    done
    if ((SECONDS >= deadline)); then
      tail -n 20 "$STATE_DIR/kube-apiserver.log" >&2 || true
      die "kube-apiserver not ready after ${START_TIMEOUT}s; logs in $STATE_DIR (run '$0 down' to clean up)"
    fi
    sleep 0.5
  done
  mark "kube-apiserver ready"
  if [[ "$NODE" == true ]]; then
    node_up_after_apiserver "$server"
    log "up: $server, node $NODE_NAME Ready"
  else
    api_controllers "$server"
    log "up: $server (API only; kube-controller-manager: $API_CONTROLLERS)"
  fi
  echo "$KUBECONFIG_PATH"
}

# kube-controller-manager of an API-only plane (with a node, node_start_components starts it
# with every controller). --use-service-account-credentials: each controller acts as its own
# ServiceAccount, as in a kubeadm cluster, so RBAC applies to it as it would for real (the
# garbage collector and the namespace controller reach agentplane's API as those accounts).
# --secure-port=0: no health/metrics listener, so no port to pick or to clash.
api_controllers() { # server url
  local kc="$STATE_DIR/kube-controller-manager.kubeconfig"
  write_kubeconfig "$kc" "$1" kube-controller-manager
  start_proc kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$kc" \
    --controllers="$API_CONTROLLERS" \
    --secure-port=0 \
    --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$PKI/sa.key" \
    --root-ca-file="$PKI/serving-ca.crt" \
    --flex-volume-plugin-dir="$STATE_DIR/kcm-volume-plugins"
  sleep 0.5
  live_pid kube-controller-manager >/dev/null || {
    tail -n 20 "$STATE_DIR/kube-controller-manager.log" >&2 || true
    die "kube-controller-manager exited; full log: $STATE_DIR/kube-controller-manager.log"
  }
  mark "kube-controller-manager started"
}

# agentplane runs on this machine, outside the cluster. The aggregator reaches it through an
# ExternalName Service pointing at localhost (with --enable-aggregator-routing=false it dials
# https://<externalName>:<APIService port>) and verifies its cert for <svc>.<ns>.svc.
AP_NS=agentplane-system
AP_SVC=agentplane

cmd_register() {
  is_up || die "not up (run: $0 up)"
  local repo main port url
  repo="$(cd "$HACK_DIR/.." && pwd)"
  main="$repo/dist/cmd/agentplane/main.js"
  [[ -f "$main" ]] || die "agentplane is not built (run: make build)"
  # shellcheck disable=SC1091
  source "$STATE_DIR/ports.env"
  local kubectl=("$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH")

  if live_pid agentplane > /dev/null; then
    # shellcheck disable=SC1091
    source "$STATE_DIR/agentplane.env"
  else
    if [[ ! -f "$PKI/agentplane.crt" ]]; then
      cat >> "$PKI/openssl.cnf" <<CNF
[agentplane]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
authorityKeyIdentifier = keyid
subjectAltName = DNS:$AP_SVC.$AP_NS.svc, DNS:$AP_SVC.$AP_NS.svc.cluster.local, DNS:localhost, IP:127.0.0.1
CNF
      issue serving-ca agentplane "/CN=$AP_SVC.$AP_NS.svc" agentplane
    fi
    read -r port wport _ < <(free_ports)
    # Where agents run: pods on the node when there is one (they reach agentplane's worker
    # listener on the node IP, the pods' gateway), else worker processes beside agentplane (the
    # API-only plane of the aggregated-API suites). AGENTPLANE_CP_RUNTIME=local|kubernetes decides.
    local runtime_args=(--runtime local) runtime=${AGENTPLANE_CP_RUNTIME:-}
    [[ -n "$runtime" ]] || { [[ -n "${NODE_IP:-}" ]] && runtime=kubernetes || runtime=local; }
    if [[ "$runtime" == kubernetes ]]; then
      [[ -n "${NODE_IP:-}" ]] || die "AGENTPLANE_CP_RUNTIME=kubernetes needs the node (up without AGENTPLANE_CP_NODE=false)"
      runtime_args=(--runtime kubernetes --worker-image "$("$HACK_DIR/build-images.sh" worker-ref)"
        --worker-image-pull-policy Never --worker-listen "$NODE_IP:$wport" --worker-url "http://$NODE_IP:$wport"
        --install-namespace "$AP_NS")
    fi
    # The server's built-in demo model, unless the caller runs a scripted model of its own to
    # read its requests (AGENTPLANE_CP_MODEL_URL, with its key in ANTHROPIC_API_KEY).
    local model_args=(--demo) model_env=() model=demo
    if [[ -n "${AGENTPLANE_CP_MODEL_URL:-}" ]]; then
      [[ -n "${ANTHROPIC_API_KEY:-}" ]] || die "AGENTPLANE_CP_MODEL_URL needs the model's key in ANTHROPIC_API_KEY"
      model_args=() model_env=("ANTHROPIC_BASE_URL=$AGENTPLANE_CP_MODEL_URL") model="$AGENTPLANE_CP_MODEL_URL"
    fi
    log "starting agentplane on 127.0.0.1:$port (Kubernetes mode, model: $model, ${runtime_args[*]:0:2})"
    start_proc agentplane env "${model_env[@]}" node "$main" serve --mode kubernetes \
      --kubeconfig "$KUBECONFIG_PATH" --host 127.0.0.1 --port "$port" \
      --tls-cert-file "$PKI/agentplane.crt" --tls-private-key-file "$PKI/agentplane.key" \
      --data-dir "$STATE_DIR/agentplane" "${model_args[@]}" "${runtime_args[@]}"
    echo "AGENTPLANE_PORT=$port" > "$STATE_DIR/agentplane.env"
    AGENTPLANE_PORT="$port"
  fi
  url="https://127.0.0.1:$AGENTPLANE_PORT"

  "${kubectl[@]}" apply -f - > /dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: $AP_NS}
---
apiVersion: v1
kind: Service
metadata: {name: $AP_SVC, namespace: $AP_NS}
spec: {type: ExternalName, externalName: localhost}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1alpha1.agentplane.io}
spec:
  group: agentplane.io
  version: v1alpha1
  groupPriorityMinimum: 1000
  versionPriority: 15
  service: {namespace: $AP_NS, name: $AP_SVC, port: $AGENTPLANE_PORT}
  caBundle: $(base64 -w0 < "$PKI/serving-ca.crt")
YAML
  local deadline=$((SECONDS + START_TIMEOUT))
  until "${kubectl[@]}" wait --for=condition=Available --timeout=5s apiservice/v1alpha1.agentplane.io > /dev/null 2>&1; do
    if ! live_pid agentplane > /dev/null; then
      tail -n 30 "$STATE_DIR/agentplane.log" >&2 || true
      die "agentplane exited; see $STATE_DIR/agentplane.log"
    fi
    if ((SECONDS >= deadline)); then
      "${kubectl[@]}" get apiservice v1alpha1.agentplane.io -o yaml >&2 || true
      die "APIService not Available after ${START_TIMEOUT}s; agentplane log: $STATE_DIR/agentplane.log"
    fi
  done
  # Available means discovery answers; kube-apiserver downloads our OpenAPI a little later, and
  # `kubectl explain` and apply validation need it.
  until "${kubectl[@]}" get --raw /openapi/v3/apis/agentplane.io/v1alpha1 > /dev/null 2>&1; do
    ((SECONDS < deadline)) || die "kube-apiserver does not serve agentplane's OpenAPI after ${START_TIMEOUT}s"
    sleep 0.5
  done
  log "registered: apiservice/v1alpha1.agentplane.io Available, OpenAPI aggregated"
  echo "$url"
}

cmd_down() {
  [[ -d "$STATE_DIR" ]] || { log "not running"; return 0; }
  [[ -f "$MARKER" ]] || die "$STATE_DIR was not created by this script; not deleting it"
  stop_proc agentplane
  node_down
  stop_proc kube-controller-manager
  # The apiserver goes first so it does not spend its shutdown retrying a dead etcd.
  stop_proc kube-apiserver
  stop_proc etcd
  node_down_sweep
  # Never follow a mount out of the state dir (node_down_sweep has unmounted everything).
  [[ -z "$(mounts_under "$STATE_DIR")" ]] || die "mounts remain under $STATE_DIR; not deleting it"
  rm -rf --one-file-system "$STATE_DIR"
  mark "down"
}

cmd_env() {
  is_up || die "not up (run: $0 up)"
  # shellcheck disable=SC1091
  source "$STATE_DIR/ports.env"
  cat <<EOF
export KUBECONFIG=$KUBECONFIG_PATH
export AGENTPLANE_CP_DIR=$STATE_DIR
export AGENTPLANE_CP_SERVER=https://127.0.0.1:$APISERVER_PORT
export AGENTPLANE_CP_BIN=$BIN
EOF
  if [[ -d "$NODE_STATE" ]]; then
    # crictl and ctr read these.
    cat <<EOF
export AGENTPLANE_CP_NODE_NAME=$NODE_NAME
export AGENTPLANE_CP_NODE_IP=$NODE_IP
export AGENTPLANE_CP_CONTAINERD_SOCK=$CTRD_SOCK
export CONTAINER_RUNTIME_ENDPOINT=unix://$CTRD_SOCK
export IMAGE_SERVICE_ENDPOINT=unix://$CTRD_SOCK
export CONTAINERD_ADDRESS=$CTRD_SOCK
export CONTAINERD_NAMESPACE=k8s.io
EOF
  fi
}

cmd_check_clean() {
  if node_check_clean "${1:-}"; then
    log "clean: nothing of a node-mode plane is left on this machine"
  else
    log "leftovers above"
    return 1
  fi
}

# Read-only helpers need no lock (a `crictl logs -f` must not block `down`).
case "${1:-}" in
  crictl)
    shift
    [[ -S "$CTRD_SOCK" ]] || die "no node containerd at $CTRD_SOCK"
    BIN="$(cat "$STATE_DIR/bin-dir")"
    crictl_ "$@"
    exit
    ;;
  ctr) shift; ctr_ "$@"; exit ;;
  check-clean) shift; cmd_check_clean "$@"; exit ;;
esac

# Serialise concurrent invocations (e.g. parallel test workers all calling `up`). The
# lock file sits next to the state dir because `down` deletes the dir itself.
mkdir -p "$(dirname "$STATE_DIR")"
exec 9> "$STATE_DIR.lock"
flock 9

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  env) cmd_env ;;
  register) cmd_register ;;
  *) echo "usage: $0 up|down|env|register|check-clean [report]|crictl ARGS|ctr ARGS" >&2; exit 2 ;;
esac
