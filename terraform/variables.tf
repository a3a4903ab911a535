variable "cluster" {
  description = "The cluster this instance installs into (its helm and kubernetes providers point at it). Instantiate the module once per cluster with the same regions map."
  type        = string
}

variable "regions" {
  description = "Region label -> the cluster that hosts its agent (and replicas). Shared by every instance of the module."
  type = map(object({
    cluster  = string
    replicas = optional(number, 1)
    # false: the cluster's pod network has no IPv6 (vantage-agent --no-ipv6).
    ipv6 = optional(bool, true)
  }))
}

variable "coordinator_cluster" {
  description = "The cluster that hosts the coordinator."
  type        = string
}

variable "coordinator_grpc_url" {
  description = "The URL agents dial, e.g. https://vantage-grpc.example.com:50051 (with coordinator_tls_secret); http:// only inside a trusted network (agent tokens in clear text)."
  type        = string
}

variable "coordinator_tls_secret" {
  description = "A kubernetes.io/tls Secret (tls.crt, tls.key) you create in the coordinator's cluster and namespace (e.g. with cert-manager): TLS for the agents' gRPC. Required with an https:// coordinator_grpc_url, refused with http://."
  type        = string
  default     = ""
}

variable "agent_ca_secret" {
  description = "A Secret with ca.crt you create in each regional cluster's namespace: the CA the agents trust for the coordinator's certificate when it is not from a public CA (--ca-file). Only with https://."
  type        = string
  default     = ""
}

variable "agent_tokens" {
  description = "Region -> agent token. Written to Secrets in the region's cluster and, keyed by agent, in the coordinator's."
  type        = map(string)
  sensitive   = true
}

variable "api_token" {
  description = "A bearer token for the coordinator's API (used only in the coordinator's cluster, Secret vantage-api-token). Empty: the chart generates one (Secret vantage-api)."
  type        = string
  sensitive   = true
  default     = ""
}

variable "checks" {
  description = "Scheduled checks: target, interval (at least 1s), deadline (at most the interval), regions, credential (a key of credentials) and expect_auth, baseline (a key of baselines), labels (Prometheus label names, not `target`). Validated by modules/plan with the coordinator's rules."
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
}

variable "credentials" {
  description = "Credential name -> bearer token for protected targets (a check names one with credential). Written to a Secret vantage-credential-<name> in the coordinator's cluster only."
  type        = map(string)
  sensitive   = true
  default     = {}
}

variable "baselines" {
  description = "Baseline files (the output of `vantage baseline`) by file name, e.g. { \"prod.toml\" = file(\"prod.toml\") }; a check names one with baseline: the findings it accepts do not page."
  type        = map(string)
  default     = {}
}

variable "namespace" {
  description = "The namespace of the release."
  type        = string
  default     = "vantage"
}

variable "chart" {
  description = "The chart: a path (default: this repository's charts/vantage) or a repository chart name."
  type        = string
  default     = ""
}

variable "image" {
  description = "The Vantage image."
  type = object({
    repository = string
    tag        = optional(string, "")
  })
  default = { repository = "ghcr.io/example/vantage" }
}
