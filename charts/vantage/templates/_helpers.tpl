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

{{/*
A target as the coordinator compares [[checks]] targets (a name must be unique): the URL as
it shows it, i.e. as the `url` crate serialises it with credential values hidden. Scheme and
host in lower case, the default port (and a port's leading zeros) dropped, an empty path as
`/`, `\` as `/`, `.` and `..` path segments resolved, and the value of a query parameter
whose name looks like a credential (folded: letters and digits only, lower case, ending in
key, token, secret, ...) hidden. A trailing slash is kept: the coordinator schedules
`/mcp` and `/mcp/` as two targets. Not reproduced (rare in a target; the coordinator still
refuses them at start): IDNA, IPv4 shorthands, IPv6 zero compression, percent-encoding.
*/}}
{{- define "vantage.targetKey" -}}
{{- $t := trim . -}}
{{- $re := `^([a-zA-Z][a-zA-Z0-9+.-]*)://([^/?#\\]*)([^?#]*)(\?[^#]*)?(#.*)?$` -}}
{{- if not (regexMatch $re $t) -}}
{{- $t -}}
{{- else -}}
{{- $scheme := regexReplaceAll $re $t "${1}" | lower -}}
{{- $auth := regexReplaceAll $re $t "${2}" | lower -}}
{{- $path := regexReplaceAll $re $t "${3}" | replace `\` "/" -}}
{{- $query := regexReplaceAll $re $t "${4}" -}}
{{- $hp := `^(\[[^\]]*\]|[^:]*)(:([0-9]*))?$` -}}
{{- $host := $auth -}}
{{- $port := "" -}}
{{- if regexMatch $hp $auth -}}
{{- $host = regexReplaceAll $hp $auth "${1}" -}}
{{- $port = regexReplaceAll "^0+([0-9])" (regexReplaceAll $hp $auth "${3}") "${1}" -}}
{{- end -}}
{{- if or (and (eq $scheme "https") (eq $port "443")) (and (eq $scheme "http") (eq $port "80")) -}}
{{- $port = "" -}}
{{- end -}}
{{- if not (hasPrefix "/" $path) -}}{{- $path = printf "/%s" $path -}}{{- end -}}
{{- range until 8 -}}
{{- $path = regexReplaceAll `(?i)/(\.|%2e)(/|$)` $path "/" -}}
{{- $path = regexReplaceAll `(?i)^/(\.|%2e){2}(/|$)` $path "/" -}}
{{- $path = regexReplaceAll `(?i)/[^/]*/(\.|%2e){2}(/|$)` $path "/" -}}
{{- end -}}
{{- $shown := list -}}
{{- range regexFindAll `[^&;]*[&;]?` (trimPrefix "?" $query) -1 -}}
{{- $sep := regexFind `[&;]$` . -}}
{{- $pair := trimSuffix $sep . -}}
{{- $name := regexReplaceAll `^([^=]*)=.*$` $pair "${1}" -}}
{{- $folded := regexReplaceAll `%[0-9a-fA-F]{2}|[^\p{L}\p{N}]` $name "" | lower -}}
{{- if and (contains "=" $pair) (regexMatch `(key|token|secret|password|passwd|pwd|signature|sig|credentials?|session|sessionid|auth|authorization|bearer|jwt|code)$` $folded) -}}
{{- $shown = append $shown (printf "%s=[redacted]%s" $name $sep) -}}
{{- else if . -}}
{{- $shown = append $shown . -}}
{{- end -}}
{{- end -}}
{{- printf "%s://%s%s%s" $scheme $host (ternary (printf ":%s" $port) "" (ne $port "")) $path -}}
{{- if $query }}?{{ join "" $shown }}{{ end -}}
{{- end -}}
{{- end }}
