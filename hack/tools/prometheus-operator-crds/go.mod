// Not built: pins the Prometheus Operator release whose CRDs (ServiceMonitor, PrometheusRule, in
// example/prometheus-operator-crd/ of the module) the chart's tests load into the local control
// plane, so kubeconform's schemas for them come from the real CRDs (test/support/kube-schemas.ts
// reads the version here and the files from `go mod download`).
module agentplane.dev/hack/tools/prometheus-operator-crds

go 1.24.1

require github.com/prometheus-operator/prometheus-operator v0.85.0
