# terraform test: the plan of three regions in three clusters, and refusals of bad input.

variables {
  regions = {
    "eu-west"  = { cluster = "eu" }
    "us-east"  = { cluster = "us", replicas = 2 }
    "ap-south" = { cluster = "ap" }
  }
  coordinator_cluster  = "eu"
  coordinator_grpc_url = "https://vantage-grpc.example.com:50051"
  checks = [
    { target = "https://mcp.example.com/mcp", interval = "1m", regions = ["eu-west", "us-east"], labels = { team = "platform" } },
  ]
}

run "three_regions_in_three_clusters" {
  command = plan

  assert {
    condition     = toset(output.clusters) == toset(["eu", "us", "ap"])
    error_message = "every cluster gets a release"
  }
  assert {
    condition     = output.regions_by_cluster["us"] == ["us-east"] && output.regions_by_cluster["eu"] == ["eu-west"]
    error_message = "each region's agent goes to its own cluster"
  }
  assert {
    condition     = yamldecode(output.values_by_cluster["eu"]).coordinator.enabled == true
    error_message = "the coordinator goes to the coordinator cluster"
  }
  assert {
    condition     = yamldecode(output.values_by_cluster["us"]).coordinator.enabled == false
    error_message = "no coordinator in regional clusters"
  }
  assert {
    condition     = yamldecode(output.values_by_cluster["us"]).agents[0].replicas == 2
    error_message = "replicas are carried per region"
  }
  assert {
    condition     = yamldecode(output.values_by_cluster["ap"]).agents[0].coordinator == "https://vantage-grpc.example.com:50051"
    error_message = "agents dial the coordinator URL"
  }
  assert {
    condition     = length(yamldecode(output.values_by_cluster["eu"]).coordinator.agents) == 3
    error_message = "the coordinator knows every region's agent"
  }
  assert {
    condition     = yamldecode(output.values_by_cluster["eu"]).coordinator.checks[0].labels.team == "platform"
    error_message = "scheduled checks carry their labels"
  }
}

run "the_coordinator_cluster_may_host_no_agent" {
  command = plan
  variables {
    regions             = { "eu-west" = { cluster = "eu" } }
    coordinator_cluster = "central"
    checks              = []
  }
  assert {
    condition     = output.regions_by_cluster["central"] == []
    error_message = "the central cluster gets the coordinator only"
  }
}

run "bad_region_label" {
  command = plan
  variables {
    regions = { "EU West" = { cluster = "eu" } }
  }
  expect_failures = [var.regions]
}

run "bad_coordinator_url" {
  command = plan
  variables {
    coordinator_grpc_url = "vantage-grpc.example.com"
  }
  expect_failures = [var.coordinator_grpc_url]
}

run "bad_check_target" {
  command = plan
  variables {
    checks = [{ target = "ftp://mcp.example.com/mcp" }]
  }
  expect_failures = [var.checks]
}

run "a_check_naming_an_unknown_region" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", regions = ["mars"] }]
  }
  expect_failures = [output.values_by_cluster]
}
