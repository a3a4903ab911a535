variable "regions" {
  description = "Regions to install agents in, each mapped to the cluster that hosts it (the key is the region label agents report)."
  type = map(object({
    cluster  = string
    replicas = optional(number, 1)
    # false: the cluster's pod network has no IPv6 (vantage-agent --no-ipv6).
    ipv6 = optional(bool, true)
  }))

  validation {
    condition     = length(var.regions) > 0
    error_message = "regions: give at least one region, e.g. { \"eu-west\" = { cluster = \"eu\" } }."
  }
  validation {
    condition     = alltrue([for name in keys(var.regions) : can(regex("^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$", name))])
    error_message = "regions: a region label is lowercase letters, digits and dashes (at most 32 characters), e.g. eu-west."
  }
  validation {
    condition     = alltrue([for r in values(var.regions) : r.replicas >= 1 && r.replicas <= 10])
    error_message = "regions: replicas must be between 1 and 10 (0 would configure a region with no agent, so every check naming it stays unknown); remove the region instead."
  }
}

variable "coordinator_cluster" {
  description = "The cluster that hosts the coordinator."
  type        = string

  validation {
    condition     = length(trimspace(var.coordinator_cluster)) > 0
    error_message = "coordinator_cluster: name the cluster that hosts the coordinator."
  }
}

variable "coordinator_grpc_url" {
  description = "The URL agents dial, e.g. https://vantage-grpc.example.com:50051: https:// needs coordinator_tls_secret (the coordinator's TLS); http:// is plain HTTP/2 (agent tokens in clear text: a trusted network only)."
  type        = string

  validation {
    condition     = can(regex("^https?://[^/@]+$", var.coordinator_grpc_url))
    error_message = "coordinator_grpc_url: give scheme, host and port only, e.g. https://vantage-grpc.example.com:50051."
  }
}

variable "coordinator_tls_secret" {
  description = "A kubernetes.io/tls Secret (tls.crt, tls.key) in the coordinator's cluster: TLS for the agents' gRPC listener (the chart's coordinator.tls). Required with an https:// coordinator_grpc_url, refused with http://."
  type        = string
  default     = ""
}

variable "agent_ca_secret" {
  description = "A Secret with ca.crt in every regional cluster: the CA the agents trust for the coordinator's certificate when it is not from a public CA (the chart's agent.caSecret, --ca-file). Only with an https:// coordinator_grpc_url."
  type        = string
  default     = ""
}

variable "checks" {
  description = "Scheduled checks the coordinator runs (the coordinator's [[checks]]: interval at least 1s, deadline at most the interval, label names Prometheus label names, credential a key of credentials, baseline a key of baselines)."
  type = list(object({
    target      = string
    interval    = optional(string, "1m")
    deadline    = optional(string)
    regions     = optional(list(string), [])
    credential  = optional(string)
    expect_auth = optional(bool, false)
    baseline    = optional(string)
    labels      = optional(map(string), {})
  }))
  default = []

  validation {
    condition     = alltrue([for c in var.checks : can(regex("^https?://[^/@]+(/.*)?$", c.target))])
    error_message = "checks: each target is an http(s) URL without user information."
  }
  # Durations as the coordinator reads them (humantime): whole numbers with units d, h, m,
  # s, ms, largest first (1m30s, 1d). Fractions (1.5m) are refused: write 90s. In
  # milliseconds: sum([for p in regexall("([0-9]+)(ms|s|m|h|d)", d) : p[0] * unit]).
  validation {
    condition     = alltrue([for c in var.checks : can(regex("^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$", c.interval)) && length(c.interval) >= 2])
    error_message = "checks: interval is a duration: whole numbers with units d, h, m, s, ms, largest first, e.g. 30s, 1m30s, 1h, 1d (no fractions: 90s, not 1.5m)."
  }
  validation {
    condition     = alltrue([for c in var.checks : try(sum([for p in regexall("([0-9]+)(ms|s|m|h|d)", c.interval) : tonumber(p[0]) * lookup({ ms = 1, s = 1000, m = 60000, h = 3600000, d = 86400000 }, p[1])]) >= 1000, true)])
    error_message = "checks: interval must be at least 1s (the coordinator refuses less), e.g. 30s or 1m30s."
  }
  validation {
    condition     = alltrue([for c in var.checks : c.deadline == null || try(can(regex("^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$", c.deadline)) && length(c.deadline) >= 2, false)])
    error_message = "checks: deadline is a duration: whole numbers with units d, h, m, s, ms, largest first, e.g. 30s or 1m30s (no fractions: 90s, not 1.5m)."
  }
  validation {
    condition     = alltrue([for c in var.checks : try(sum([for p in regexall("([0-9]+)(ms|s|m|h|d)", c.deadline) : tonumber(p[0]) * lookup({ ms = 1, s = 1000, m = 60000, h = 3600000, d = 86400000 }, p[1])]) > 0, true)])
    error_message = "checks: deadline must be greater than zero, e.g. 30s."
  }
  validation {
    # (try: the durations' shape is the validations above; a missing deadline passes)
    condition = alltrue([for c in var.checks : try(
      sum([for p in regexall("([0-9]+)(ms|s|m|h|d)", c.deadline) : tonumber(p[0]) * lookup({ ms = 1, s = 1000, m = 60000, h = 3600000, d = 86400000 }, p[1])])
      <= sum([for p in regexall("([0-9]+)(ms|s|m|h|d)", c.interval) : tonumber(p[0]) * lookup({ ms = 1, s = 1000, m = 60000, h = 3600000, d = 86400000 }, p[1])]),
    true)])
    error_message = "checks: a deadline is longer than its interval; runs never overlap, so a run could not finish before the next is due: shorten the deadline or lengthen the interval."
  }
  validation {
    condition     = alltrue(flatten([for c in var.checks : [for k in keys(c.labels) : can(regex("^([a-zA-Z][a-zA-Z0-9_]*|_[a-zA-Z0-9][a-zA-Z0-9_]*|_)$", k)) && k != "target"]]))
    error_message = "checks: a label name is a Prometheus label name: letters, digits and _, not starting with a digit or __, and not `target` (Vantage sets it), e.g. team or app_team."
  }
  validation {
    condition     = alltrue(flatten([for c in var.checks : [for k in keys(c.labels) : !contains(["job", "instance"], k)]]))
    error_message = "checks: a label named job or instance clashes with the labels Prometheus sets on every series it scrapes: on vantage_target_info it would become exported_job (or exported_instance) and routing by it would break; name it otherwise, e.g. app_job."
  }
}

variable "credentials" {
  description = "Names of the credentials checks may name (their tokens are the root module's concern: Secret vantage-credential-<name>, key token)."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for n in var.credentials : can(regex("^[a-z0-9-]+$", n))])
    error_message = "credentials: a credential name is lowercase letters, digits and dashes, e.g. prod."
  }
}

variable "baselines" {
  description = "Baseline files (the output of `vantage baseline`) by file name, e.g. { \"prod.toml\" = file(\"prod.toml\") }; a check names one with baseline, and the findings it accepts do not page."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for n in keys(var.baselines) : can(regex("^[A-Za-z0-9][A-Za-z0-9_.-]*[.]toml$", n)) && n != "vantage.toml"])
    error_message = "baselines: a file name is letters, digits, _ . - ending in .toml, and not vantage.toml (the configuration's own file)."
  }
}

variable "image" {
  description = "The Vantage image."
  type = object({
    repository = string
    tag        = optional(string, "")
  })
  default = { repository = "ghcr.io/example/vantage" }
}
