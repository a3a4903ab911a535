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
A duration of values.schema.json's form in milliseconds: whole numbers with units, largest
first, e.g. 30s, 1m30s, 1h, 1d, 1500ms (what the coordinator's parser, humantime, reads the
same way), to compare durations as the coordinator does.
*/}}
{{- define "vantage.durationMs" -}}
{{- if not (and (regexMatch `^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$` .) (ne . "")) -}}
{{- fail (printf "%q is not a duration: whole numbers with units (d, h, m, s, ms), largest first, e.g. 30s, 1m30s, 1h, 1500ms" .) -}}
{{- end -}}
{{- $ms := 0 -}}
{{- range regexFindAll `[0-9]+(ms|s|m|h|d)` . -1 -}}
{{- $n := regexFind `^[0-9]+` . | atoi -}}
{{- $unit := trimPrefix (regexFind `^[0-9]+` .) . -}}
{{- $ms = add $ms (mul $n (get (dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 "d" 86400000) $unit)) -}}
{{- end -}}
{{- $ms -}}
{{- end }}

{{/*
Why a CIDR prefix is refused, as the coordinator refuses it (ipnet's parser, then
config::egress_catch_all when .catchAll): "" when it is fine. An address the parser refuses:
"invalid IP address syntax". A prefix that covers every address, or more than a /8 of IPv4
(as IPv4, as IPv4-mapped IPv6 ::ffff:0:0/96, or as IPv6 wider than a /7): the coordinator's
words, which name the fix. dict: cidr, catchAll.
*/}}
{{- define "vantage.cidrProblem" -}}
{{- $p := .cidr -}}
{{- $bad := "" -}}
{{- $bits := "" -}}
{{- $len := 0 -}}
{{- $v4 := false -}}
{{- if not (regexMatch `^[^/]+/[0-9]{1,3}$` $p) -}}
{{- $bad = "invalid IP address syntax" -}}
{{- else -}}
{{- $addr := index (splitList "/" $p) 0 -}}
{{- $len = index (splitList "/" $p) 1 | atoi -}}
{{- $v4 = regexMatch `^[0-9]{1,3}([.][0-9]{1,3}){3}$` $addr -}}
{{- if $v4 -}}
{{- range splitList "." $addr -}}
{{- if gt (atoi .) 255 }}{{ $bad = "invalid IP address syntax" }}{{ end -}}
{{- $bits = printf "%s%08b" $bits (atoi .) -}}
{{- end -}}
{{- if gt $len 32 }}{{ $bad = "invalid IP address syntax" }}{{ end -}}
{{- else -}}
{{- /* An IPv4 tail (::ffff:1.2.3.4) as two groups. */ -}}
{{- $tail := `^(.*:)([0-9]{1,3}([.][0-9]{1,3}){3})$` -}}
{{- if regexMatch $tail $addr -}}
{{- $o := splitList "." (regexReplaceAll $tail $addr "${2}") -}}
{{- range $o }}{{ if gt (atoi .) 255 }}{{ $bad = "invalid IP address syntax" }}{{ end }}{{ end -}}
{{- $addr = printf "%s%x:%x" (regexReplaceAll $tail $addr "${1}") (add (mul (atoi (index $o 0)) 256) (atoi (index $o 1))) (add (mul (atoi (index $o 2)) 256) (atoi (index $o 3))) -}}
{{- end -}}
{{- $groups := list -}}
{{- if or (not (regexMatch `^[0-9a-fA-F:]+$` $addr)) (contains ":::" $addr) (gt (len (regexFindAll "::" $addr -1)) 1) -}}
{{- $bad = "invalid IP address syntax" -}}
{{- else if contains "::" $addr -}}
{{- $halves := splitList "::" $addr -}}
{{- $left := ternary (list) (splitList ":" (index $halves 0)) (eq (index $halves 0) "") -}}
{{- $right := ternary (list) (splitList ":" (index $halves 1)) (eq (index $halves 1) "") -}}
{{- if gt (add (len $left) (len $right)) 7 -}}
{{- $bad = "invalid IP address syntax" -}}
{{- else -}}
{{- $groups = $left -}}
{{- range until (int (sub 8 (add (len $left) (len $right)))) }}{{ $groups = append $groups "0" }}{{ end -}}
{{- $groups = concat $groups $right -}}
{{- end -}}
{{- else -}}
{{- $groups = splitList ":" $addr -}}
{{- if ne (len $groups) 8 }}{{ $bad = "invalid IP address syntax" }}{{ end -}}
{{- end -}}
{{- if not $bad -}}
{{- range $groups -}}
{{- if regexMatch `^[0-9a-fA-F]{1,4}$` . -}}
{{- $bits = printf "%s%016b" $bits (printf "0x%s" . | int64) -}}
{{- else -}}
{{- $bad = "invalid IP address syntax" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if gt $len 128 }}{{ $bad = "invalid IP address syntax" }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if $bad -}}
{{- $bad -}}
{{- else if .catchAll -}}
{{- $wide := false -}}
{{- if $v4 -}}
{{- $wide = lt $len 8 -}}
{{- else -}}
{{- $mapped := printf "%s%s%s" (repeat 80 "0") (repeat 16 "1") (repeat 32 "0") -}}
{{- $wide = or (lt $len 7) (and (le $len 96) (eq (substr 0 $len $bits) (substr 0 $len $mapped))) (and (ge $len 96) (lt $len 104) (eq (substr 0 96 $bits) (substr 0 96 $mapped))) -}}
{{- end -}}
{{- if $wide -}}
{{- printf "%s %s, which switches the egress policy off (every vantage would connect anywhere a target points it, internal services included); name the lab's own prefixes, e.g. 198.51.100.0/24" $p (ternary "covers every address" "covers more than a /8 of the IPv4 space (or all of it, through IPv4-mapped IPv6)" (eq $len 0)) -}}
{{- end -}}
{{- end -}}
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

{{/*
What the coordinator refuses at start (config validate), refused at `helm install` with its
own words, each naming the value to change. Outputs nothing.
*/}}
{{- define "vantage.coordinatorRefusals" -}}
{{- $c := .Values.coordinator -}}
{{- range $key, $list := dict "assumeGlobal" $c.probe.assumeGlobal "allowNonGlobal" $c.probe.allowNonGlobal -}}
{{- range $i, $p := $list -}}
{{- /* A bare address is that address alone (/32, /128), as the coordinator reads it. */ -}}
{{- $q := ternary $p (printf "%s/%s" $p (ternary "128" "32" (contains ":" $p))) (contains "/" $p) -}}
{{- with include "vantage.cidrProblem" (dict "cidr" $q "catchAll" true) -}}
{{- fail (printf "coordinator.probe.%s[%d] (probe.%s): %s" $key $i (ternary "assume_global" "allow_non_global" (eq $key "assumeGlobal")) .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $t := include "vantage.durationMs" $c.probe.checkTimeout | int64 -}}
{{- if or (eq $t 0) (gt $t 600000) -}}
{{- fail (printf "coordinator.probe.checkTimeout (probe.check_timeout): %s is out of bounds: one exchange's timeout is greater than zero and at most 10m, e.g. 5s" $c.probe.checkTimeout) -}}
{{- end -}}
{{- if and (not $c.fleet.localAgent) (not $c.agents) -}}
{{- fail "coordinator.fleet.localAgent (fleet.local_agent): no region would run checks: fleet.local_agent is false and there is no [[agents]] entry; set coordinator.fleet.localAgent=true or add a coordinator.agents entry (name, region, token)" -}}
{{- end -}}
{{- $names := dict -}}
{{- $tokens := dict -}}
{{- range $i, $a := $c.agents -}}
{{- with get $names $a.name -}}
{{- fail (printf "coordinator.agents[%d]: [[agents]]: `%s` appears twice (also coordinator.agents[%s]); names must be unique" $i $a.name .) -}}
{{- end -}}
{{- $_ := set $names $a.name (toString $i) -}}
{{- if and $a.token $c.agentTokensSecret -}}
{{- fail (printf "coordinator.agents[%d] (%s): give coordinator.agentTokensSecret or token, not both: the token would be ignored (the coordinator reads key agent-%s of the Secret %s); remove coordinator.agents[%d].token, or coordinator.agentTokensSecret to have the chart render the Secret" $i $a.name $a.name $c.agentTokensSecret $i) -}}
{{- end -}}
{{- if and $a.token (not $c.agentTokensSecret) -}}
{{- /* The token is compared by its hash: it never appears in a message. */ -}}
{{- $h := sha256sum $a.token -}}
{{- with get $tokens $h -}}
{{- fail (printf "coordinator.agents[%d]: [[agents]]: `%s` (agents[%d].token) has the same token as `%s` (agents[%s]); each agent needs its own token, which binds its region" $i $a.name $i (get . "name") (get . "index")) -}}
{{- end -}}
{{- $_ := set $tokens $h (dict "name" $a.name "index" (toString $i)) -}}
{{- end -}}
{{- end -}}
{{- /* 0 is accepted by `vantage serve --check`, but the coordinator's agent reaper (a timer of
that period) panics at start and silent agents are then never dropped. */ -}}
{{- if eq (include "vantage.durationMs" $c.fleet.heartbeatInterval | int64) 0 -}}
{{- fail (printf "coordinator.fleet.heartbeatInterval %s (fleet.heartbeat_interval): must be greater than zero (the coordinator drops silent agents on this period), e.g. 5s" $c.fleet.heartbeatInterval) -}}
{{- end -}}
{{- if ge (include "vantage.durationMs" $c.fleet.heartbeatInterval | int64) (include "vantage.durationMs" $c.fleet.agentTimeout | int64) -}}
{{- fail (printf "coordinator.fleet.heartbeatInterval %s (fleet.heartbeat_interval): must be shorter than fleet.agent_timeout (coordinator.fleet.agentTimeout %s)" $c.fleet.heartbeatInterval $c.fleet.agentTimeout) -}}
{{- end -}}
{{- range $i, $check := $c.checks -}}
{{- if lt (include "vantage.durationMs" ($check.interval | default "1m") | int64) 1000 -}}
{{- fail (printf "coordinator.checks[%d].interval %s (checks[%d].interval): %s: must be at least 1s, e.g. 30s or 1m30s" $i $check.interval $i $check.target) -}}
{{- end -}}
{{- range $k := list "job" "instance" -}}
{{- if hasKey ($check.labels | default dict) $k -}}
{{- fail (printf "coordinator.checks[%d].labels.%s (checks[%d].labels): %s: `%s` is a label Prometheus sets on every series it scrapes (the target's own); on vantage_target_info yours would become exported_%s and routing by it would break: name it otherwise, e.g. app_%s" $i $k $i $check.target $k $k $k) -}}
{{- end -}}
{{- end -}}
{{- if and (hasKey $check "deadline") (eq (include "vantage.durationMs" (toString $check.deadline) | int64) 0) -}}
{{- fail (printf "coordinator.checks[%d].deadline %s (checks[%d].deadline): %s: must be greater than zero, e.g. 30s" $i $check.deadline $i $check.target) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
What vantage-agent refuses at start (its flags), and values that would install nothing or
ignore a value without a word, refused at `helm install`. Outputs nothing.
*/}}
{{- define "vantage.agentRefusals" -}}
{{- if and (not .Values.coordinator.enabled) (not .Values.agents) -}}
{{- fail "nothing to install: coordinator.enabled is false and agents is empty; set coordinator.enabled=true (the central cluster) or add an agents entry (region, coordinator, existingSecret or token) for a regional cluster" -}}
{{- end -}}
{{- $g := .Values.agent -}}
{{- if .Values.agents -}}
{{- range $key, $max := dict "checkTimeout" 600000 "backoffMin" 3600000 "backoffMax" 3600000 -}}
{{- $v := get $g $key -}}
{{- $ms := include "vantage.durationMs" $v | int64 -}}
{{- if eq $ms 0 -}}
{{- fail (printf "agent.%s %s (--%s): a duration must be greater than zero; write e.g. 500ms, 5s, 2m" $key $v (kebabcase $key)) -}}
{{- else if gt $ms (int64 $max) -}}
{{- fail (printf "agent.%s (--%s): `%s` is longer than the limit of %s" $key (kebabcase $key) $v (ternary "10m" "1h" (eq $key "checkTimeout"))) -}}
{{- end -}}
{{- end -}}
{{- if gt (include "vantage.durationMs" $g.backoffMin | int64) (include "vantage.durationMs" $g.backoffMax | int64) -}}
{{- fail (printf "agent.backoffMin: --backoff-min %s is longer than --backoff-max %s: make agent.backoffMin at most agent.backoffMax" $g.backoffMin $g.backoffMax) -}}
{{- end -}}
{{- range $i, $p := $g.allowNonGlobalMax -}}
{{- if and (ne (lower $p) "none") (include "vantage.cidrProblem" (dict "cidr" $p "catchAll" false)) -}}
{{- fail (printf "agent.allowNonGlobalMax[%d] (--allow-non-global-max): `%s` is not a CIDR prefix; write e.g. 100.64.0.0/10 or 2001:db8::/32, or `none`" $i $p) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $i, $a := .Values.agents -}}
{{- if and $a.token $a.existingSecret -}}
{{- fail (printf "agents[%d] (%s): give existingSecret or token, not both: the token would be ignored (the agent reads the Secret %s); remove agents[%d].token, or agents[%d].existingSecret to have the chart render the Secret" $i $a.region $a.existingSecret $i $i) -}}
{{- end -}}
{{- if and $g.caSecret (hasPrefix "http://" ($a.coordinator | default "")) -}}
{{- fail (printf "agents[%d] (%s): --ca-file is for a TLS coordinator, but --coordinator %s is plain http://: use https:// in agents[%d].coordinator for a TLS coordinator (coordinator.tls), or unset agent.caSecret; to trust a lab CA for the targets this agent probes, use agent.targetCaSecret" $i $a.region $a.coordinator $i) -}}
{{- end -}}
{{- end -}}
{{- end -}}
