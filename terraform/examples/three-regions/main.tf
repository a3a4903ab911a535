# Three regional clusters and the coordinator in one of them. Terraform cannot iterate over
# provider configurations, so each cluster gets a provider pair and one module instance;
# all instances share the same regions map, and the plan module decides what goes where.

locals {
  regions = {
    "eu-west"  = { cluster = "eu" }
    "us-east"  = { cluster = "us" }
    "ap-south" = { cluster = "ap" }
  }
  coordinator_grpc_url = "https://vantage-grpc.example.com:50051"
  # https:// needs TLS on the coordinator: a kubernetes.io/tls Secret in the eu cluster's
  # vantage namespace (e.g. from cert-manager) for vantage-grpc.example.com. With a private
  # CA, also a Secret with ca.crt in every cluster (agent_ca_secret = "vantage-grpc-ca").
  coordinator_tls_secret = "vantage-grpc-tls"
  checks = [
    { target = "https://mcp.example.com/mcp", interval = "1m", labels = { team = "platform" } },
  ]
}

variable "agent_tokens" {
  description = "Region -> agent token."
  type        = map(string)
  sensitive   = true
}

variable "api_token" {
  type      = string
  sensitive = true
}

provider "kubernetes" {
  alias          = "eu"
  config_path    = "~/.kube/config"
  config_context = "eu-west"
}
provider "helm" {
  alias = "eu"
  kubernetes {
    config_path    = "~/.kube/config"
    config_context = "eu-west"
  }
}
provider "kubernetes" {
  alias          = "us"
  config_path    = "~/.kube/config"
  config_context = "us-east"
}
provider "helm" {
  alias = "us"
  kubernetes {
    config_path    = "~/.kube/config"
    config_context = "us-east"
  }
}
provider "kubernetes" {
  alias          = "ap"
  config_path    = "~/.kube/config"
  config_context = "ap-south"
}
provider "helm" {
  alias = "ap"
  kubernetes {
    config_path    = "~/.kube/config"
    config_context = "ap-south"
  }
}

module "vantage_eu" {
  source                 = "../.."
  providers              = { helm = helm.eu, kubernetes = kubernetes.eu }
  cluster                = "eu"
  regions                = local.regions
  coordinator_cluster    = "eu"
  coordinator_grpc_url   = local.coordinator_grpc_url
  coordinator_tls_secret = local.coordinator_tls_secret
  agent_tokens           = var.agent_tokens
  api_token              = var.api_token
  checks                 = local.checks
}

module "vantage_us" {
  source                 = "../.."
  providers              = { helm = helm.us, kubernetes = kubernetes.us }
  cluster                = "us"
  regions                = local.regions
  coordinator_cluster    = "eu"
  coordinator_grpc_url   = local.coordinator_grpc_url
  coordinator_tls_secret = local.coordinator_tls_secret
  agent_tokens           = var.agent_tokens
  checks                 = local.checks
}

module "vantage_ap" {
  source                 = "../.."
  providers              = { helm = helm.ap, kubernetes = kubernetes.ap }
  cluster                = "ap"
  regions                = local.regions
  coordinator_cluster    = "eu"
  coordinator_grpc_url   = local.coordinator_grpc_url
  coordinator_tls_secret = local.coordinator_tls_secret
  agent_tokens           = var.agent_tokens
  checks                 = local.checks
}

output "coordinator_api" {
  value = module.vantage_eu.coordinator_api_service
}
