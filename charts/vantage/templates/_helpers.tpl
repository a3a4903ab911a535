{{- define "vantage.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vantage.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "vantage.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* Labels on every object. Never used as a selector: version and chart change on upgrade. */}}
{{- define "vantage.labels" -}}
app.kubernetes.io/name: {{ include "vantage.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- /* Selector labels: stable across upgrades (a Deployment's selector is immutable). */}}
{{- define "vantage.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vantage.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vantage.coordinatorSelector" -}}
{{ include "vantage.selectorLabels" . }}
app.kubernetes.io/component: coordinator
{{- end -}}

{{- define "vantage.agentsSelector" -}}
{{ include "vantage.selectorLabels" . }}
app.kubernetes.io/component: agent
{{- end -}}

{{- /* Pod labels: the user's podLabels, then the chart's labels (which win). */}}
{{- define "vantage.podLabels" -}}
{{- $own := merge (include "vantage.labels" .ctx | fromYaml) (.extra | default dict) -}}
{{- toYaml (merge (dict) .selector $own (.podLabels | default dict)) -}}
{{- end -}}

{{- define "vantage.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "vantage.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "vantage.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "vantage.apiSecret" -}}
{{- .Values.coordinator.apiTokens.existingSecret | default (printf "%s-api" (include "vantage.fullname" .)) -}}
{{- end -}}

{{- define "vantage.agentTokensSecret" -}}
{{- .Values.coordinator.agentTokensSecret | default (printf "%s-agent-tokens" (include "vantage.fullname" .)) -}}
{{- end -}}

{{- define "vantage.scrapeAnnotations" -}}
{{- if .ctx.Values.metrics.scrapeAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .port | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- end -}}

{{- /* NetworkPolicy peers: the listed namespaces, or this namespace's pods when the list is empty. */}}
{{- define "vantage.peers" -}}
{{- if . }}
{{- range . }}
- namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: {{ . | quote }}
{{- end }}
{{- else }}
- podSelector: {}
{{- end }}
{{- end -}}

{{/*
A duration of values.schema.json's form (digits and one unit: ms, s, m or h) in
milliseconds, to compare a check's deadline with its interval as the coordinator does.
*/}}
{{- define "vantage.durationMs" -}}
{{- $n := regexFind "^[0-9]+" . | int64 -}}
{{- $unit := trimPrefix (regexFind "^[0-9]+" .) . -}}
{{- if eq $unit "ms" }}{{ $n }}{{ else if eq $unit "s" }}{{ mul $n 1000 }}{{ else if eq $unit "m" }}{{ mul $n 60000 }}{{ else if eq $unit "h" }}{{ mul $n 3600000 }}{{ else }}{{ fail (printf "%q is not a duration of digits and a unit (ms, s, m, h), e.g. 30s" .) }}{{ end -}}
{{- end }}
