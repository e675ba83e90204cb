# shellcheck shell=bash
# The node half of hack/control-plane.sh (sourced by it; uses its STATE_DIR, PKI, BIN, log,
# die, start_proc, stop_proc, live_pid, issue, write_kubeconfig). One node, all host processes:
#
#   containerd               own config, socket, root and state under $STATE_DIR/containerd
#   kube-controller-manager  tokens, namespaces, garbage collection, PV binding, ...
#   kube-scheduler
#   kubelet                  root dir $STATE_DIR/kubelet, node name $NODE_NAME
#   local-path-provisioner   StorageClass local-path (the default), volumes in $STATE_DIR/volumes
#
# What the node changes outside the state dir, and `down` undoes (see node_down):
#   the bridge $BRIDGE and the pods' veths and netns (/run/netns/cni-*); iptables chains
#   KUBE-* / CNI-* that were not there before; cgroups kubepods/ in every hierarchy; the
#   sysctls kubelet and the bridge plugin set (kernel.panic, vm.overcommit_memory,
#   net.ipv4.ip_forward, ...); /var/log/containers symlinks; /var/lib/cni (libcni's cache);
#   /run/containerd/s (containerd 1.6 always puts shim sockets there); the claim file.
# `up` records what of these existed before (the baseline, $NODE_STATE/baseline) and `down`
# removes only what was not there.

# Debian packages the node needs, as "command-or-file package".
NODE_DEPS=(
  "containerd containerd" "ctr containerd" "containerd-shim-runc-v2 containerd"
  "runc runc"
  "/usr/lib/cni/bridge containernetworking-plugins" "/usr/lib/cni/host-local containernetworking-plugins"
  "/usr/lib/cni/loopback containernetworking-plugins"
  "iptables iptables" "ip6tables iptables" "iptables-save iptables" "iptables-restore iptables"
  "ip iproute2" "mount mount" "nsenter util-linux"
)

# The kernel settings kubelet (container_manager_linux.go setupKernelTunables, unless
# protectKernelDefaults) and the bridge plugin (isGateway turns on forwarding) change.
NODE_SYSCTLS=(
  vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes
  net.ipv4.ip_forward net.ipv4.conf.all.forwarding net.ipv6.conf.all.forwarding
)

# Machine paths the node may create; `down` removes them again when they were not there.
NODE_PATHS=(/run/containerd /run/containerd/s /run/netns /var/lib/cni /var/lib/cni/results
  /var/log/containers /var/log/pods /var/lib/kubelet /usr/libexec/kubernetes)

NODE_PROCS=(containerd kube-controller-manager kube-scheduler kubelet local-path-provisioner)

node_gateway() { # the first address of POD_CIDR: the bridge's address and the node IP
  local net="${POD_CIDR%/*}" a b c d
  IFS=. read -r a b c d <<< "$net"
  echo "$a.$b.$c.$((d + 1))"
}

node_preflight() {
  [[ $EUID -eq 0 ]] || die "the node needs root (containerd, kubelet, CNI); use AGENTPLANE_CP_NODE=false for an API-only plane"
  local dep cmd pkg missing=()
  for dep in "${NODE_DEPS[@]}"; do
    read -r cmd pkg <<< "$dep"
    if [[ "$cmd" == /* ]]; then [[ -x "$cmd" ]]; else command -v "$cmd" > /dev/null; fi ||
      [[ " ${missing[*]} " == *" $pkg "* ]] || missing+=("$pkg")
  done
  ((${#missing[@]} == 0)) ||
    die "missing Debian packages for the node: ${missing[*]} (apt-get install -y ${missing[*]}), or use AGENTPLANE_CP_NODE=false"
  if [[ -e "$NODE_CLAIM" ]]; then
    local other
    other="$(cat "$NODE_CLAIM")"
    if [[ "$other" != "$STATE_DIR" && -d "$other/node" ]]; then
      plane_alive "$other" &&
        die "another node-mode plane is up in $other (one per machine); run: AGENTPLANE_CP_DIR=$other $0 down"
      # A run killed before its `down` (a cancelled CI job, a machine restored from a
      # snapshot) leaves mounts, cgroups and the bridge but no daemon: take that down first.
      log "a node-mode plane in $other was left behind (none of its daemons runs): taking it down first"
      AGENTPLANE_CP_DIR="$other" bash "$0" down ||
        die "could not take down the plane left in $other; run: AGENTPLANE_CP_DIR=$other $0 down"
    fi
  fi
  if ip link show "$BRIDGE" > /dev/null 2>&1; then
    die "network interface $BRIDGE exists: a node-mode plane is running or one was not taken down; run '$0 down' with its AGENTPLANE_CP_DIR, or 'ip link del $BRIDGE'"
  fi
  local route
  route="$(ip -4 route show to exact "$POD_CIDR" 2> /dev/null)"
  [[ -z "$route" ]] || die "$POD_CIDR is already routed ($route); set AGENTPLANE_CP_POD_CIDR to a free range"
}

# What of the machine-wide state existed before this plane: node_down only removes the rest.
node_baseline() {
  mkdir -p "$BASELINE"
  local k ipt t d
  for k in "${NODE_SYSCTLS[@]}"; do
    [[ -e "/proc/sys/${k//.//}" ]] && echo "$k=$(cat "/proc/sys/${k//.//}")"
  done > "$BASELINE/sysctl"
  for ipt in iptables ip6tables; do
    for t in filter nat mangle raw; do
      "$ipt-save" -t "$t" 2> /dev/null | sed -n 's/^:\([^ ]*\) .*/\1/p' > "$BASELINE/$ipt-$t" || true
    done
  done
  nft_tables > "$BASELINE/nft-tables"
  for d in "${NODE_PATHS[@]}"; do [[ -e "$d" ]] && echo "$d"; done > "$BASELINE/paths"
  cgroup_kubepods > "$BASELINE/cgroups"
  ls /run/netns 2> /dev/null > "$BASELINE/netns" || true
}

# With iptables-nft (Debian's default), adding a chain creates the nftables table and its
# base chains, and deleting the chain leaves them: the sweep removes tables that were not
# there at `up` and hold no rule.
nft_tables() { if command -v nft > /dev/null; then nft list tables 2> /dev/null || true; fi; }

cgroup_kubepods() { # every kubepods cgroup dir (cgroup v1 hierarchies and v2)
  local d
  for d in /sys/fs/cgroup/kubepods /sys/fs/cgroup/*/kubepods; do [[ -d "$d" ]] && echo "$d"; done
  return 0
}

node_pki() {
  local ip="$1"
  cat >> "$PKI/openssl.cnf" << CNF
[kubelet-serving]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
authorityKeyIdentifier = keyid
subjectAltName = DNS:$NODE_NAME, DNS:localhost, IP:$ip, IP:127.0.0.1
CNF
  # The apiserver checks the kubelet's serving cert against serving-ca
  # (--kubelet-certificate-authority), so logs/exec/port-forward go over verified TLS.
  issue serving-ca kubelet-serving "/CN=$NODE_NAME" kubelet-serving
  # The Node authorizer and NodeRestriction know a kubelet by exactly this name and group.
  issue client-ca kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" client
  # The built-in RBAC roles are bound to this user name (kube-controller-manager's: gen_pki).
  issue client-ca kube-scheduler "/CN=system:kube-scheduler" client
  # The apiserver's client cert towards the kubelet (kubeadm names it the same).
  issue client-ca apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" client
  # Bound to the upstream provisioner's (Cluster)Role below.
  issue client-ca local-path-provisioner "/CN=agentplane:local-path-provisioner" client
  chmod 600 "$PKI"/*.key
}

# Extra kube-apiserver flags for a plane with a node.
node_apiserver_flags() {
  echo --authorization-mode=Node,RBAC
  # NodeRestriction: a kubelet may only modify its own Node and its pods. ServiceAccount
  # stays on (the default): kube-controller-manager creates the "default" accounts.
  echo --enable-admission-plugins=NodeRestriction
  echo --allow-privileged=true
  echo "--kubelet-client-certificate=$PKI/apiserver-kubelet-client.crt"
  echo "--kubelet-client-key=$PKI/apiserver-kubelet-client.key"
  echo "--kubelet-certificate-authority=$PKI/serving-ca.crt"
  # The node's Hostname address ($NODE_NAME) resolves nowhere; its InternalIP does.
  echo --kubelet-preferred-address-types=InternalIP
}

# ---------------------------------------------------------------------------------------
# containerd

node_start_containerd() {
  local gw="$1"
  mkdir -p "$CTRD_DIR" "$NODE_STATE/cni/net.d" "$NODE_STATE/tmp"
  # The bridge exists before any pod, so the node IP (its address) does too: the kubelet
  # listens there, the apiserver reaches it there, and pods reach the host there. The
  # bridge plugin adopts an existing bridge whose address is the gateway it would set.
  ip link add "$BRIDGE" type bridge
  ip addr add "$gw/${POD_CIDR#*/}" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # No ipMasq and no portmap: pods only talk to this machine (the gateway is on the host),
  # so no iptables rules are needed. host-local keeps its leases in the state dir.
  cat > "$NODE_STATE/cni/net.d/10-$CNI_NETWORK.conflist" << EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$gw"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$NODE_STATE/cni/ipam"
      }
    }
  ]
}
EOF
  # restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, so CRI cannot give a sandbox
  # a lower oom_score_adj than its own; without this every RunPodSandbox fails.
  # The runc Root keeps runc's state in the state dir (its default is /run/containerd/runc).
  # netns_mounts_under_state_dir: pod network namespaces are mounted under the state dir
  # instead of /run/netns. The opt plugin would create /opt/containerd; the v1 runtime
  # (still needed by the tasks service) gets its runc root in the state dir too. The
  # unused snapshotters only cost start-up time.
  cat > "$CTRD_DIR/config.toml" << EOF
version = 2
root = "$CTRD_DIR/root"
state = "$CTRD_DIR/state"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
]

[grpc]
  address = "$CTRD_SOCK"
[ttrpc]
  address = "$CTRD_SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$CTRD_DIR/opt"
[plugins."io.containerd.runtime.v1.linux"]
  runtime_root = "$CTRD_DIR/runc-v1"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$CTRD_DIR/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_STATE/cni/net.d"
    max_conf_num = 1
EOF
  # TMPDIR: containerd mounts image layers under a temp dir while unpacking.
  TMPDIR="$NODE_STATE/tmp" start_proc containerd containerd --config "$CTRD_DIR/config.toml"
}

ctr_() { ctr --address "$CTRD_SOCK" --namespace k8s.io "$@"; }
# Its own config file, so crictl neither reads nor warns about a missing /etc/crictl.yaml.
crictl_() {
  [[ -f "$NODE_STATE/crictl.yaml" ]] || cat > "$NODE_STATE/crictl.yaml" << EOF
runtime-endpoint: unix://$CTRD_SOCK
image-endpoint: unix://$CTRD_SOCK
timeout: 30
EOF
  "$BIN/crictl" --config "$NODE_STATE/crictl.yaml" "$@"
}

node_wait_containerd() {
  local _
  for _ in $(seq 200); do
    [[ -S "$CTRD_SOCK" ]] && ctr_ version > /dev/null 2>&1 && return 0
    live_pid containerd > /dev/null || break
    sleep 0.1
  done
  tail -n 20 "$STATE_DIR/containerd.log" >&2 || true
  die "containerd did not come up; full log: $STATE_DIR/containerd.log"
}

# Imports an OCI archive from hack/build-images.sh unless containerd already has that
# image name at that manifest digest.
node_import() { # archive
  local archive="$1" index name digest have
  index="$(tar -xOf "$archive" index.json)"
  name="$(sed -n 's/.*"io.containerd.image.name":"\([^"]*\)".*/\1/p' <<< "$index")"
  digest="$(sed -n 's/.*"digest":"\(sha256:[0-9a-f]*\)".*/\1/p' <<< "$index" | head -n1)"
  [[ -n "$name" && -n "$digest" ]] || die "$archive: no image name or digest in its index.json"
  have="$(ctr_ images ls "name==$name" 2> /dev/null | awk 'NR > 1 { print $3 }')"
  if [[ "$have" == "$digest" ]]; then
    log "image $name already present ($digest)"
    return 0
  fi
  ctr_ images import "$archive" > /dev/null || die "could not import $archive"
  log "imported $name ($digest)"
}

# The pause image is needed at once (every sandbox, the provisioner's helper pods). The
# worker image unpacks about 800 MB (25 to 50 s), so it is built and imported in the
# background while the components start, and node_images_wait waits for it at the end.
WORKER_JOB=""
node_images_start() {
  node_import "$PAUSE_ARCHIVE"
  mark "pause image imported"
  [[ "$WORKER_IMAGE" == false ]] && return 0
  (
    worker="$("$HACK_DIR/build-images.sh" worker | tail -n1)" && [[ -f "$worker" ]] || exit 3
    node_import "$worker"
  ) > "$NODE_STATE/worker-image.log" 2>&1 &
  WORKER_JOB=$!
}

node_images_wait() {
  [[ -n "$WORKER_JOB" ]] || return 0
  local rc=0
  wait "$WORKER_JOB" || rc=$?
  WORKER_JOB=""
  case "$rc" in
    0) mark "worker image: $(tail -n1 "$NODE_STATE/worker-image.log" | sed 's/^control-plane: //')" ;;
    3) log "warning: no worker image (hack/build-images.sh worker failed; see $NODE_STATE/worker-image.log); pods of the worker image will not start" ;;
    *) die "importing the worker image failed; see $NODE_STATE/worker-image.log" ;;
  esac
}

# ---------------------------------------------------------------------------------------
# cluster components

node_manifests() {
  # Upstream's deploy/local-path-storage.yaml (v0.0.30) minus the Deployment and the
  # ConfigMap: the provisioner runs on the host with a client cert for the user below.
  "$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH" apply -f - > /dev/null << EOF
apiVersion: v1
kind: Namespace
metadata: {name: local-path-storage}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: local-path-provisioner-service-account, namespace: local-path-storage}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: local-path-provisioner-role, namespace: local-path-storage}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, patch, update, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: local-path-provisioner-role}
rules:
- apiGroups: [""]
  resources: [nodes, persistentvolumeclaims, configmaps, pods, pods/log]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [persistentvolumes]
  verbs: [get, list, watch, create, patch, update, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [storage.k8s.io]
  resources: [storageclasses]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: local-path-provisioner-bind, namespace: local-path-storage}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: local-path-provisioner-role}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "agentplane:local-path-provisioner"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: local-path-provisioner-bind}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: local-path-provisioner-role}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "agentplane:local-path-provisioner"}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
EOF
}

node_start_components() {
  local server="$1" ip="$2" kport hport
  local kc="$NODE_STATE/kubeconfigs"
  mkdir -p "$kc"
  write_kubeconfig "$kc/kube-controller-manager" "$server" kube-controller-manager
  write_kubeconfig "$kc/kube-scheduler" "$server" kube-scheduler
  write_kubeconfig "$kc/kubelet" "$server" kubelet
  write_kubeconfig "$kc/local-path-provisioner" "$server" local-path-provisioner

  # --secure-port=0: no health/metrics listener, so no port to pick or to clash.
  # --use-service-account-credentials: each controller acts as its own ServiceAccount,
  # as in a kubeadm cluster, so RBAC is exercised as it would be for real.
  # --flex-volume-plugin-dir: the default, /usr/libexec/kubernetes/..., would be created.
  start_proc kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$kc/kube-controller-manager" \
    --secure-port=0 \
    --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$PKI/sa.key" \
    --root-ca-file="$PKI/serving-ca.crt" \
    --cluster-signing-cert-file="$PKI/client-ca.crt" \
    --cluster-signing-key-file="$PKI/client-ca.key" \
    --service-cluster-ip-range=10.0.0.0/24 \
    --flex-volume-plugin-dir="$NODE_STATE/kcm-volume-plugins"
  start_proc kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig="$kc/kube-scheduler" \
    --secure-port=0 \
    --leader-elect=false

  read -r kport hport _ < <(free_ports)
  echo "KUBELET_PORT=$kport" >> "$STATE_DIR/ports.env"
  mkdir -p "$NODE_STATE/pod-logs" "$NODE_STATE/kubelet-volume-plugins"
  # failCgroupV1: this machine has cgroup v1, which kubelet 1.34 refuses by default.
  # cgroupfs: no systemd here. imageGCHighThresholdPercent 100: images come from local
  # archives and cannot be pulled again, so they are never garbage-collected. The low
  # eviction thresholds keep a busy disk from evicting test pods.
  # makeIPTablesUtilChains false: no KUBE-* chains (nothing here uses them).
  cat > "$NODE_STATE/kubelet.yaml" << EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $ip
port: $kport
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $hport
tlsCertFile: $PKI/kubelet-serving.crt
tlsPrivateKeyFile: $PKI/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/client-ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CTRD_SOCK
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
podLogsDir: $NODE_STATE/pod-logs
volumePluginDir: $NODE_STATE/kubelet-volume-plugins
makeIPTablesUtilChains: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
EOF
  start_proc kubelet "$BIN/kubelet" \
    --config="$NODE_STATE/kubelet.yaml" \
    --kubeconfig="$kc/kubelet" \
    --root-dir="$NODE_STATE/kubelet" \
    --cert-dir="$NODE_STATE/kubelet/pki" \
    --hostname-override="$NODE_NAME" \
    --node-ip="$ip"

  node_start_provisioner "$kc/local-path-provisioner"
}

# local-path-provisioner v0.0.30 creates and deletes each volume's directory in a "helper
# pod" running `sh /script/setup` in busybox. There is no registry here, so the config sets
# setupCommand/teardownCommand to local-path-helper (hack/tools/local-path-provisioner), a
# static binary that the helper pod template bind-mounts from the host into the pause
# image. The provisioner passes -p <dir> -a create|delete and mounts the parent directory.
node_start_provisioner() { # kubeconfig
  local d="$NODE_STATE/local-path"
  mkdir -p "$d" "$STATE_DIR/volumes"
  cat > "$d/config.json" << EOF
{
  "nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["$STATE_DIR/volumes"]}],
  "setupCommand": "/local-path-helper",
  "teardownCommand": "/local-path-helper"
}
EOF
  # runAsUser 0: the pause image's user is 65535, and the volume directories are root's.
  cat > "$d/helperPod.yaml" << EOF
apiVersion: v1
kind: Pod
metadata: {name: helper-pod}
spec:
  priorityClassName: system-node-critical
  automountServiceAccountToken: false
  tolerations: [{key: node.kubernetes.io/disk-pressure, operator: Exists, effect: NoSchedule}]
  containers:
  - name: helper-pod
    image: $PAUSE_IMAGE
    imagePullPolicy: Never
    securityContext: {runAsUser: 0, runAsGroup: 0}
    volumeMounts: [{name: local-path-helper, mountPath: /local-path-helper, readOnly: true}]
  volumes:
  - name: local-path-helper
    hostPath: {path: $BIN/local-path-helper, type: File}
EOF
  start_proc local-path-provisioner "$BIN/local-path-provisioner" --debug start \
    --kubeconfig "$1" \
    --config "$d/config.json" \
    --helper-pod-file "$d/helperPod.yaml" \
    --helper-image "$PAUSE_IMAGE" \
    --namespace local-path-storage \
    --service-account-name local-path-provisioner-service-account \
    --provisioner-name rancher.io/local-path
}

node_check_procs() {
  local name
  for name in etcd kube-apiserver "${NODE_PROCS[@]}"; do
    if ! live_pid "$name" > /dev/null; then
      tail -n 20 "$STATE_DIR/$name.log" >&2 || true
      die "$name exited; full log: $STATE_DIR/$name.log (run '$0 down' to clean up)"
    fi
  done
}

# Ready node, and what a first pod needs: the default ServiceAccount (the ServiceAccount
# admission plugin rejects pods without it), the kube-root-ca.crt ConfigMap (the token
# volume waits for it) and the default StorageClass.
node_wait_ready() {
  local k=("$BIN/kubectl" --kubeconfig "$KUBECONFIG_PATH" --request-timeout=5s)
  local deadline=$((SECONDS + START_TIMEOUT))
  local -a waits=(
    "node Ready|get node $NODE_NAME -o jsonpath={.status.conditions[?(@.type==\"Ready\")].status}|True"
    "ServiceAccount default/default|get serviceaccount default -n default -o name|serviceaccount/default"
    "ConfigMap default/kube-root-ca.crt|get configmap kube-root-ca.crt -n default -o name|configmap/kube-root-ca.crt"
    "default StorageClass local-path|get storageclass local-path -o jsonpath={.metadata.annotations.storageclass\.kubernetes\.io/is-default-class}|true"
  )
  local w label args want
  local -a argv
  for w in "${waits[@]}"; do
    IFS='|' read -r label args want <<< "$w"
    read -r -a argv <<< "$args"
    until [[ "$("${k[@]}" "${argv[@]}" 2> /dev/null)" == "$want" ]]; do
      node_check_procs
      if ((SECONDS >= deadline)); then
        tail -n 20 "$STATE_DIR/kubelet.log" >&2 || true
        die "no $label after ${START_TIMEOUT}s; logs in $STATE_DIR (run '$0 down' to clean up)"
      fi
      sleep 0.3
    done
    mark "$label"
  done
}

node_up() { # server url
  local server="$1" gw
  gw="$(node_gateway)"
  mkdir -p "$NODE_STATE"
  echo "$STATE_DIR" > "$NODE_CLAIM"
  node_baseline
  echo "NODE_IP=$gw" >> "$STATE_DIR/ports.env"
  node_start_containerd "$gw"
}

node_up_after_apiserver() { # server url
  local server="$1" gw
  gw="$(node_gateway)"
  node_wait_containerd
  mark "containerd ready"
  node_images_start
  node_manifests
  node_start_components "$server" "$gw"
  node_route_kubernetes_service "$server"
  mark "controller-manager, scheduler, kubelet, provisioner started"
  node_wait_ready
  node_images_wait
}

# In-cluster API access: a pod's client dials the "kubernetes" Service (the kubelet gives every
# container KUBERNETES_SERVICE_HOST=10.0.0.1, port 443), but kube-apiserver listens on loopback
# only and no kube-proxy runs. A DNAT from the pods' bridge to 127.0.0.1:<its port> stands in
# for kube-proxy's rule (route_localnet lets the kernel route to loopback from the bridge; the
# bridge goes at `down`, and so does the setting). Its serving cert names 10.0.0.1. The chain is
# KUBE- prefixed so that the sweep at `down` removes it with the kubelet's.
node_route_kubernetes_service() { # server url
  local port="${1##*:}"
  echo 1 > "/proc/sys/net/ipv4/conf/$BRIDGE/route_localnet"
  iptables -t nat -N KUBE-AGENTPLANE-SERVICES
  iptables -t nat -A KUBE-AGENTPLANE-SERVICES -p tcp -d 10.0.0.1 --dport 443 -j DNAT --to-destination "127.0.0.1:$port"
  iptables -t nat -A PREROUTING -i "$BRIDGE" -j KUBE-AGENTPLANE-SERVICES
}

# ---------------------------------------------------------------------------------------
# down

# Order matters: the kubelet first, so it does not restart what is being removed; then every
# pod sandbox through CRI while containerd still runs, which is what makes containerd run
# the CNI DEL (veth, IPAM lease) and unmount and delete each netns and the sandbox's /dev/shm;
# then containerd, whose shims exit with their containers. Then what is left is swept.
node_down_runtime() {
  stop_proc kubelet
  if ! live_pid containerd > /dev/null && [[ -f "$CTRD_DIR/config.toml" ]]; then
    # A crashed containerd still knows its sandboxes (the metadata is on disk): start it
    # again so the sandboxes get a proper teardown instead of a sweep.
    log "containerd is not running; starting it again to remove the pods"
    TMPDIR="$NODE_STATE/tmp" start_proc containerd containerd --config "$CTRD_DIR/config.toml"
    local _
    for _ in $(seq 100); do ctr_ version > /dev/null 2>&1 && break; sleep 0.1; done
  fi
  if ctr_ version > /dev/null 2>&1; then
    local pods
    pods="$(crictl_ pods -q 2> /dev/null || true)"
    echo "$pods" > "$NODE_STATE/sandboxes"
    if [[ -n "$pods" ]]; then
      log "removing $(wc -w <<< "$pods") pod sandbox(es)"
      # shellcheck disable=SC2086
      crictl_ stopp $pods > /dev/null 2>&1 || true
      # shellcheck disable=SC2086
      crictl_ rmp -f $pods > /dev/null 2>&1 || log "warning: crictl rmp failed"
    fi
  fi
  stop_proc containerd
  # Shims of anything that survived carry our socket in their command line.
  local pid
  for pid in $(pgrep -f -- "-address $CTRD_SOCK" || true); do
    log "killing leftover shim $pid"
    kill -KILL "$pid" 2> /dev/null || true
  done
}

node_sweep_cgroups() {
  local d pid
  for d in $(cgroup_kubepods); do
    grep -qxF "$d" "$BASELINE/cgroups" 2> /dev/null && continue
    # Nothing should be left in them after the CRI teardown; if something is, it is ours.
    find "$d" -name cgroup.procs -exec cat {} + 2> /dev/null | while read -r pid; do
      kill -KILL "$pid" 2> /dev/null || true
    done
    find "$d" -depth -type d -exec rmdir {} + 2> /dev/null || true
    # A killed process can take a moment to leave its cgroup.
    [[ -d "$d" ]] && { sleep 0.5; find "$d" -depth -type d -exec rmdir {} + 2> /dev/null || true; }
    [[ -d "$d" ]] && log "warning: could not remove cgroup $d"
  done
  return 0
}

# Mount points under a directory, deepest first (mountinfo field 5; octal escapes kept).
mounts_under() {
  awk -v p="$1/" 'index($5, p) == 1 || $5 == substr(p, 1, length(p) - 1) { print $5 }' /proc/self/mountinfo |
    awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-
}

sweep_mounts() { # dir
  local m _
  for _ in 1 2 3; do
    for m in $(mounts_under "$1"); do
      m="$(printf '%b' "$m")"
      umount "$m" 2> /dev/null || umount -l "$m" 2> /dev/null || true
    done
    [[ -z "$(mounts_under "$1")" ]] && return 0
  done
  log "warning: still mounted under $1:"
  mounts_under "$1" >&2
  return 1
}

node_sweep_network() {
  # Pod netns are mounted under the state dir (netns_mounts_under_state_dir), so the mount
  # sweep has removed any CRI left. One in /run/netns is not ours, but worth a word.
  local ns
  for ns in /run/netns/cni-*; do
    [[ -e "$ns" ]] || continue
    grep -qxF "${ns##*/}" "$BASELINE/netns" 2> /dev/null && continue
    log "warning: netns $ns appeared while the node was up (not removed: it is not ours)"
  done
  # Deleting the bridge also deletes any veth still attached to it.
  local veth
  for veth in $(ip -o link show master "$BRIDGE" 2> /dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
    ip link del "$veth" 2> /dev/null || true
  done
  ip link del "$BRIDGE" 2> /dev/null || true
  node_sweep_iptables iptables
  node_sweep_iptables ip6tables
  node_sweep_nft_tables
  return 0
}

# KUBE-* and CNI-* chains that were not there at `up`: every rule that jumps to them is
# deleted, then they are flushed and deleted, in one iptables-restore per table.
node_sweep_iptables() { # iptables | ip6tables
  local ipt="$1" t chains rules c
  command -v "$ipt-save" > /dev/null || return 0
  for t in filter nat mangle raw; do
    chains="$("$ipt-save" -t "$t" 2> /dev/null | sed -n 's/^:\(\(KUBE\|CNI\)-[^ ]*\) .*/\1/p' |
      grep -vxF -f "$BASELINE/$ipt-$t" 2> /dev/null || true)"
    [[ -n "$chains" ]] || continue
    rules="$("$ipt-save" -t "$t" | { grep '^-A ' || true; } | while IFS= read -r r; do
      for c in $chains; do
        if [[ "$r" =~ \ -[jg]\ $c(\ |$) ]]; then echo "-D ${r#-A }"; break; fi
      done
    done)"
    {
      echo "*$t"
      [[ -n "$rules" ]] && echo "$rules"
      for c in $chains; do echo "-F $c"; done
      for c in $chains; do echo "-X $c"; done
      echo COMMIT
    } | "$ipt-restore" --noflush || log "warning: could not remove $ipt $t chains: ${chains//$'\n'/ }"
    log "removed $ipt $t chains: ${chains//$'\n'/ }"
  done
  return 0
}

node_sweep_nft_tables() {
  [[ -f "$BASELINE/nft-tables" ]] || return 0
  local fam name
  # "table ip nat": only base chains and no rules means empty.
  nft_tables | { grep -vxF -f "$BASELINE/nft-tables" || true; } | while read -r _ fam name; do
    # (No grep -q: with pipefail, nft dying of SIGPIPE would read as "empty".)
    if ! nft list table "$fam" "$name" 2> /dev/null | grep -vE '^[[:space:]]*(table |chain |type |}|$)' > /dev/null; then
      nft delete table "$fam" "$name" && log "removed empty nftables table $fam $name (left by the iptables sweep)"
    fi
  done
  return 0
}

node_restore_sysctls() {
  local line k v cur
  while IFS= read -r line; do
    k="${line%%=*}" v="${line#*=}"
    cur="$(cat "/proc/sys/${k//.//}" 2> /dev/null)" || continue
    if [[ "$cur" != "$v" ]]; then
      echo "$v" > "/proc/sys/${k//.//}" && log "restored $k = $v (was $cur)"
    fi
  done < "$BASELINE/sysctl"
  return 0
}

node_sweep_paths() {
  # kubelet links each container log into /var/log/containers (a fixed path).
  local l
  for l in /var/log/containers/*; do
    [[ -L "$l" && "$(readlink "$l")" == "$STATE_DIR/"* ]] && rm -f "$l"
  done
  # libcni's result cache, /var/lib/cni/results/<network>-<sandbox>-<if>; CNI DEL removes
  # them, these are what a failed teardown left. "cni-loopback" is CRI's lo network.
  local id
  rm -f /var/lib/cni/results/"$CNI_NETWORK"-* 2> /dev/null || true
  for id in $(cat "$NODE_STATE/sandboxes" 2> /dev/null); do
    rm -f "/var/lib/cni/results/cni-loopback-$id-lo"
  done
  # The device manager's socket is at a fixed path (v1beta1.KubeletSocket), whatever the
  # root dir. Only when /var/lib/kubelet is ours: otherwise a real kubelet owns it.
  if ! grep -qxF /var/lib/kubelet "$BASELINE/paths" 2> /dev/null; then
    rm -f /var/lib/kubelet/device-plugins/kubelet.sock
    rmdir /var/lib/kubelet/device-plugins 2> /dev/null || true
  fi
  local d
  # Deepest first, and only empty directories that were not there at `up`.
  for d in $(printf '%s\n' "${NODE_PATHS[@]}" | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-); do
    [[ -d "$d" ]] || continue
    grep -qxF "$d" "$BASELINE/paths" 2> /dev/null && continue
    rmdir "$d" 2> /dev/null || log "warning: $d was created while the node was up and is not empty; left in place"
  done
  # /usr/libexec/kubernetes is a tree (kubelet-plugins/volume/exec) when created.
  if [[ -d /usr/libexec/kubernetes ]] && ! grep -qxF /usr/libexec/kubernetes "$BASELINE/paths" 2> /dev/null; then
    find /usr/libexec/kubernetes -depth -type d -empty -delete 2> /dev/null || true
  fi
  return 0
}

node_down() {
  [[ -d "$NODE_STATE" ]] || return 0
  BIN="$(cat "$STATE_DIR/bin-dir" 2> /dev/null || echo /nonexistent)"
  node_down_runtime
  stop_procs local-path-provisioner kube-scheduler kube-controller-manager
}

# After the control plane is stopped: everything outside processes.
node_down_sweep() {
  [[ -d "$NODE_STATE" ]] || return 0
  # Best effort, step by step: one step failing must not keep the others from running
  # (called with ||, a function runs without errexit). Mounts left behind keep cmd_down
  # from deleting the state dir, and keep the claim, so the next `up` says so.
  node_sweep_cgroups || log "warning: the cgroup sweep failed"
  mark "cgroups removed"
  local mounts_ok=true
  sweep_mounts "$STATE_DIR" || mounts_ok=false
  mark "mounts removed"
  node_sweep_network || log "warning: the network sweep failed"
  node_restore_sysctls || log "warning: restoring the sysctls failed"
  node_sweep_paths || log "warning: the path sweep failed"
  mark "network, sysctls and paths restored"
  $mounts_ok || die "mounts remain under $STATE_DIR; not deleting it"
  if [[ "$(cat "$NODE_CLAIM" 2> /dev/null)" == "$STATE_DIR" ]]; then rm -f "$NODE_CLAIM"; fi
  return 0
}

# ---------------------------------------------------------------------------------------
# check-clean

# Lists what a node-mode plane leaves on the machine: only things that can be nothing but
# ours (our names, our state dirs, kubelet's kubepods cgroups and KUBE-/CNI- chains, the
# claim file), one per line. With a file argument it also writes a report of all the
# machine-wide state a node touches (sysctls, every iptables chain and rule, links, netns,
# cgroups, paths, mounts); diff the reports from before `up` and after `down` to see every
# change, including the ones that cannot be attributed by name.
node_check_clean() { # [report file]
  local report="${1:-}" tmp t ipt k p
  tmp="$(mktemp)"
  local ours="$STATE_DIR|agentplane-cp|$CTRD_SOCK"
  {
    echo "sysctl: $(for k in "${NODE_SYSCTLS[@]}"; do printf '%s=%s ' "$k" "$(cat "/proc/sys/${k//.//}" 2> /dev/null)"; done)"
    for ipt in iptables ip6tables; do
      for t in filter nat mangle raw; do
        "$ipt-save" -t "$t" 2> /dev/null | grep -E '^(:|-A)' | sed "s/^/$ipt $t: /; s/ \[[0-9:]*\]\$//"
      done
    done
    nft_tables | sed 's/^/nft: /'
    ip -o link show | awk -F': ' '{ print "link: " $2 }' | cut -d@ -f1
    find /run/netns -mindepth 1 -maxdepth 1 -printf 'netns: %f\n' 2> /dev/null || true
    find /sys/fs/cgroup -maxdepth 2 -mindepth 1 -type d | sed 's/^/cgroup: /'
    for p in "${NODE_PATHS[@]}" "$NODE_CLAIM"; do [[ -e "$p" ]] && echo "path: $p"; done
    find /var/log/containers /var/log/pods /var/lib/cni /run/containerd -mindepth 1 2> /dev/null | sed 's/^/file: /'
    awk '{ print "mount: " $5 }' /proc/self/mountinfo
    ps -eo args= | grep -E "$ours" | grep -vE 'grep|check-clean' | sed 's/^/process: /' || true
  } > "$tmp" 2>&1
  local leftovers
  leftovers="$(grep -E "^(link: ($BRIDGE|veth)|netns: cni-|cgroup: .*/kubepods$|path: $NODE_CLAIM|path: /var/lib/kubelet|path: /usr/libexec/kubernetes|file: /var/log/containers/|file: /var/lib/cni/results/$CNI_NETWORK-|process: |(ip6?tables) [a-z]+: :(KUBE|CNI)-)" "$tmp" || true)"
  leftovers+="$(grep -E "^mount: " "$tmp" | grep -E "$ours" || true)"
  if [[ -n "$report" ]]; then mv "$tmp" "$report"; else rm -f "$tmp"; fi
  [[ -z "$leftovers" ]] && return 0
  echo "$leftovers"
  return 1
}
