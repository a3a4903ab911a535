variable "regions" {
  description = "Regions to install agents in, each mapped to the cluster that hosts it (the key is the region label agents report)."
  type = map(object({
    cluster  = string
    replicas = optional(number, 1)
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
    condition     = alltrue([for r in values(var.regions) : r.replicas >= 0 && r.replicas <= 10])
    error_message = "regions: replicas must be between 0 and 10."
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
  description = "Scheduled checks the coordinator runs."
  type = list(object({
    target   = string
    interval = optional(string, "1m")
    regions  = optional(list(string), [])
    labels   = optional(map(string), {})
  }))
  default = []

  validation {
    condition     = alltrue([for c in var.checks : can(regex("^https?://[^/@]+(/.*)?$", c.target))])
    error_message = "checks: each target is an http(s) URL without user information."
  }
  validation {
    condition     = alltrue([for c in var.checks : can(regex("^[0-9]+(ms|s|m|h)$", c.interval))])
    error_message = "checks: interval is a duration with its unit, e.g. 30s or 1m."
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
