# terraform test: the plan of three regions in three clusters, and refusals of bad input.

variables {
  regions = {
    "eu-west"  = { cluster = "eu" }
    "us-east"  = { cluster = "us", replicas = 2, ipv6 = false }
    "ap-south" = { cluster = "ap" }
  }
  coordinator_cluster    = "eu"
  coordinator_grpc_url   = "https://vantage-grpc.example.com:50051"
  coordinator_tls_secret = "vantage-grpc-tls"
  checks = [
    { target = "https://mcp.example.com/mcp", interval = "1m", regions = ["eu-west", "us-east"], labels = { team = "platform" } },
    { target = "https://auth.example.com/mcp", interval = "5m", deadline = "45s", credential = "prod", expect_auth = true, baseline = "prod.toml", labels = { app_team = "id", _shard = "2" } },
  ]
  credentials = ["prod"]
  baselines   = { "prod.toml" = "[[accept]]\n" }
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
    condition     = yamldecode(output.values_by_cluster["us"]).agents[0].ipv6 == false && yamldecode(output.values_by_cluster["ap"]).agents[0].ipv6 == true
    error_message = "a region without IPv6 says so to its agents (--no-ipv6); the others keep the default"
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

run "a_protected_check_carries_its_credential_deadline_and_baseline" {
  command = plan

  assert {
    condition     = yamldecode(output.values_by_cluster["eu"]).coordinator.checks[1].credential == "prod" && yamldecode(output.values_by_cluster["eu"]).coordinator.checks[1].expectAuth == true
    error_message = "a check carries its credential and expect_auth"
  }
  assert {
    condition     = yamldecode(output.values_by_cluster["eu"]).coordinator.credentials == [{ name = "prod", secretName = "vantage-credential-prod", key = "token" }]
    error_message = "the coordinator mounts each credential's Secret"
  }
  assert {
    condition     = yamldecode(output.values_by_cluster["eu"]).coordinator.checks[1].deadline == "45s" && yamldecode(output.values_by_cluster["eu"]).coordinator.checks[1].baseline == "prod.toml"
    error_message = "a check carries its deadline and baseline"
  }
  assert {
    condition     = yamldecode(output.values_by_cluster["eu"]).coordinator.baselines["prod.toml"] == "[[accept]]\n"
    error_message = "the baseline files go to the chart"
  }
  assert {
    condition     = !contains(keys(yamldecode(output.values_by_cluster["eu"]).coordinator.checks[0]), "deadline") && yamldecode(output.values_by_cluster["eu"]).coordinator.checks[0].expectAuth == false
    error_message = "an unset deadline is left to the coordinator's default"
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

run "tls_for_https_agents" {
  command = plan
  variables {
    agent_ca_secret = "vantage-grpc-ca"
  }
  assert {
    condition     = yamldecode(output.values_by_cluster["eu"]).coordinator.tls == { enabled = true, secretName = "vantage-grpc-tls" }
    error_message = "an https:// coordinator listens with TLS from coordinator_tls_secret"
  }
  assert {
    condition     = alltrue([for c in ["eu", "us", "ap"] : yamldecode(output.values_by_cluster[c]).agent.caSecret == "vantage-grpc-ca"])
    error_message = "every cluster with agents trusts the coordinator's CA (agent.caSecret)"
  }
}

run "plain_http_agents_without_tls" {
  command = plan
  variables {
    coordinator_grpc_url   = "http://vantage-grpc.vantage.svc:50051"
    coordinator_tls_secret = ""
  }
  assert {
    condition     = !contains(keys(yamldecode(output.values_by_cluster["eu"]).coordinator), "tls") && !contains(keys(yamldecode(output.values_by_cluster["us"])), "agent")
    error_message = "an http:// coordinator has no TLS, and its agents no CA"
  }
}

run "bad_https_agents_to_a_coordinator_without_tls" {
  command = plan
  variables {
    coordinator_tls_secret = ""
  }
  expect_failures = [output.values_by_cluster]
}

run "bad_http_agents_to_a_tls_coordinator" {
  command = plan
  variables {
    coordinator_grpc_url = "http://vantage-grpc.example.com:50051"
  }
  expect_failures = [output.values_by_cluster]
}

run "bad_a_coordinator_ca_for_http_agents" {
  command = plan
  variables {
    coordinator_grpc_url   = "http://vantage-grpc.example.com:50051"
    coordinator_tls_secret = ""
    agent_ca_secret        = "vantage-grpc-ca"
  }
  expect_failures = [output.values_by_cluster]
}

run "compound_durations_as_the_coordinator_reads_them" {
  command = plan
  variables {
    checks = [
      { target = "https://mcp.example.com/mcp", interval = "1m30s", deadline = "1m1s500ms" },
      { target = "https://auth.example.com/mcp", interval = "1d" },
      { target = "https://b.example.com/mcp", interval = "0m1s" },
    ]
  }
  assert {
    condition     = [for c in yamldecode(output.values_by_cluster["eu"]).coordinator.checks : c.interval] == ["1m30s", "1d", "0m1s"]
    error_message = "compound durations and days pass as written"
  }
}

run "bad_interval_a_fraction" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", interval = "1.5m" }]
  }
  expect_failures = [var.checks]
}

run "bad_interval_compound_under_a_second" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", interval = "0s999ms" }]
  }
  expect_failures = [var.checks]
}

run "bad_deadline_compound_past_its_interval" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", interval = "1m30s", deadline = "1m30s1ms" }]
  }
  expect_failures = [var.checks]
}

run "bad_label_name_job" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", labels = { job = "x" } }]
  }
  expect_failures = [var.checks]
}

run "bad_label_name_instance" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", labels = { instance = "x" } }]
  }
  expect_failures = [var.checks]
}

run "the_api_token_secret_is_not_the_charts" {
  command = plan
  assert {
    condition     = output.api_secret != "vantage-api"
    error_message = "the chart renders vantage-api (release vantage) when no token is given: the root module's Secret must have another name"
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

# Values the coordinator refuses at start, refused at plan time instead.

run "bad_interval_zero" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", interval = "0s" }]
  }
  expect_failures = [var.checks]
}

run "bad_interval_under_a_second" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", interval = "500ms" }]
  }
  expect_failures = [var.checks]
}

run "bad_deadline_zero" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", deadline = "0s" }]
  }
  expect_failures = [var.checks]
}

run "bad_deadline_past_its_interval" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", interval = "30s", deadline = "1m" }]
  }
  expect_failures = [var.checks]
}

run "bad_label_name_with_a_dash" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", labels = { "env-name" = "x" } }]
  }
  expect_failures = [var.checks]
}

run "bad_label_name_with_a_dot" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", labels = { "app.team" = "x" } }]
  }
  expect_failures = [var.checks]
}

run "bad_label_name_target" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", labels = { target = "x" } }]
  }
  expect_failures = [var.checks]
}

run "bad_label_name_reserved" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", labels = { "__name__" = "x" } }]
  }
  expect_failures = [var.checks]
}

run "bad_label_name_starting_with_a_digit" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", labels = { "1st" = "x" } }]
  }
  expect_failures = [var.checks]
}

run "bad_a_region_with_no_agent" {
  command = plan
  variables {
    regions = { "eu-west" = { cluster = "eu", replicas = 0 } }
  }
  expect_failures = [var.regions]
}

run "bad_a_baseline_named_like_the_configuration" {
  command = plan
  variables {
    baselines = { "vantage.toml" = "" }
  }
  expect_failures = [var.baselines]
}

run "bad_a_check_naming_an_unknown_credential" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", credential = "staging" }]
  }
  expect_failures = [output.values_by_cluster]
}

run "bad_a_check_naming_an_unknown_baseline" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp", baseline = "missing.toml" }]
  }
  expect_failures = [output.values_by_cluster]
}

run "bad_a_region_with_more_than_10_agents" {
  command = plan
  variables {
    regions = { "eu-west" = { cluster = "eu", replicas = 11 } }
  }
  expect_failures = [var.regions]
}

# One target twice, as the coordinator compares targets (it refuses one that appears twice).

run "bad_a_target_scheduled_twice" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp" }, { target = "https://mcp.example.com/mcp", interval = "5m" }]
  }
  expect_failures = [output.values_by_cluster]
}

run "bad_a_target_spelt_with_its_host_in_capitals_and_its_default_port" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp" }, { target = "https://MCP.example.com:443/mcp" }]
  }
  expect_failures = [output.values_by_cluster]
}

run "bad_a_target_spelt_with_dot_segments" {
  command = plan
  variables {
    checks = [{ target = "http://mcp.example.com/mcp" }, { target = "http://mcp.example.com:80/a/../mcp" }]
  }
  expect_failures = [output.values_by_cluster]
}

run "bad_two_targets_differing_only_in_a_credential_in_the_query" {
  command = plan
  variables {
    checks = [{ target = "https://mcp.example.com/mcp?token=a" }, { target = "https://mcp.example.com/mcp?token=b" }]
  }
  expect_failures = [output.values_by_cluster]
}

run "targets_the_coordinator_schedules_as_two" {
  command = plan
  variables {
    checks = [
      { target = "https://mcp.example.com/mcp" },
      { target = "https://mcp.example.com/mcp/" },
      { target = "https://mcp.example.com:8443/mcp" },
      { target = "http://mcp.example.com/mcp" },
      { target = "https://mcp.example.com/mcp?x=1" },
    ]
  }
  assert {
    condition     = length(yamldecode(output.values_by_cluster["eu"]).coordinator.checks) == 5
    error_message = "a trailing slash, another port, another scheme and a query are other targets for the coordinator"
  }
}
