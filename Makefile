# agentplane: developer entry points. `make run` and `make test` are the two a new user needs.

# The Node everything runs on: the machine's when it is new enough, else the project's pinned
# Node, fetched once and cached (hack/nodejs.sh). Put first on PATH, so npm, its install scripts
# (better-sqlite3 compiles against that Node's headers, offline) and spawned workers all use it.
NODE_BIN := $(shell bash hack/nodejs.sh)
ifeq ($(NODE_BIN),)
$(error hack/nodejs.sh found no usable Node (see its messages above))
endif
# The pinned Node (under the cache, with its headers) is its own nodedir; the machine's needs none.
NODEDIR := $(if $(findstring /agentplane/node/,$(NODE_BIN)),$(abspath $(NODE_BIN)/..))
export PATH := $(NODE_BIN):$(PATH)
ifneq ($(NODEDIR),)
# node-gyp builds against the pinned Node's headers; prebuilt binaries would come from GitHub,
# so skip that attempt (npm warns that it does not know these two settings; node-gyp does).
export npm_config_nodedir := $(NODEDIR)
export npm_config_build_from_source := true
endif
# Native addons are built for one Node ABI: a different Node means a fresh install.
NODE_ABI := $(shell $(NODE_BIN)/node -p process.versions.modules)
INSTALLED := node_modules/.installed-abi$(NODE_ABI)

NODE ?= node
NPM ?= npm
MOCHA = $(NODE) node_modules/mocha/bin/mocha.js

.PHONY: all deps build lint control-plane chart-tools prometheus run test test-unit test-integration test-e2e test-clients test-newcomer test-security test-pods fuzz bench bench-pods load clean

all: build

# Installs dependencies when package.json, the lockfile or the Node ABI changed (better-sqlite3
# compiles once per ABI).
$(INSTALLED): package.json package-lock.json
	@echo "node $$($(NODE) --version) from $(NODE_BIN)"
	$(NPM) ci --no-audit --no-fund
	@touch $@

deps: $(INSTALLED)

# The one build (`npm run build` runs the same): only what changed since the last one.
build: deps
	$(NODE) hack/build.mjs

# Import rules (.dependency-cruiser.cjs, docs/architecture.md#import-rules): fails naming the rule
# and each offending import. Then ESLint, type-aware (eslint.config.js; sizes: no file over 450
# lines, no function over 100), and Prettier's check (docs/architecture.md "Lint, format and
# sizes"). All read the TypeScript sources, so none needs a build.
# The TypeScript client's hand-written files (its schema.ts is generated: clients/README.md).
CLIENT_TS := clients/typescript/src/index.ts clients/typescript/src/events.ts
lint: deps
	$(NODE) node_modules/dependency-cruiser/bin/dependency-cruise.mjs --config .dependency-cruiser.cjs --output-type err cmd pkg plugins test bench clients/typescript/src
	$(NODE) node_modules/eslint/bin/eslint.js --max-warnings 0 --cache --cache-location node_modules/.cache/eslint/ cmd pkg plugins test bench $(CLIENT_TS)
	$(NODE) node_modules/prettier/bin/prettier.cjs --check --log-level warn 'cmd/**/*.ts' 'pkg/**/*.ts' 'plugins/**/*.ts' 'test/**/*.ts' 'bench/**/*.ts' 'ui/src/**/*.{ts,tsx}' $(CLIENT_TS)

# Runs the service with embedded defaults. Without ANTHROPIC_API_KEY it starts in --demo mode,
# with the built-in scripted model, so agents still really run their tools.
run: build
	$(NODE) dist/cmd/agentplane/main.js serve $(if $(ANTHROPIC_API_KEY),,--demo) $(ARGS)

# The local cluster's binaries for the e2e suite (kube-apiserver, etcd, kubectl,
# kube-controller-manager, and the node's kubelet, scheduler, crictl, local-path-provisioner), built from Go modules
# once and cached under ~/.cache/agentplane (see hack/README.md for the times; then instant).
control-plane:
	bash hack/build-control-plane.sh > /dev/null

# helm and kubeconform for the Helm chart's tests (charts/agentplane, docs/helm.md), built from Go
# modules once and cached by version (hack/build-tools.sh; about 10 min cold, then instant).
chart-tools:
	bash hack/build-tools.sh > /dev/null

# Prometheus and promtool for the observability tests (the dashboard and alerts), built from their
# Go module once and cached under ~/.cache/agentplane (hack/README.md has the times).
prometheus:
	bash hack/build-prometheus.sh > /dev/null

# Everything: the import rules (lint), then unit, integration (real server, workers, engine),
# the typed clients (regenerated and compared, then each against a real server) and e2e (real
# kube-apiserver, kubectl, helm, kubeconform and Prometheus).
test: lint build control-plane chart-tools prometheus
	$(MOCHA) 'dist/test/unit/**/*.test.js' 'dist/test/integration/**/*.test.js' 'dist/test/clients/**/*.test.js' 'dist/test/e2e/**/*.test.js'

test-unit: build
	$(MOCHA) 'dist/test/unit/**/*.test.js'

test-integration: build
	$(MOCHA) 'dist/test/integration/**/*.test.js'

test-e2e: build control-plane chart-tools prometheus
	$(MOCHA) 'dist/test/e2e/**/*.test.js'

# The typed clients (clients/README.md): regenerated from the OpenAPI document into a scratch dir
# and compared with the committed ones, then the TypeScript client and the Python client (its
# pytest suite, in a cached virtualenv) each against a real `serve --demo` server.
test-clients: build
	$(MOCHA) 'dist/test/clients/**/*.test.js'

# Attacks on a real server by its own tools, by worker channels and by web pages (test/security,
# docs/security.md "Threat model"). As root it runs twice: as root, as CI and containers run the
# server, then as nobody (hack/as-unprivileged.sh), as on a laptop; every attack must fail both times.
# The README's quick start on a fresh clone of HEAD, with the machine's Node first on PATH
# (test/newcomer): a clean install and a full build, so a few minutes.
test-newcomer: build
	$(MOCHA) 'dist/test/newcomer/**/*.test.js'

test-security: build
	$(MOCHA) 'dist/test/security/**/*.test.js'
	@if [ "$$(id -u)" = 0 ]; then echo "test-security: again as an unprivileged user (nobody)"; \
	  bash hack/as-unprivileged.sh $(NODE_BIN)/node node_modules/mocha/bin/mocha.js 'dist/test/security/**/*.test.js'; fi

# Agents and squads as real pods on the local cluster's node (hack/control-plane.sh up; needs root
# and the node's Debian packages, which .ci/run installs). Slow: builds and imports the worker
# image, so it is its own target; CI runs it after make test.
test-pods: build control-plane chart-tools
	$(MOCHA) 'dist/test/pods/**/*.test.js'

# schemathesis (PyPI, cached virtualenv) against a real embedded server's OpenAPI document: every
# operation and phase with a bounded budget; no 5xx but the documented 502, no undocumented
# status, no response that breaks its schema (hack/fuzz.sh, docs/reliability.md).
fuzz: build
	bash hack/fuzz.sh

bench: build control-plane
	$(NODE) dist/bench/run.js

# Create -> pod Running -> task_started and wake -> task_started on the local cluster's node,
# beside a bare pod of the same image as the baseline.
bench-pods: build control-plane
	$(NODE) dist/bench/pods.js

# Many agents running tasks at once and many WebSocket subscribers on one embedded server
# (--demo, loopback): every event to every subscriber in order, no 5xx, memory back after idle;
# figures beside a one-agent baseline (bench/load.ts). Then the API while they ran beside a quiet
# window, and fairness: LOAD_FAIR_A tasks in one namespace, then one in another, timed to its
# start (issue 31). LOAD_AGENTS, LOAD_SUBSCRIBERS, LOAD_FAIR_A scale it; BENCH_ADMISSION_FLAGS
# sets the server's admission flags (bench/api-probe.ts).
load: build
	$(NODE) dist/bench/load.js

clean:
	rm -rf dist
