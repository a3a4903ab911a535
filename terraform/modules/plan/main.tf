# Provider-free: everything the root module installs is decided here, so it can be tested
# with `terraform test` without downloading a provider.

locals {
  clusters = distinct(concat([var.coordinator_cluster], [for r in values(var.regions) : r.cluster]))

  # Names of the Secrets holding agent tokens (one per region in its cluster; one with a key
  # per agent in the coordinator's cluster).
  agent_secret = { for name, _ in var.regions : name => "vantage-agent-${name}" }
  agent_name   = { for name, _ in var.regions : name => "${name}-1" }

  tls = var.coordinator_tls_secret != ""

  coordinator_values = merge({
    enabled           = true
    agentTokensSecret = "vantage-agent-tokens"
    agents            = [for name in sort(keys(var.regions)) : { name = local.agent_name[name], region = name }]
    credentials       = [for n in var.credentials : { name = n, secretName = "vantage-credential-${n}", key = "token" }]
    baselines         = var.baselines
    checks = [for c in var.checks : merge(
      { target = c.target, interval = c.interval, labels = c.labels, expectAuth = c.expect_auth },
      length(c.regions) > 0 ? { regions = c.regions } : {},
      c.deadline != null ? { deadline = c.deadline } : {},
      c.credential != null ? { credential = c.credential } : {},
      c.baseline != null ? { baseline = c.baseline } : {},
    )]
    grpcService = { type = "LoadBalancer" }
    fleet       = { localAgent = false }
    },
    # TLS for the agents' gRPC (https:// agents); the output's preconditions refuse a
    # scheme that disagrees with it.
    local.tls ? { tls = { enabled = true, secretName = var.coordinator_tls_secret } } : {},
  )

  values_by_cluster = {
    for cluster in local.clusters : cluster => merge({
      image = var.image
      # (through JSON: the two branches are objects of different shapes)
      coordinator = jsondecode(cluster == var.coordinator_cluster ? jsonencode(local.coordinator_values) : jsonencode({ enabled = false }))
      agents = [
        for name in sort(keys(var.regions)) : {
          region         = name
          coordinator    = var.coordinator_grpc_url
          existingSecret = local.agent_secret[name]
          replicas       = var.regions[name].replicas
          ipv6           = var.regions[name].ipv6
        } if var.regions[name].cluster == cluster
      ]
      },
      # The CA of a coordinator certificate from a private CA, where agents run.
      var.agent_ca_secret != "" && contains([for r in values(var.regions) : r.cluster], cluster) ? { agent = { caSecret = var.agent_ca_secret } } : {},
    )
  }
}
