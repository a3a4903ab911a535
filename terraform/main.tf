# A thin wrapper around one Helm release per cluster. Everything it decides (which agents
# and whether the coordinator go here, the values, the validation) lives in the
# provider-free modules/plan, tested with `terraform test`.

module "plan" {
  source                 = "./modules/plan"
  regions                = var.regions
  coordinator_cluster    = var.coordinator_cluster
  coordinator_grpc_url   = var.coordinator_grpc_url
  coordinator_tls_secret = var.coordinator_tls_secret
  agent_ca_secret        = var.agent_ca_secret
  checks                 = var.checks
  credentials            = sort(nonsensitive(keys(var.credentials)))
  baselines              = var.baselines
  image                  = var.image
}

locals {
  here_regions   = module.plan.regions_by_cluster[var.cluster]
  is_coordinator = var.cluster == var.coordinator_cluster
}

resource "kubernetes_namespace_v1" "vantage" {
  metadata {
    name = var.namespace
  }
}

# Each agent's token, in its own cluster.
resource "kubernetes_secret_v1" "agent" {
  for_each = toset(local.here_regions)
  metadata {
    name      = module.plan.agent_secrets[each.key]
    namespace = kubernetes_namespace_v1.vantage.metadata[0].name
  }
  data = {
    token = var.agent_tokens[each.key]
  }
}

# Every agent's token, keyed by agent name, for the coordinator; and its API token.
resource "kubernetes_secret_v1" "agent_tokens" {
  count = local.is_coordinator ? 1 : 0
  metadata {
    name      = "vantage-agent-tokens"
    namespace = kubernetes_namespace_v1.vantage.metadata[0].name
  }
  data = { for region, name in module.plan.agent_names : "agent-${name}" => var.agent_tokens[region] }
}

# Not named vantage-api: the chart renders that Secret itself when no token is given, so
# setting or clearing api_token would make two owners of one Secret ("already exists").
resource "kubernetes_secret_v1" "api" {
  count = local.is_coordinator && var.api_token != "" ? 1 : 0
  metadata {
    name      = module.plan.api_secret
    namespace = kubernetes_namespace_v1.vantage.metadata[0].name
  }
  data = { "api-token-0" = var.api_token }
}

# Each credential's token, for the coordinator (mounted as /etc/vantage/credentials/<name>/token).
resource "kubernetes_secret_v1" "credential" {
  for_each = local.is_coordinator ? toset(nonsensitive(keys(var.credentials))) : toset([])
  metadata {
    name      = "vantage-credential-${each.key}"
    namespace = kubernetes_namespace_v1.vantage.metadata[0].name
  }
  data = { token = var.credentials[each.key] }
}

resource "helm_release" "vantage" {
  name      = "vantage"
  namespace = kubernetes_namespace_v1.vantage.metadata[0].name
  chart     = var.chart != "" ? var.chart : "${path.module}/../charts/vantage"
  values = concat(
    [module.plan.values_by_cluster[var.cluster]],
    local.is_coordinator && var.api_token != "" ? [yamlencode({ coordinator = { apiTokens = { existingSecret = module.plan.api_secret } } })] : [],
  )
  depends_on = [kubernetes_secret_v1.agent, kubernetes_secret_v1.agent_tokens, kubernetes_secret_v1.api, kubernetes_secret_v1.credential]
}
