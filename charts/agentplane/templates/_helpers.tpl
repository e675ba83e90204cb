{{/* Labels on every object: the name manifests/ uses, plus Helm's own. */}}
{{- define "agentplane.labels" -}}
app.kubernetes.io/name: agentplane
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The server pods' selector (as manifests/: one install per cluster, the APIService is global). */}}
{{- define "agentplane.selector" -}}
app.kubernetes.io/name: agentplane
app.kubernetes.io/component: apiserver
{{- end }}

{{/* The server's ServiceAccount as an RBAC subject. */}}
{{- define "agentplane.subject" -}}
- kind: ServiceAccount
  name: agentplane
  namespace: {{ .Release.Namespace }}
{{- end }}

{{/* Whether a Prometheus Operator object is rendered: value true, or auto and the CRDs exist. */}}
{{- define "agentplane.monitoring" -}}
{{- $v := toString .value -}}
{{- if or (eq $v "true") (and (eq $v "auto") (.root.Capabilities.APIVersions.Has "monitoring.coreos.com/v1")) -}}
true
{{- end -}}
{{- end }}

{{- define "agentplane.redisUrl" -}}
{{- .Values.eventStore.redis.url | default (printf "redis://agentplane-redis.%s.svc:6379" .Release.Namespace) -}}
{{- end }}

{{/* The serving CA and certificate when the chart makes them: the Secret's, kept across upgrades. */}}
{{- define "agentplane.tls" -}}
{{- $secret := lookup "v1" "Secret" .Release.Namespace .Values.tls.secretName -}}
{{- if and $secret (index $secret.data "ca.crt") -}}
{{- dict "ca" (index $secret.data "ca.crt") "crt" (index $secret.data "tls.crt") "key" (index $secret.data "tls.key") | toJson -}}
{{- else -}}
{{- $svc := printf "agentplane.%s.svc" .Release.Namespace -}}
{{- $ca := genCA "agentplane-serving-ca" 3650 -}}
{{- $cert := genSignedCert $svc nil (list $svc (printf "%s.cluster.local" $svc)) 3650 $ca -}}
{{- dict "ca" ($ca.Cert | b64enc) "crt" ($cert.Cert | b64enc) "key" ($cert.Key | b64enc) | toJson -}}
{{- end -}}
{{- end }}

{{/* The standard OpenTelemetry variables of the server; none while otel.endpoint is empty. */}}
{{- define "agentplane.otelEnv" -}}
{{- with .Values.otel -}}
{{- if .endpoint -}}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .endpoint | quote }}
{{- with .protocol }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ . | quote }}
{{- end }}
{{- if or .headers .headersSecret }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ .headersSecret | default "agentplane-otel" }}
      key: headers
{{- end }}
{{- with .sampler }}
- name: OTEL_TRACES_SAMPLER
  value: {{ . | quote }}
{{- end }}
{{- with .samplerArg }}
- name: OTEL_TRACES_SAMPLER_ARG
  value: {{ . | quote }}
{{- end }}
{{- end -}}
{{- end -}}
{{- end }}
