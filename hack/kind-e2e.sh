#!/usr/bin/env bash
# End-to-end run on a kind cluster, for machines with Docker and kind.
#
# UNTESTED where it was written: the dev VM has no Docker engine (images there are built with
# hack/build-images.sh and run on a private containerd instead). Treat it as a sensible
# starting point; hack/README.md ("Images") lists its assumptions.
#
#   hack/kind-e2e.sh            # create cluster, build + load images, install, run e2e, delete
#   KIND_E2E_KEEP=true hack/kind-e2e.sh   # keep the cluster (and reuse it on the next run)
#
# Steps:
#   1. docker build the server (agentplane:dev, what manifests/deployment.yaml runs) and the
#      worker (agentplane.local/worker:dev) from the Dockerfile, with NODE_VERSION and
#      DEBIAN_SUITE from hack/images/worker/versions.env. KIND_E2E_WORKER=oci builds the
#      worker with hack/build-images.sh instead (root and debootstrap needed) and loads the
#      OCI archive with `kind load image-archive`.
#   2. kind create cluster (unless it exists), kind load both images.
#   3. A CA and a serving certificate for agentplane.agentplane-system.svc (openssl), the
#      Secrets agentplane-serving-cert and agentplane-model, kubectl apply -k manifests/, the
#      CA into the APIService caBundle, the worker image name into the Deployment's env.
#   4. Wait for the rollout and for the APIService to be Available.
#   5. Run the e2e suite (mocha over $KIND_E2E_SUITE) with AGENTPLANE_E2E_KUBECONFIG and
#      AGENTPLANE_E2E_WORKER_IMAGE set, then delete the cluster unless KIND_E2E_KEEP=true.
#
# Environment:
#   KIND_CLUSTER         cluster name (agentplane-e2e)
#   KIND_NODE_IMAGE      kind node image (kind's default)
#   KIND_E2E_KEEP        true: keep the cluster afterwards (false)
#   KIND_E2E_WORKER      docker | oci: how the worker image is built (docker)
#   KIND_E2E_SUITE       mocha spec glob ('dist/test/e2e/**/*.test.js')
#   KIND_E2E_STATE       kubeconfig and certificates (${TMPDIR:-/tmp}/agentplane-kind-<cluster>)
#   ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL   go into the agentplane-model Secret; without a key
#                        the Secret holds a placeholder (enough for suites using a scripted model)
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$HACK_DIR/.." && pwd)"
# shellcheck source=images/worker/versions.env
source "$HACK_DIR/images/worker/versions.env"

CLUSTER="${KIND_CLUSTER:-agentplane-e2e}"
KEEP="${KIND_E2E_KEEP:-false}"
WORKER_FROM="${KIND_E2E_WORKER:-docker}"
SUITE="${KIND_E2E_SUITE:-dist/test/e2e/**/*.test.js}"
STATE="${KIND_E2E_STATE:-${TMPDIR:-/tmp}/agentplane-kind-$CLUSTER}"
NS=agentplane-system
SERVER_IMAGE=agentplane:dev
KUBECONFIG_FILE="$STATE/kubeconfig"

log() { echo "kind-e2e: $*" >&2; }
die() { log "error: $*"; exit 1; }
for t in docker kind kubectl openssl node; do command -v "$t" >/dev/null || die "$t is required"; done
mkdir -p "$STATE"
k() { kubectl --kubeconfig "$KUBECONFIG_FILE" "$@"; }

cleanup() {
  local rc=$?
  if [[ "$KEEP" != true ]]; then
    log "deleting cluster $CLUSTER (KIND_E2E_KEEP=true keeps it)"
    kind delete cluster --name "$CLUSTER" >&2 || true
    rm -rf "$STATE"
  else
    log "cluster kept: KUBECONFIG=$KUBECONFIG_FILE"
  fi
  exit "$rc"
}
trap cleanup EXIT

# 1. Images.
build_args=(--build-arg "NODE_VERSION=$NODE_VERSION" --build-arg "DEBIAN_SUITE=$DEBIAN_SUITE")
log "docker build --target server -> $SERVER_IMAGE"
docker build "${build_args[@]}" --target server -t "$SERVER_IMAGE" "$REPO_DIR" >&2
if [[ "$WORKER_FROM" == oci ]]; then
  WORKER_ARCHIVE="$("$HACK_DIR/build-images.sh" worker)"
  WORKER_IMAGE="$("$HACK_DIR/build-images.sh" worker-ref)"
else
  WORKER_IMAGE=agentplane.local/worker:dev
  log "docker build --target worker -> $WORKER_IMAGE"
  docker build "${build_args[@]}" --target worker -t "$WORKER_IMAGE" "$REPO_DIR" >&2
fi

# The test runner itself runs on this machine, from dist/.
if [[ ! -f "$REPO_DIR/dist/cmd/agentplane/main.js" ]]; then
  log "make build (the e2e suite runs from dist/)"
  make -C "$REPO_DIR" build >&2
fi

# 2. Cluster.
if ! kind get clusters 2>/dev/null | grep -qxF "$CLUSTER"; then
  log "kind create cluster --name $CLUSTER"
  kind create cluster --name "$CLUSTER" ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"} --wait 180s >&2
fi
kind get kubeconfig --name "$CLUSTER" >"$KUBECONFIG_FILE"
log "kind load $SERVER_IMAGE $WORKER_IMAGE"
kind load docker-image --name "$CLUSTER" "$SERVER_IMAGE" >&2
if [[ "$WORKER_FROM" == oci ]]; then
  kind load image-archive --name "$CLUSTER" "$WORKER_ARCHIVE" >&2
else
  kind load docker-image --name "$CLUSTER" "$WORKER_IMAGE" >&2
fi

# 3. Certificates, Secrets, manifests.
pki="$STATE/pki"
if [[ ! -f "$pki/serving.crt" ]]; then
  mkdir -p "$pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 \
    -subj "/CN=agentplane-e2e-ca" -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -subj "/CN=agentplane.$NS.svc" -keyout "$pki/serving.key" -out "$pki/serving.csr" 2>/dev/null
  printf 'subjectAltName=DNS:agentplane.%s.svc,DNS:agentplane.%s.svc.cluster.local,DNS:agentplane.%s,DNS:localhost\nextendedKeyUsage=serverAuth\n' \
    "$NS" "$NS" "$NS" >"$pki/ext.cnf"
  openssl x509 -req -in "$pki/serving.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 7 -extfile "$pki/ext.cnf" -out "$pki/serving.crt" 2>/dev/null
fi

log "kubectl apply -k manifests/"
k apply -f "$REPO_DIR/manifests/namespace.yaml" >&2
k -n "$NS" create secret tls agentplane-serving-cert --cert "$pki/serving.crt" --key "$pki/serving.key" \
  --dry-run=client -o yaml | k apply -f - >&2
model_args=(--from-literal "ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY:-kind-e2e-placeholder}")
[[ -n "${ANTHROPIC_BASE_URL:-}" ]] && model_args+=(--from-literal "ANTHROPIC_BASE_URL=$ANTHROPIC_BASE_URL")
k -n "$NS" create secret generic agentplane-model "${model_args[@]}" --dry-run=client -o yaml | k apply -f - >&2
k apply -k "$REPO_DIR/manifests" >&2
k patch apiservice v1alpha1.agentplane.io --type merge \
  -p "{\"spec\":{\"caBundle\":\"$(base64 -w0 <"$pki/ca.crt")\"}}" >&2
# The name of the worker image for agent pods. AGENTPLANE_WORKER_IMAGE is this script's
# assumption about the pods runtime's setting; adjust here if it reads another.
k -n "$NS" set env deployment/agentplane "AGENTPLANE_WORKER_IMAGE=$WORKER_IMAGE" >&2

# 4. Ready.
log "waiting for the rollout and the APIService"
k -n "$NS" rollout status deployment/agentplane --timeout=300s >&2
k wait --for=condition=Available apiservice/v1alpha1.agentplane.io --timeout=180s >&2

# 5. The suite.
log "mocha $SUITE"
cd "$REPO_DIR"
AGENTPLANE_E2E_KUBECONFIG="$KUBECONFIG_FILE" \
  AGENTPLANE_E2E_WORKER_IMAGE="$WORKER_IMAGE" \
  AGENTPLANE_E2E_SERVER_IMAGE="$SERVER_IMAGE" \
  AGENTPLANE_E2E_NAMESPACE="$NS" \
  node node_modules/mocha/bin/mocha.js --timeout 600000 "$SUITE"
log "e2e passed"
