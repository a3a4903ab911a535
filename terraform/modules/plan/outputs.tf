output "clusters" {
  description = "Every cluster that gets a release."
  value       = local.clusters
}

output "regions_by_cluster" {
  description = "The regions whose agents each cluster hosts."
  value       = { for c, v in local.values_by_cluster : c => [for a in v.agents : a.region] }
}

output "values_by_cluster" {
  description = "Helm values (YAML) of the vantage chart, per cluster."
  value       = { for c, v in local.values_by_cluster : c => yamlencode(v) }

  precondition {
    condition     = alltrue(flatten([for c in var.checks : [for r in c.regions : contains(keys(var.regions), r)]]))
    error_message = "checks: every region a check names must be a key of regions."
  }
  precondition {
    condition     = alltrue([for c in var.checks : c.credential == null || try(contains(var.credentials, c.credential), false)])
    error_message = "checks: a check names a credential that is not in credentials; add it there (with its token) or fix the name."
  }
  precondition {
    condition     = alltrue([for c in var.checks : c.baseline == null || try(contains(keys(var.baselines), c.baseline), false)])
    error_message = "checks: a check names a baseline that is not a key of baselines; add the file there (the output of `vantage baseline`)."
  }
  precondition {
    condition     = !startswith(var.coordinator_grpc_url, "https://") || local.tls
    error_message = "coordinator_grpc_url ${var.coordinator_grpc_url} is https://, but the coordinator would listen in plain HTTP/2 (coordinator_tls_secret is empty): every agent's TLS handshake would fail and every region would stay without an agent. Set coordinator_tls_secret to a kubernetes.io/tls Secret in the coordinator's cluster (and agent_ca_secret to a Secret with ca.crt in the regional clusters when the certificate is from a private CA); http:// sends the agent tokens in clear text."
  }
  precondition {
    condition     = !startswith(var.coordinator_grpc_url, "http://") || !local.tls
    error_message = "coordinator_grpc_url ${var.coordinator_grpc_url} is plain http://, but coordinator_tls_secret turns TLS on for the coordinator: the agents would speak plain HTTP/2 to a TLS listener. Use https:// (or drop coordinator_tls_secret)."
  }
  precondition {
    condition     = !startswith(var.coordinator_grpc_url, "http://") || var.agent_ca_secret == ""
    error_message = "agent_ca_secret is for a TLS coordinator, but coordinator_grpc_url ${var.coordinator_grpc_url} is plain http:// (vantage-agent refuses --ca-file with it): use https:// with coordinator_tls_secret, or drop agent_ca_secret."
  }
  precondition {
    condition     = length(local.targets_twice) == 0
    error_message = "checks: ${join("; ", local.targets_twice)}: the coordinator refuses a target that appears twice (it compares targets with scheme and host in lower case, no default port, . and .. resolved and credential values in the query hidden); keep one entry per target."
  }
}

output "agent_secrets" {
  description = "Region -> the Secret (key `token`) its agent reads, in the region's cluster."
  value       = local.agent_secret
}

output "agent_names" {
  description = "Region -> the agent name in the coordinator's agent list (token key agent-<name>)."
  value       = local.agent_name
}

output "api_secret" {
  description = "The Secret (key api-token-0) the root module writes the API token to when it is given: a name the chart never renders itself (it renders <release>-api when no token is given), so setting or clearing the token never makes two owners of one Secret."
  value       = "vantage-api-token"
}
