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
  description = "The URL agents dial, e.g. https://vantage-grpc.example.com:50051."
  type        = string

  validation {
    condition     = can(regex("^https?://[^/@]+$", var.coordinator_grpc_url))
    error_message = "coordinator_grpc_url: give scheme, host and port only, e.g. https://vantage-grpc.example.com:50051."
  }
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
  validation {
    condition     = alltrue([for c in var.checks : can(regex("^([1-9][0-9]*(s|m|h)|[1-9][0-9]{3,}ms)$", c.interval))])
    error_message = "checks: interval is a duration of at least 1s with its unit (the coordinator refuses less), e.g. 30s or 1m."
  }
  validation {
    condition     = alltrue([for c in var.checks : c.deadline == null || can(regex("^[1-9][0-9]*(ms|s|m|h)$", c.deadline))])
    error_message = "checks: deadline is a duration greater than zero with its unit, e.g. 30s."
  }
  validation {
    # (try: the durations' shape is the validations above; a missing deadline passes)
    condition = alltrue([for c in var.checks : try(
      tonumber(regex("^[0-9]+", c.deadline)) * lookup({ ms = 1, s = 1000, m = 60000, h = 3600000 }, regex("[a-z]+$", c.deadline))
      <= tonumber(regex("^[0-9]+", c.interval)) * lookup({ ms = 1, s = 1000, m = 60000, h = 3600000 }, regex("[a-z]+$", c.interval)),
    true)])
    error_message = "checks: a deadline is longer than its interval; runs never overlap, so a run could not finish before the next is due: shorten the deadline or lengthen the interval."
  }
  validation {
    condition     = alltrue(flatten([for c in var.checks : [for k in keys(c.labels) : can(regex("^([a-zA-Z][a-zA-Z0-9_]*|_[a-zA-Z0-9][a-zA-Z0-9_]*|_)$", k)) && k != "target"]]))
    error_message = "checks: a label name is a Prometheus label name: letters, digits and _, not starting with a digit or __, and not `target` (Vantage sets it), e.g. team or app_team."
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
