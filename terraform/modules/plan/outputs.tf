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
