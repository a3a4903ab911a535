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
}

output "agent_secrets" {
  description = "Region -> the Secret (key `token`) its agent reads, in the region's cluster."
  value       = local.agent_secret
}

output "agent_names" {
  description = "Region -> the agent name in the coordinator's agent list (token key agent-<name>)."
  value       = local.agent_name
}
