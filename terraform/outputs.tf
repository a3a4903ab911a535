output "coordinator_grpc_url" {
  description = "The URL agents dial."
  value       = var.coordinator_grpc_url
}

output "coordinator_api_service" {
  description = "The coordinator's API Service in this cluster (namespace/name), or null elsewhere."
  value       = local.is_coordinator ? "${var.namespace}/vantage-api" : null
}

output "regions_here" {
  description = "The regions whose agents this instance installed."
  value       = local.here_regions
}
