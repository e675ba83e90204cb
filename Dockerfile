# syntax=docker/dockerfile:1
# agentplane's images for users with Docker (or any BuildKit builder). Two targets:
#
#   docker build -t agentplane:dev .                                  # server (the default, last stage)
#   docker build --target worker -t agentplane.local/worker:dev .     # worker
#
# Without Docker, hack/build-images.sh builds the same worker image (and the pause image) as
# OCI archives; see hack/README.md, "Images". Keep NODE_VERSION and DEBIAN_SUITE in step with
# hack/images/worker/versions.env (hack/kind-e2e.sh passes them from there as --build-arg).
# The worker's Debian packages come from hack/images/worker/packages, shared with that build.

ARG NODE_VERSION=24.21.0
ARG DEBIAN_SUITE=bookworm

# ---- build: all dependencies, then dist/ --------------------------------------------------
FROM node:${NODE_VERSION}-${DEBIAN_SUITE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY cmd cmd
COPY pkg pkg
COPY plugins plugins
# The dashboard (/ui): bundled by esbuild from ui/ into dist/ui; the server image serves it.
COPY ui ui
COPY hack/build.mjs hack/build-ui.mjs hack/
# The one build, as `make build` runs it. tsconfig.json also includes test/ and bench/, which
# .dockerignore leaves out of the context.
RUN node hack/build.mjs

# ---- production dependencies ---------------------------------------------------------------
# The server opens SQLite (the default event store), so better-sqlite3's install script runs
# and builds or fetches its native binding; the full node image has python3, make and g++.
FROM node:${NODE_VERSION}-${DEBIAN_SUITE} AS server-deps
WORKDIR /opt/agentplane
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && rm -f node_modules/.package-lock.json

# The worker never opens SQLite: as in hack/build-images.sh, no install scripts run.
FROM node:${NODE_VERSION}-${DEBIAN_SUITE} AS worker-deps
WORKDIR /opt/agentplane
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && rm -f node_modules/.package-lock.json

FROM node:${NODE_VERSION}-${DEBIAN_SUITE}-slim AS node

# ---- worker: agentplane.local/worker -------------------------------------------------------
# Matches hack/images/worker/build.sh: Debian + the listed packages, node at
# /usr/local/bin/node, /opt/agentplane (package.json, production node_modules, dist), user
# agent 10001:10001 with home /workspace. Run it with a read-only root filesystem, /tmp an
# emptyDir and the workspace volume at /workspace (HOME).
FROM debian:${DEBIAN_SUITE}-slim AS worker
COPY hack/images/worker/packages /tmp/packages
RUN apt-get update \
 && sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' /tmp/packages \
    | xargs apt-get install -y --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /tmp/packages \
 && echo 'agent:x:10001:10001:agentplane agent:/workspace:/bin/bash' >> /etc/passwd \
 && echo 'agent:x:10001:' >> /etc/group \
 && echo 'agent:!:19000:0:99999:7:::' >> /etc/shadow \
 && echo 'agent:!::' >> /etc/gshadow \
 && install -d -m 0755 -o 10001 -g 10001 /workspace
COPY --from=node /usr/local/bin/node /usr/local/bin/node
COPY --from=worker-deps /opt/agentplane /opt/agentplane
COPY --from=build /src/dist/cmd /opt/agentplane/dist/cmd
COPY --from=build /src/dist/pkg /opt/agentplane/dist/pkg
COPY --from=build /src/dist/plugins /opt/agentplane/dist/plugins
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production \
    LANG=C.UTF-8
USER 10001:10001
WORKDIR /
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/opt/agentplane/dist/cmd/agentplane-worker/main.js"]

# ---- server: agentplane:dev (manifests/deployment.yaml) ------------------------------------
# Runs as 65532:65532 like the Deployment's securityContext, with a read-only root
# filesystem: HOME=/tmp (an emptyDir there) and the data dir a volume.
FROM node:${NODE_VERSION}-${DEBIAN_SUITE}-slim AS server
COPY --from=server-deps /opt/agentplane /opt/agentplane
COPY --from=build /src/dist/cmd /opt/agentplane/dist/cmd
COPY --from=build /src/dist/pkg /opt/agentplane/dist/pkg
COPY --from=build /src/dist/plugins /opt/agentplane/dist/plugins
COPY --from=build /src/dist/ui /opt/agentplane/dist/ui
ENV NODE_ENV=production \
    HOME=/tmp
USER 65532:65532
WORKDIR /
EXPOSE 8443
ENTRYPOINT ["node", "/opt/agentplane/dist/cmd/agentplane/main.js"]
CMD ["serve", "--mode=kubernetes"]
