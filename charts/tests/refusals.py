"""Deploy tests of what the chart and Terraform refuse (imported by run.py): the values the
coordinator would refuse at start, refused at `helm template` / `terraform plan` instead,
each with its message, and the chart's, Terraform's and `vantage serve --check`'s verdicts
compared on the same values (intervals, label names, one target spelt twice), plus the
agents' own mistakes (a region listed twice, 0 replicas).
"""

import json
import os
import re
import tempfile

import yaml


from proc import run


# Pairs of targets: whether the coordinator refuses the two as one target appearing twice
# is its own verdict (`vantage serve --check`); the chart and Terraform must give the same.
TWICE = [
    ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp"),
    ("https://mcp.example.com/mcp", "https://MCP.example.com:443/mcp"),
    ("https://mcp.example.com/mcp", "https://mcp.example.com:0443/mcp"),
    ("http://mcp.example.com:80/mcp", "http://mcp.example.com/mcp"),
    ("http://[::1]:80/mcp", "http://[::1]/mcp"),
    ("https://mcp.example.com", "https://mcp.example.com/"),
    ("https://mcp.example.com/a/../mcp", "https://mcp.example.com/mcp"),
    ("https://mcp.example.com/./mcp", "https://mcp.example.com/%2E%2e/mcp"),
    ("https://mcp.example.com/mcp?token=a", "https://mcp.example.com/mcp?token=b"),
    ("https://mcp.example.com/mcp?API-Key=1&x=2", "https://mcp.example.com/mcp?API-Key=2&x=2"),
    # Two targets for the coordinator:
    ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp/"),
    ("https://mcp.example.com/mcp", "https://mcp.example.com/MCP"),
    ("https://mcp.example.com/mcp", "http://mcp.example.com/mcp"),
    ("https://mcp.example.com/mcp", "https://mcp.example.com:8443/mcp"),
    ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp?x=2"),
    ("https://mcp.example.com/mcp?x=1", "https://mcp.example.com/mcp?x=2"),
]


def configmap_toml(rendered):
    """The coordinator's vantage.toml from `helm template` output."""
    for doc in yaml.safe_load_all(rendered):
        if doc and doc.get("kind") == "ConfigMap" and doc["metadata"]["name"].endswith("-config"):
            return doc["data"]["vantage.toml"]
    raise AssertionError("no coordinator ConfigMap rendered")


def tests(tools, chart, values_dir, vantage):
    """The test functions, each returning a one-line detail or raising."""
    CHART, TESTS = chart, values_dir

    def helm(values, *sets):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "v.yaml")
            with open(path, "w") as f:
                yaml.safe_dump(values, f)
            cmd = [f"{tools}/helm", "template", "x", CHART, "-f", path]
            for s in sets:
                cmd += ["--set", s]
            return run(*cmd, check=False)

    def agents(*regions):
        return {"coordinator": {"enabled": False},
                "agents": [{"region": r, "coordinator": "https://vantage-grpc.example.com:50051", "token": f"tok-{r}"}
                           for r in regions]}

    def replicas_by_region(out):
        return {d["metadata"]["labels"]["vantage.dev/region"]: d["spec"]["replicas"]
                for d in yaml.safe_load_all(out) if d and d["kind"] == "Deployment"}

    def values_the_coordinator_refuses_are_rejected_by_the_schema():
        r = run(f"{tools}/helm", "template", "x", CHART, "-f", os.path.join(TESTS, "values-bad-checks.yaml"), check=False)
        assert r.returncode != 0, "the bad check values rendered"
        for needle in ["'/coordinator/checks/0/interval': '1.5m' does not match",
                       "'/coordinator/checks/1/interval': '90' does not match",
                       "'/coordinator/checks/2/deadline': '1m1h' does not match",
                       "invalid propertyName 'env-name'", "invalid propertyName 'app.team'",
                       "invalid propertyName '__name__'", "invalid propertyName '1st'",
                       "invalid propertyName 'target'", "'/coordinator/checks/4/baseline'",
                       # The path and the key, not only "at ''".
                       "at '/coordinator/checks/3/labels/target': 'not' failed"]:
            assert needle in r.stderr, f"{needle!r} not in: {r.stderr}"
        for key in ["env-name", "app.team", "__name__", "1st"]:
            assert re.search(rf"at '/coordinator/checks/3/labels': additional properties [^\n]*'{re.escape(key)}'", r.stderr), r.stderr
        return "intervals 1.5m and 90, deadline 1m1h, 5 label names, a baseline named vantage.toml"

    def the_schema_and_the_coordinator_agree_on_intervals_and_label_names():
        # Each value both ways: the chart's verdict (helm template) against the coordinator's
        # own (`vantage serve --check` of a config naming it): what one refuses the other must.
        cases = [("interval", v) for v in ["0s", "500ms", "999ms", "1000ms", "1500ms", "1s", "90s", "1m", "1h"]]
        cases += [("label", k) for k in ["env-name", "target", "app.team", "__name__", "__x", "1st",
                                          "team", "_", "_shard", "Team_2", "targets"]]
        refused = 0
        with tempfile.TemporaryDirectory() as d:
            for kind, v in cases:
                check = {"target": "https://mcp.example.com/mcp"}
                if kind == "interval":
                    check["interval"] = v
                    toml = f'[[checks]]\ntarget = "https://mcp.example.com/mcp"\ninterval = "{v}"\n'
                else:
                    check["labels"] = {v: "x"}
                    toml = f'[[checks]]\ntarget = "https://mcp.example.com/mcp"\ninterval = "1m"\nlabels = {{ "{v}" = "x" }}\n'
                values, config = os.path.join(d, "v.yaml"), os.path.join(d, "c.toml")
                with open(values, "w") as f:
                    yaml.safe_dump({"coordinator": {"checks": [check]}}, f)
                with open(config, "w") as f:
                    f.write(toml)
                chart = run(f"{tools}/helm", "template", "x", CHART, "-f", values, check=False)
                coord = run(vantage, "serve", "--config", config, "--check", check=False)
                assert (chart.returncode == 0) == (coord.returncode == 0), \
                    f"{kind} {v!r}: chart exit {chart.returncode}, coordinator exit {coord.returncode}:\n{chart.stderr}\n{coord.stderr}"
                if coord.returncode != 0:
                    key = "interval" if kind == "interval" else "labels"
                    assert key in coord.stderr, coord.stderr
                    refused += 1
        assert refused == 9, f"{refused} refused by both, expected 9 (0s, 500ms, 999ms and 6 label names)"
        return f"{len(cases)} values, same verdict; {refused} refused by both"

    def the_template_refuses_a_deadline_past_its_interval_and_unknown_names():
        with tempfile.TemporaryDirectory() as d:
            for check, needle in [
                ({"target": "https://a.example.com/mcp", "interval": "30s", "deadline": "1m"},
                 "deadline 1m is longer than its interval 30s"),
                ({"target": "https://a.example.com/mcp", "deadline": "2m"},
                 "deadline 2m is longer than its interval 1m"),
                ({"target": "https://a.example.com/mcp", "baseline": "missing.toml"},
                 "baseline missing.toml is not a key of coordinator.baselines"),
                ({"target": "https://a.example.com/mcp", "credential": "staging"},
                 "credential staging is not in coordinator.credentials"),
                ({"target": "https://a.example.com/mcp", "regions": ["mars"]},
                 "region mars is not configured (coordinator.agents regions, or fleet.localRegion with fleet.localAgent): local"),
                ([{"target": "https://a.example.com/mcp"}, {"target": "https://a.example.com/mcp", "interval": "5m"}],
                 "https://a.example.com/mcp is scheduled twice"),
            ]:
                values = os.path.join(d, "v.yaml")
                with open(values, "w") as f:
                    yaml.safe_dump({"coordinator": {"checks": check if isinstance(check, list) else [check]}}, f)
                r = run(f"{tools}/helm", "template", "x", CHART, "-f", values, check=False)
                assert r.returncode != 0 and needle in r.stderr, f"{check}: exit {r.returncode}: {r.stderr}"
        return "6 refusals, each naming the fix"


    def the_chart_and_the_coordinator_agree_on_the_wait_against_the_deadline():
        # The chart writes probe.check_timeout and fleet.default_deadline both: the pairs the
        # coordinator refuses (config validate_wait) are refused at install, the rest render.
        cases = [
            ({"probe": {"checkTimeout": "30s"}}, "checkTimeout 30s is not shorter than coordinator.fleet.defaultDeadline 30s"),
            ({"probe": {"checkTimeout": "10s"}, "checks": [{"target": "https://a.example.com/mcp", "deadline": "8s"}]},
             "checkTimeout 10s is not shorter than its deadline 8s"),
            ({"probe": {"checkTimeout": "10s"}, "fleet": {"localAgent": False},
              "agents": [{"name": "eu", "region": "eu", "token": "tok-eu"}]}, None),
            ({"probe": {"checkTimeout": "4s"}, "checks": [{"target": "https://a.example.com/mcp", "deadline": "8s"}]}, None),
        ]
        with tempfile.TemporaryDirectory() as d:
            for coordinator, needle in cases:
                values = os.path.join(d, "v.yaml")
                with open(values, "w") as f:
                    yaml.safe_dump({"coordinator": coordinator}, f)
                r = run(f"{tools}/helm", "template", "x", CHART, "-f", values, check=False)
                if needle is None:
                    assert r.returncode == 0, f"{coordinator}: {r.stderr}"
                    config = os.path.join(d, "vantage.toml")
                    with open(config, "w") as f:
                        f.write(configmap_toml(r.stdout))
                    c = run(vantage, "serve", "--config", config, "--check", check=False)
                    assert c.returncode == 0, f"{coordinator}: the coordinator refuses what the chart rendered: {c.stderr}"
                else:
                    assert r.returncode != 0 and needle in r.stderr, f"{coordinator}: exit {r.returncode}: {r.stderr}"
        return f"{len(cases)} pairs, the chart's verdict the coordinator's"

    def a_region_gets_exactly_its_replicas_and_never_0():
        r = helm(agents("eu-west", "us-east"), "agents[0].replicas=3", "agent.replicas=2")
        assert r.returncode == 0, r.stderr
        assert replicas_by_region(r.stdout) == {"eu-west": 3, "us-east": 2}, r.stdout
        r = helm(agents("eu-west", "us-east"), "agents[0].replicas=1", "agent.replicas=4")
        assert replicas_by_region(r.stdout) == {"eu-west": 1, "us-east": 4}, r.stdout
        for sets, needle in [
            (["agents[0].replicas=0"], "at '/agents/0/replicas': minimum: got 0, want 1"),
            (["agent.replicas=0"], "at '/agent/replicas': minimum: got 0, want 1"),
            (["agents[1].replicas=11"], "at '/agents/1/replicas': maximum: got 11, want 10"),
        ]:
            r = helm(agents("eu-west", "us-east"), *sets)
            assert r.returncode != 0 and needle in r.stderr, f"{sets}: exit {r.returncode}: {r.stderr}"
        return "an explicit value kept (3 over a default of 2, 1 over 4); 0 and 11 refused by the schema, 1 to 10 as Terraform"

    def a_region_listed_twice_is_refused():
        r = helm(agents("eu-west", "us-east", "eu-west"))
        assert r.returncode != 0, "two Deployments with one name rendered"
        assert "agents[2]: region eu-west is listed twice (also agents[0]); one Deployment serves a region: keep one entry and give it more replicas" in r.stderr, r.stderr
        # Two regions whose object names are one once cut at 63 characters.
        long = agents("eu-west-aaaaaaaaaaaaaaaaaaaaaa1", "eu-west-aaaaaaaaaaaaaaaaaaaaaa2")
        r = helm({**long, "fullnameOverride": "abcdefghijklmnopqrstuvwxyzabcdefghij"})
        assert r.returncode != 0 and "get the same object name" in r.stderr and "shorten fullnameOverride" in r.stderr, r.stderr
        r = helm(agents("eu-west", "us-east"))
        assert r.returncode == 0 and sorted(replicas_by_region(r.stdout)) == ["eu-west", "us-east"], r.stderr
        return "a repeated region and two regions cut to one name refused, naming the entries and the fix"

    def the_chart_terraform_and_the_coordinator_agree_on_one_target_spelt_twice():
        # Each pair on a host of its own, so one Terraform plan judges every pair at once and
        # its message lists exactly the pairs it refuses.
        def on_host(t, k):
            return re.sub(r"(?i)(mcp)\.example\.com", lambda m: f"{m.group(1)}.p{k}.example.com", t)
        pairs = [(on_host(a, k), on_host(b, k)) for k, (a, b) in enumerate(TWICE)]
        coord, chart_ = {}, {}
        with tempfile.TemporaryDirectory() as d:
            config = os.path.join(d, "c.toml")
            for k, (a, b) in enumerate(pairs):
                with open(config, "w") as f:
                    f.write("[[checks]]\ntarget = %s\ninterval = \"1m\"\n[[checks]]\ntarget = %s\ninterval = \"1m\"\n" % (json.dumps(a), json.dumps(b)))
                c = run(vantage, "serve", "--config", config, "--check", check=False)
                assert c.returncode == 0 or "appears twice" in c.stderr, f"{a} {b}: {c.stderr}"
                coord[k] = c.returncode != 0
                h = helm({"coordinator": {"checks": [{"target": a}, {"target": b}]}})
                assert h.returncode == 0 or "coordinator.checks[1]: " in h.stderr, f"{a} {b}: {h.stderr}"
                chart_[k] = h.returncode != 0
                if chart_[k]:
                    said = ("is scheduled twice (also coordinator.checks[0])" if a == b
                            else f"is the same target as coordinator.checks[0] ({a})")
                    assert said in h.stderr and "keep one entry per target" in h.stderr, h.stderr
            tf = f"{tools}/terraform"
            env = {"TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1", "TF_DATA_DIR": os.path.join(d, ".terraform")}
            targets = [t for pair in pairs for t in pair]
            with open(os.path.join(d, "main.tf"), "w") as f:
                f.write(f"""module "plan" {{
  source               = "{os.path.join(os.path.dirname(os.path.dirname(CHART)), 'terraform/modules/plan')}"
  regions              = {{ "eu-west" = {{ cluster = "eu" }} }}
  coordinator_cluster  = "eu"
  coordinator_grpc_url = "https://vantage-grpc.example.com:50051"
  coordinator_tls_secret = "vantage-grpc-tls"
  checks               = [{", ".join("{ target = %s }" % json.dumps(t) for t in targets)}]
}}
output "eu" {{ value = module.plan.values_by_cluster["eu"] }}
""")
            run(tf, "init", "-backend=false", "-input=false", "-no-color", cwd=d, env=env)
            p = run(tf, "plan", "-input=false", "-no-color", cwd=d, env=env, check=False)
        said = " ".join(p.stdout.split() + p.stderr.split())
        assert p.returncode != 0 and "the coordinator refuses a target that appears twice" in said, said
        terraform = {k: f"checks[{2 * k + 1}] ({b}) is checks[{2 * k}] ({a})" in said for k, (a, b) in enumerate(pairs)}
        assert len(re.findall(r"checks\[\d+\] \(", said)) == 2 * sum(terraform.values()), said
        differ = [(pairs[k], coord[k], chart_[k], terraform[k]) for k in coord if not coord[k] == chart_[k] == terraform[k]]
        assert not differ, f"(pair, coordinator, chart, terraform) refused: {differ}"
        refused = sum(coord.values())
        assert refused == 10, f"{refused} pairs refused by the coordinator, expected 10: {coord}"
        return f"{len(pairs)} pairs, same verdict from the coordinator, the chart and Terraform; {refused} refused by all three"

    def coordinator_verdict(toml, start=False):
        """`vantage serve --check` on a config, or (start) `vantage serve` itself, for what only
        the start sees (two token files with one value); a config it accepts would listen on
        loopback port 0 and is stopped by its pid."""
        with tempfile.TemporaryDirectory() as d:
            config = os.path.join(d, "c.toml")
            for name, text in (("t1", "same-token-0123456789"), ("t2", "same-token-0123456789")):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            with open(config, "w") as f:
                f.write(toml.replace("@DIR@", d))
            if not start:
                return run(vantage, "serve", "--config", config, "--check", check=False)
            import subprocess
            p = subprocess.Popen([vantage, "serve", "--config", config], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            try:
                out, err = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
                raise AssertionError(f"vantage serve started on {toml!r}: the coordinator accepts it")
            return subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def the_chart_refuses_what_the_coordinator_refuses_at_start_in_its_words():
        # (chart values, the same setting in vantage.toml, the coordinator's words both must
        # say (None: both accept), the chart's value the message must name)
        loopback = '[server]\napi_listen = "127.0.0.1:0"\ngrpc_listen = "127.0.0.1:0"\n'
        two = [{"name": "eu-1", "region": "eu", "token": "tok-eu-0123456789"}, {"name": "us-1", "region": "us", "token": "tok-us-0123456789"}]
        cases = []
        for key, toml_key in [("allowNonGlobal", "allow_non_global"), ("assumeGlobal", "assume_global")]:
            for prefix, words in [("0.0.0.0/0", "0.0.0.0/0 covers every address, which switches the egress policy off"),
                                  ("::/0", "::/0 covers every address"),
                                  ("0.0.0.0/1", "0.0.0.0/1 covers more than a /8 of the IPv4 space"),
                                  ("0.0.0.0/7", "covers more than a /8"), ("::ffff:0:0/96", "covers more than a /8"),
                                  ("::ffff:0:0/103", "covers more than a /8"), ("::/6", "covers more than a /8"),
                                  ("::/7", "covers more than a /8"), ("0000:0000::/8", "covers more than a /8"),
                                  ("300.1.1.1/8", "invalid IP address syntax"), ("1.2.3.4/33", "invalid IP address syntax"),
                                  ("::1/129", "invalid IP address syntax"), ("1::2::3/64", "invalid IP address syntax"),
                                  ("12345::/16", "invalid IP address syntax"), ("1:2:3:4:5:6:7:8:9/128", "invalid IP address syntax"),
                                  ("::ffff:1.2.3.256/128", "invalid IP address syntax"),
                                  ("1:2:3:4:5:6:7:1.2.3.4/128", "invalid IP address syntax"),
                                  ("0.0.0.0/8", None), ("128.0.0.0/8", None), ("198.51.100.7/24", None), ("010.0.0.0/8", None),
                                  ("fc00::/7", None), ("::ffff:0:0/104", None), ("::ffff:198.51.100.0/120", None),
                                  ("1:2:3:4:5:6:7::/64", None), ("1:2:3:4:5:6:1.2.3.4/128", None), ("2001:db8::/32", None),
                                  # A bare address is that address alone, as `vantage check --allow-non-global` takes it.
                                  ("203.0.113.7", None), ("2001:db8::7", None), ("::ffff:198.51.100.7", None),
                                  ("300.1.1.1", "invalid IP address syntax"), ("1::2::3", "invalid IP address syntax")]:
                cases.append(({"probe": {key: [prefix]}}, f'[probe]\n{toml_key} = ["{prefix}"]\n', words, f"coordinator.probe.{key}[0]"))
        for timeout, words in [("0s", "0s is out of bounds"), ("11m", "11m is out of bounds"), ("10m1ms", "is out of bounds"), ("10m", None), ("1m30s", None)]:
            cases.append(({"probe": {"checkTimeout": timeout}, "fleet": {"defaultDeadline": "20m"}},
                          f'[probe]\ncheck_timeout = "{timeout}"\n[fleet]\ndefault_deadline = "20m"\n', words, "coordinator.probe.checkTimeout"))
        cases.append(({"fleet": {"localAgent": False}}, "[fleet]\nlocal_agent = false\n", "no region would run checks", "coordinator.fleet.localAgent"))
        for hb, timeout, words in [("30s", "15s", "must be shorter than fleet.agent_timeout"), ("5s", "0s", "must be shorter than fleet.agent_timeout"),
                                   ("15s", "15s", "must be shorter than fleet.agent_timeout"), ("14s", "15s", None), ("1m", "1m30s", None)]:
            cases.append(({"fleet": {"heartbeatInterval": hb, "agentTimeout": timeout}},
                          f'[fleet]\nheartbeat_interval = "{hb}"\nagent_timeout = "{timeout}"\n', words, "coordinator.fleet.heartbeatInterval"))
        agents_toml = '[[agents]]\nname = "eu-1"\nregion = "eu"\ntoken_file = "@DIR@/t1"\n[[agents]]\nname = "%s"\nregion = "us"\ntoken_file = "@DIR@/t2"\n'
        cases.append(({"agents": [two[0], {**two[1], "name": "eu-1"}]}, agents_toml % "eu-1", "`eu-1` appears twice", "coordinator.agents[1]"))
        # The same token in two files: only the start sees it (the chart renders a file per agent).
        cases.append(({"agents": [two[0], {**two[1], "token": two[0]["token"]}]}, loopback + agents_toml % "us-1",
                      "`us-1` (agents[1].token) has the same token as `eu-1` (agents[0])", "coordinator.agents[1]"))
        said = []
        for coordinator, toml, words, key in cases:
            h = helm({"coordinator": coordinator})
            c = coordinator_verdict(toml, start="@DIR@" in toml and "127.0.0.1:0" in toml)
            if words is None:
                assert h.returncode == 0 and c.returncode == 0, f"{coordinator}: chart exit {h.returncode}, coordinator exit {c.returncode}:\n{h.stderr}\n{c.stderr}"
                continue
            assert c.returncode != 0 and words in c.stderr, f"{coordinator}: the coordinator (exit {c.returncode}) does not say {words!r}: {c.stderr}"
            assert h.returncode != 0 and words in h.stderr and key in h.stderr, f"{coordinator}: the chart (exit {h.returncode}) does not say {words!r} naming {key}: {h.stderr}"
            assert "tok-" not in h.stderr, "a token in the chart's message"
            said.append(words)
        return f"{len(cases)} values, same verdict; {len(said)} refused by both in the coordinator's words, naming the value"

    def the_cap_on_checks_in_flight_is_rendered_and_0_refused():
        # server.max_checks_in_flight: rendered as given, accepted by the coordinator; 0 (which
        # the coordinator refuses: every on-demand check would be busy) refused by the schema.
        for given in [None, 1, 500]:
            h = helm({"coordinator": {} if given is None else {"maxChecksInFlight": given}})
            assert h.returncode == 0, h.stderr
            toml = configmap_toml(h.stdout)
            line = f"max_checks_in_flight = {32 if given is None else given}"
            assert line in toml, f"{line!r} not in:\n{toml}"
            c = coordinator_verdict(toml)
            assert c.returncode == 0, c.stderr
        h = helm({"coordinator": {"maxChecksInFlight": 0}})
        assert h.returncode != 0 and "/coordinator/maxChecksInFlight" in h.stderr, h.stderr
        c = coordinator_verdict('[server]\nmax_checks_in_flight = 0\n')
        assert c.returncode != 0 and "key `server.max_checks_in_flight`: must be greater than zero" in c.stderr, c.stderr
        return "default 32, 1 and 500 rendered and accepted; 0 refused by the schema and the coordinator"

    def durations_are_what_the_coordinator_reads():
        # Whole numbers with units, compound and in days, as the coordinator (humantime) reads
        # them; the chart's bounds (interval at least 1s, deadline above 0) the coordinator's.
        cases = [("1m30s", True), ("1h1m", True), ("1d", True), ("90s", True), ("1s500ms", True), ("1000ms", True),
                 ("0m1s", True), ("0s", False), ("500ms", False), ("999ms", False), ("0m999ms", False)]
        for v, ok in cases:
            h = helm({"coordinator": {"checks": [{"target": "https://a.example.com/mcp", "interval": v}]}})
            c = coordinator_verdict(f'[[checks]]\ntarget = "https://a.example.com/mcp"\ninterval = "{v}"\n')
            assert (h.returncode == 0) == ok == (c.returncode == 0), f"interval {v}: chart exit {h.returncode}, coordinator exit {c.returncode}:\n{h.stderr}\n{c.stderr}"
            if not ok:
                assert "must be at least 1s" in c.stderr and "must be at least 1s" in h.stderr and "coordinator.checks[0].interval" in h.stderr, h.stderr
        h = helm({"coordinator": {"checks": [{"target": "https://a.example.com/mcp", "interval": "2m", "deadline": "1m30s"}]}})
        assert h.returncode == 0 and 'deadline = "1m30s"' in configmap_toml(h.stdout), h.stderr
        h = helm({"coordinator": {"checks": [{"target": "https://a.example.com/mcp", "interval": "1m", "deadline": "1m0s1ms"}]}})
        assert h.returncode != 0 and "deadline 1m0s1ms is longer than its interval 1m" in h.stderr, h.stderr
        h = helm({"coordinator": {"checks": [{"target": "https://a.example.com/mcp", "deadline": "0s"}]}})
        assert h.returncode != 0 and "coordinator.checks[0].deadline 0s" in h.stderr and "must be greater than zero" in h.stderr, h.stderr
        # Fractions are refused by the schema (the pattern names the form); write 90s.
        h = helm({"coordinator": {"checks": [{"target": "https://a.example.com/mcp", "interval": "1.5m"}]}})
        assert h.returncode != 0 and "'1.5m' does not match pattern '^([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$'" in h.stderr, h.stderr
        with open(os.path.join(CHART, "values.schema.json")) as f:
            schema = json.load(f)
        interval = schema["properties"]["coordinator"]["properties"]["checks"]["items"]["properties"]["interval"]
        assert "1m30s" in interval["description"] and "not 1.5m" in interval["description"], interval
        h = helm({"coordinator": {"fleet": {"heartbeatInterval": "2s500ms", "agentTimeout": "1m30s"}, "probe": {"checkTimeout": "1s500ms"}}})
        assert h.returncode == 0, h.stderr
        return f"{len(cases)} intervals, same verdict; compound deadline, heartbeat and timeout render; 1.5m refused by the pattern"

    def labels_prometheus_sets_are_refused():
        for k in ["job", "instance"]:
            h = helm({"coordinator": {"checks": [{"target": "https://a.example.com/mcp", "labels": {"team": "x", k: "z"}}]}})
            assert h.returncode != 0 and f"coordinator.checks[0].labels.{k}" in h.stderr and f"exported_{k}" in h.stderr \
                and f"e.g. app_{k}" in h.stderr, h.stderr
        h = helm({"coordinator": {"checks": [{"target": "https://a.example.com/mcp", "labels": {"app_job": "x", "jobs": "z"}}]}})
        assert h.returncode == 0, h.stderr
        return "job and instance refused, naming exported_job and a fix; app_job and jobs render"

    def the_agents_refuse_what_vantage_agent_refuses_and_what_would_be_ignored():
        base = agents("eu-west")
        for sets, needle in [
            (["agent.caSecret=ca", "agents[0].coordinator=http://vantage-grpc.example.com:50051"],
             "agents[0] (eu-west): --ca-file is for a TLS coordinator, but --coordinator http://vantage-grpc.example.com:50051 is plain http://"),
            (["agents[0].existingSecret=vantage-agent-eu-west"], "agents[0] (eu-west): give existingSecret or token, not both"),
            (["agent.checkTimeout=0s"], "agent.checkTimeout 0s (--check-timeout): a duration must be greater than zero"),
            (["agent.checkTimeout=10m1s"], "agent.checkTimeout (--check-timeout): `10m1s` is longer than the limit of 10m"),
            (["agent.backoffMax=1h1s"], "agent.backoffMax (--backoff-max): `1h1s` is longer than the limit of 1h"),
            (["agent.backoffMin=1m"], "--backoff-min 1m is longer than --backoff-max 30s"),
            (["agent.allowNonGlobalMax[0]=100.64.0.0/33"], "agent.allowNonGlobalMax[0] (--allow-non-global-max): `100.64.0.0/33` is not a CIDR prefix"),
        ]:
            r = helm(base, *sets)
            assert r.returncode != 0 and needle in r.stderr, f"{sets}: exit {r.returncode}: {r.stderr}"
            assert "tok-" not in r.stderr
        for sets in [["agent.caSecret=ca"], ["agent.checkTimeout=1m30s", "agent.backoffMin=1s500ms"],
                     ["agent.allowNonGlobalMax[0]=none"], ["agent.allowNonGlobalMax[0]=0.0.0.0/0"]]:
            r = helm(base, *sets)
            assert r.returncode == 0, f"{sets}: {r.stderr}"
        r = helm({"coordinator": {"agentTokensSecret": "vantage-agent-tokens", "agents": [{"name": "eu-1", "region": "eu", "token": "tok-eu-0123456789"}]}})
        assert r.returncode != 0 and "coordinator.agents[0] (eu-1): give coordinator.agentTokensSecret or token, not both" in r.stderr, r.stderr
        assert "tok-" not in r.stderr
        # 0 passes `vantage serve --check`, but the coordinator's agent reaper panics on a
        # timer of period 0 and silent agents are never dropped.
        r = helm({"coordinator": {"fleet": {"heartbeatInterval": "0s"}}})
        assert r.returncode != 0 and "coordinator.fleet.heartbeatInterval 0s (fleet.heartbeat_interval): must be greater than zero" in r.stderr, r.stderr
        r = helm({"coordinator": {"enabled": False}})
        assert r.returncode != 0 and "nothing to install: coordinator.enabled is false and agents is empty" in r.stderr, r.stderr
        return "caSecret with http://, token beside existingSecret or agentTokensSecret, agent durations and ceilings, heartbeat 0, nothing to install"

    return [the_chart_refuses_what_the_coordinator_refuses_at_start_in_its_words, the_cap_on_checks_in_flight_is_rendered_and_0_refused, durations_are_what_the_coordinator_reads,
            labels_prometheus_sets_are_refused, the_agents_refuse_what_vantage_agent_refuses_and_what_would_be_ignored,
            values_the_coordinator_refuses_are_rejected_by_the_schema, the_schema_and_the_coordinator_agree_on_intervals_and_label_names, the_template_refuses_a_deadline_past_its_interval_and_unknown_names, the_chart_and_the_coordinator_agree_on_the_wait_against_the_deadline, a_region_gets_exactly_its_replicas_and_never_0, a_region_listed_twice_is_refused, the_chart_terraform_and_the_coordinator_agree_on_one_target_spelt_twice]
