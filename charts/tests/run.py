#!/usr/bin/env python3
"""Deploy tests, offline: the Helm chart, the Terraform module and the image definition.

- helm lint --strict and helm template for the coordinator-only, agent-only, all-in-one and
  every-option value sets; a bad value set must be rejected by values.schema.json with its
  message;
- what the chart and Terraform refuse (refusals.py): values the coordinator refuses at start
  (intervals under 1s, label names, a deadline past its interval, unknown baselines,
  credentials and regions, one target spelt twice) refused by the schema, the templates or
  the plan module, their verdicts equal to `vantage serve --check`'s; an agent region listed
  twice or with 0 replicas;
- every rendered manifest validated against the Kubernetes API schemas (kubernetes-validate)
  and clean under yamllint;
- assertions on the rendered output: agent args carry region and coordinator; the
  PrometheusRule's groups equal the repository's rules file; the security context; no
  Secret value inside a ConfigMap; the coordinator's rendered config passes
  `vantage serve --check`;
- terraform fmt -check -recursive; init -backend=false, validate and test on the
  provider-free plan module; its values rendered by the chart pass `vantage serve --check`;
  https:// agents get a TLS coordinator (coordinator_tls_secret, agent_ca_secret) and a scheme
  that disagrees with TLS is refused at plan; no Secret Terraform writes is one the chart renders;
- the Dockerfile, parsed with the official parser and checked against our rules;
- the operating conventions (conventions.py): stable selectors, NetworkPolicies as
  documented, the metrics port and both monitors, names, ServiceAccount, extra env, args
  and labels, the drain and the grace period, the target CAs.

Usage: run.py [--tools target/tools] [--vantage target/debug/vantage]
Prints one line per test and a closing `N passed, N failed` line.
"""

import argparse
import base64
import json
import os
import sys
import tempfile

from proc import run  # charts/tests is the script's directory

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SETS = ["coordinator", "agent", "all", "options"]
CHART = os.path.join(ROOT, "charts/vantage")
TESTS = os.path.join(ROOT, "charts/tests")
K8S_VERSION = "1.33.0"

results = []


def test(fn):
    results.append(fn)
    return fn


def render(tools, values):
    out = run(f"{tools}/helm", "template", "vantage", CHART, "--namespace", "vantage", "-f",
              os.path.join(TESTS, f"values-{values}.yaml")).stdout
    import yaml
    docs = [d for d in yaml.safe_load_all(out) if d]
    return out, docs


def kinds(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def containers(docs):
    for d in docs:
        if d.get("kind") == "Deployment":
            for c in d["spec"]["template"]["spec"]["containers"]:
                yield d, c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", default=os.path.join(ROOT, "target/tools"))
    ap.add_argument("--vantage", default=os.path.join(ROOT, "target/debug/vantage"))
    args = ap.parse_args()
    tools = os.path.abspath(args.tools)
    missing = [t for t in ["helm", "terraform", "venv/bin/python"] if not os.path.exists(os.path.join(tools, t))]
    if missing:
        print(f"deploy tools missing in {tools}: {', '.join(missing)}; run `bash .ci/install-deploy-tools`")
        return 1
    # Re-run inside the tools' virtual environment (kubernetes-validate, yamllint, dockerfile).
    venv_python = os.path.join(tools, "venv/bin/python")
    if os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(tools, "venv")):
        os.execv(venv_python, [venv_python, __file__, *sys.argv[1:]])

    import yaml
    import kubernetes_validate

    def serve_check(conf, cm):
        """`vantage serve --check` of the ConfigMap `cm` as mounted: each of its files written
        into the directory `conf`, the config its vantage.toml."""
        for name, text in cm["data"].items():
            with open(os.path.join(conf, name), "w") as f:
                f.write(text)
        return run(args.vantage, "serve", "--config", os.path.join(conf, "vantage.toml"), "--check", check=False)

    @test
    def helm_lint_strict_for_every_value_set():
        for v in SETS:
            run(f"{tools}/helm", "lint", "--strict", CHART, "-f", os.path.join(TESTS, f"values-{v}.yaml"))
        run(f"{tools}/helm", "lint", "--strict", CHART)
        return "coordinator, agent, all-in-one, every option, defaults"

    @test
    def bad_values_are_rejected_by_the_schema_with_their_message():
        r = run(f"{tools}/helm", "template", "x", CHART, "-f", os.path.join(TESTS, "values-bad.yaml"), check=False)
        assert r.returncode != 0, "the bad value set rendered"
        for needle in ["missing property 'coordinator'", "'EU West' does not match pattern", "/agent/checkTimeout"]:
            assert needle in r.stderr, f"{needle!r} not in: {r.stderr}"
        return "3 messages"

    @test
    def every_manifest_is_valid_kubernetes_and_clean_yaml():
        checked = skipped = 0
        for v in SETS:
            text, docs = render(tools, v)
            for d in docs:
                try:
                    kubernetes_validate.validate(d, K8S_VERSION, strict=True)
                    checked += 1
                except kubernetes_validate.SchemaNotFoundError:
                    assert d["apiVersion"].startswith("monitoring.coreos.com/"), d["kind"]
                    skipped += 1
                except kubernetes_validate.ValidationError as e:
                    raise AssertionError(f"{v}: {d['kind']}/{d['metadata']['name']}: {e.message}")
            with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
                f.write(text)
            r = run(os.path.join(tools, "venv/bin/yamllint"), "-d",
                    "{extends: default, rules: {line-length: disable, document-start: disable, comments: disable, comments-indentation: disable, truthy: {check-keys: false}, indentation: {indent-sequences: whatever}}}",
                    f.name, check=False)
            os.unlink(f.name)
            assert r.returncode == 0, f"yamllint ({v}):\n{r.stdout}"
        return f"{checked} manifests validated against Kubernetes {K8S_VERSION}, {skipped} operator CRs"

    @test
    def agents_carry_their_region_and_coordinator():
        _, docs = render(tools, "agent")
        deps = kinds(docs, "Deployment")
        assert len(deps) == 1 and not [d for d in deps if "coordinator" in d["metadata"]["name"]]
        args = deps[0]["spec"]["template"]["spec"]["containers"][0]["args"]
        assert args[args.index("--region") + 1] == "eu-west", args
        assert args[args.index("--coordinator") + 1] == "https://vantage-grpc.example.com:50051", args
        assert args[args.index("--token-file") + 1] == "/etc/vantage/agent/token"
        assert "--ca-file" in args
        ceiling = [args[i + 1] for i, a in enumerate(args) if a == "--allow-non-global-max"]
        assert ceiling == ["100.64.0.0/10", "fd00::/8"] and "--no-ipv6" not in args, args
        _, docs = render(tools, "all")
        no_v6 = {}
        for d in kinds(docs, "Deployment"):
            a = d["spec"]["template"]["spec"]["containers"][0].get("args", [])
            assert "--allow-non-global-max" not in a, d
            no_v6[d["metadata"]["name"]] = "--no-ipv6" in a
        assert [n for n, v in no_v6.items() if v] == [n for n in no_v6 if n.endswith("lab-a")], no_v6
        cm = next(d for d in kinds(docs, "ConfigMap") if d["metadata"]["name"].endswith("-config"))
        assert "ipv6 = false" in cm["data"]["vantage.toml"], cm["data"]["vantage.toml"]
        regions = sorted(d["metadata"]["labels"]["vantage.dev/region"] for d in kinds(docs, "Deployment") if "agent" in d["metadata"]["name"])
        assert regions == ["lab-a", "lab-b"], regions
        return "agent args and one Deployment per region"

    @test
    def the_prometheusrule_is_the_repository_rules_file():
        _, docs = render(tools, "coordinator")
        rules = kinds(docs, "PrometheusRule")
        assert len(rules) == 1
        with open(os.path.join(CHART, "files/vantage-rules.yaml")) as f:
            expected = yaml.safe_load(f)["groups"]
        assert rules[0]["spec"]["groups"] == expected
        return f"{sum(len(g['rules']) for g in expected)} rules, identical"

    @test
    def every_container_is_locked_down():
        n = 0
        for v in SETS:
            _, docs = render(tools, v)
            for d, c in containers(docs):
                sc = c["securityContext"]
                assert sc["runAsNonRoot"] is True and sc["allowPrivilegeEscalation"] is False, sc
                assert sc["readOnlyRootFilesystem"] is True and sc["capabilities"]["drop"] == ["ALL"], sc
                pod = d["spec"]["template"]["spec"]
                assert pod["securityContext"]["runAsNonRoot"] is True
                assert pod["automountServiceAccountToken"] is False
                probes = {c["livenessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["path"]}
                assert probes == {"/healthz", "/readyz"}, probes
                assert "resources" in c and c["resources"]["limits"]["memory"]
                n += 1
        return f"{n} containers: non-root, no escalation, read-only root, no capabilities, probes, limits"

    @test
    def no_secret_value_is_rendered_into_a_configmap():
        for v in SETS:
            _, docs = render(tools, v)
            secrets = []
            for s in kinds(docs, "Secret"):
                for val in (s.get("data") or {}).values():
                    secrets.append(base64.b64decode(val).decode())
            for cm in kinds(docs, "ConfigMap"):
                text = yaml.safe_dump(cm.get("data"))
                for s in secrets:
                    assert s not in text, f"{v}: a Secret value is in ConfigMap {cm['metadata']['name']}"
        _, docs = render(tools, "all")
        assert len(kinds(docs, "Secret")) >= 3, "the all-in-one set renders the token Secrets"
        return "tokens only in Secrets, mounted as files"

    @test
    def the_rendered_coordinator_config_is_valid():
        checked = 0
        for v, agents in [("coordinator", 3), ("all", 2), ("options", 1)]:
            _, docs = render(tools, v)
            cm = next(d for d in kinds(docs, "ConfigMap") if d["metadata"]["name"].endswith("-config"))
            # The whole ConfigMap as mounted: vantage.toml and the baselines beside it.
            with tempfile.TemporaryDirectory() as d:
                r = serve_check(d, cm)
            assert r.returncode == 0, f"{v}: {r.stderr}\n{cm['data']['vantage.toml']}"
            assert f"{agents} agent(s)" in r.stdout, f"{v}: {r.stdout}"
            checked += 1
        _, docs = render(tools, "coordinator")
        cm = next(d for d in kinds(docs, "ConfigMap") if d["metadata"]["name"].endswith("-config"))
        toml = cm["data"]["vantage.toml"]
        for line in ['deadline = "45s"', 'baseline = "prod.toml"', '"app_tier" = "gold"']:
            assert line in toml, f"{line!r} not rendered:\n{toml}"
        assert "[[accept]]" in cm["data"]["prod.toml"], cm["data"]
        return f"{checked} configs pass `vantage serve --check` (deadline, baseline file and labels included)"

    @test
    def notes_tell_how_to_run_a_first_check():
        r = run(f"{tools}/helm", "install", "vantage", CHART, "--dry-run=client", "-f", os.path.join(TESTS, "values-coordinator.yaml"), check=False)
        if r.returncode != 0:
            r = run(f"{tools}/helm", "install", "vantage", CHART, "--dry-run", "-f", os.path.join(TESTS, "values-coordinator.yaml"))
        assert "vantage check https://mcp.example.com/mcp --coordinator" in r.stdout, r.stdout[-800:]
        return "NOTES.txt"

    @test
    def terraform_fmt_validate_and_test():
        tf = f"{tools}/terraform"
        env = {"TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
        run(tf, "fmt", "-check", "-recursive", os.path.join(ROOT, "terraform"), env=env)
        plan = os.path.join(ROOT, "terraform/modules/plan")
        with tempfile.TemporaryDirectory() as data:
            env["TF_DATA_DIR"] = data
            run(tf, "init", "-backend=false", "-input=false", "-no-color", cwd=plan, env=env)
            run(tf, "validate", "-no-color", cwd=plan, env=env)
            version = run(tf, "version").stdout.split()[1].lstrip("v").split(".")
            if (int(version[0]), int(version[1])) < (1, 6):
                raise AssertionError(f"terraform {'.'.join(version)} has no `terraform test`; install 1.6 or newer")
            r = run(tf, "test", "-no-color", cwd=plan, env=env)
            lock = os.path.join(plan, ".terraform.lock.hcl")
            if os.path.exists(lock):
                os.unlink(lock)
        line = [ln for ln in r.stdout.splitlines() if "passed" in ln][-1]
        return f"fmt clean; plan module valid; {line.strip()}"

    @test
    def terraform_values_render_a_config_the_coordinator_accepts():
        # modules/plan -> the chart -> `vantage serve --check`: every check setting Terraform
        # passes is a key the chart knows and renders into a config the coordinator loads.
        tf = f"{tools}/terraform"
        baseline = ('[[accept]]\nendpoint = "https://auth.example.com/mcp"\nfinding = "transport.get"\n'
                    'severity = "medium"\nreason = "known, OPS-1"\nexpires = 2027-06-30\n')
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "main.tf"), "w") as f:
                f.write(f"""module "plan" {{
  source               = "{os.path.join(ROOT, 'terraform/modules/plan')}"
  regions              = {{ "eu-west" = {{ cluster = "eu" }}, "us-east" = {{ cluster = "us", replicas = 2 }} }}
  coordinator_cluster  = "eu"
  coordinator_grpc_url = "https://vantage-grpc.example.com:50051"
  coordinator_tls_secret = "vantage-grpc-tls"
  credentials          = ["prod"]
  baselines            = {{ "prod.toml" = {json.dumps(baseline)} }}
  checks = [
    {{ target = "https://mcp.example.com/mcp", interval = "90s", labels = {{ team = "platform" }} }},
    {{ target = "https://auth.example.com/mcp", interval = "5m", deadline = "45s", regions = ["eu-west"], credential = "prod", expect_auth = true, baseline = "prod.toml", labels = {{ app_team = "id" }} }},
  ]
}}
output "eu" {{ value = module.plan.values_by_cluster["eu"] }}
""")
            env = {"TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1", "TF_DATA_DIR": os.path.join(d, ".terraform")}
            run(tf, "init", "-backend=false", "-input=false", "-no-color", cwd=d, env=env)
            run(tf, "apply", "-auto-approve", "-input=false", "-no-color", cwd=d, env=env)
            values = run(tf, "output", "-raw", "eu", cwd=d, env=env).stdout
            with open(os.path.join(d, "values.yaml"), "w") as f:
                f.write(values)
            out = run(f"{tools}/helm", "template", "vantage", CHART, "-f", os.path.join(d, "values.yaml")).stdout
            cm = next(x for x in yaml.safe_load_all(out) if x and x.get("kind") == "ConfigMap" and x["metadata"]["name"].endswith("-config"))
            conf = os.path.join(d, "conf")
            os.mkdir(conf)
            r = serve_check(conf, cm)
        toml = cm["data"]["vantage.toml"]
        assert r.returncode == 0, f"{r.stderr}\n{toml}"
        assert "2 agent(s), 1 credential(s), 2 scheduled check(s)" in r.stdout, r.stdout
        for line in ['credential = "prod"', "expect_auth = true", 'deadline = "45s"', 'baseline = "prod.toml"',
                     'token_file = "/etc/vantage/credentials/prod/token"', '"app_team" = "id"']:
            assert line in toml, f"{line!r} not rendered:\n{toml}"
        return "credential, expect_auth, deadline, baseline and labels reach a config `vantage serve --check` accepts"

    def terraform_plan(d, body):
        """`terraform apply` (outputs only, no provider) of modules/plan with body's arguments
        beside regions eu-west (cluster eu), us-east (us) and the coordinator in eu."""
        tf = f"{tools}/terraform"
        with open(os.path.join(d, "main.tf"), "w") as f:
            f.write(f"""module "plan" {{
  source              = "{os.path.join(ROOT, 'terraform/modules/plan')}"
  regions             = {{ "eu-west" = {{ cluster = "eu" }}, "us-east" = {{ cluster = "us" }} }}
  coordinator_cluster = "eu"
{body}
}}
output "eu" {{ value = module.plan.values_by_cluster["eu"] }}
output "us" {{ value = module.plan.values_by_cluster["us"] }}
output "api_secret" {{ value = module.plan.api_secret }}
""")
        env = {"TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1", "TF_DATA_DIR": os.path.join(d, ".terraform")}
        if not os.path.exists(os.path.join(d, ".terraform")):
            run(tf, "init", "-backend=false", "-input=false", "-no-color", cwd=d, env=env)
        r = run(tf, "apply", "-auto-approve", "-input=false", "-no-color", cwd=d, env=env, check=False)
        if r.returncode != 0:
            return r, None
        return r, {k: run(tf, "output", "-raw", k, cwd=d, env=env).stdout for k in ["eu", "us", "api_secret"]}

    def helm_docs(d, values):
        with open(os.path.join(d, "values.yaml"), "w") as f:
            f.write(values)
        out = run(f"{tools}/helm", "template", "vantage", CHART, "-f", os.path.join(d, "values.yaml")).stdout
        return [x for x in yaml.safe_load_all(out) if x]

    @test
    def terraform_gives_https_agents_a_tls_coordinator_and_refuses_a_mismatch():
        # https:// agents and a coordinator without TLS never connect (every region without
        # an agent); the plan carries the TLS Secret and the agents' CA, and refuses a scheme
        # that disagrees with it, naming the variable that fixes it.
        url = 'coordinator_grpc_url = "https://vantage-grpc.example.com:50051"'
        with tempfile.TemporaryDirectory() as d:
            r, out = terraform_plan(d, f'{url}\n  coordinator_tls_secret = "vantage-grpc-tls"\n  agent_ca_secret = "vantage-grpc-ca"')
            assert out, r.stdout + r.stderr
            eu = helm_docs(d, out["eu"])
            cm = next(x for x in eu if x["kind"] == "ConfigMap" and x["metadata"]["name"].endswith("-config"))
            toml = cm["data"]["vantage.toml"]
            assert '[server.tls]\ncert_file = "/etc/vantage/tls/tls.crt"' in toml, toml
            coord = next(x for x in eu if x["kind"] == "Deployment" and x["metadata"]["name"].endswith("-coordinator"))
            vols = {v["name"]: v for v in coord["spec"]["template"]["spec"]["volumes"]}
            assert vols["tls"]["secret"]["secretName"] == "vantage-grpc-tls", vols
            conf = os.path.join(d, "conf")
            os.mkdir(conf)
            c = serve_check(conf, cm)
            assert c.returncode == 0, c.stderr
            for cluster in ["eu", "us"]:
                for dep in [x for x in helm_docs(d, out[cluster]) if x["kind"] == "Deployment" and "-agent-" in x["metadata"]["name"]]:
                    spec = dep["spec"]["template"]["spec"]
                    a = spec["containers"][0]["args"]
                    assert a[a.index("--coordinator") + 1].startswith("https://") and a[a.index("--ca-file") + 1] == "/etc/vantage/ca/ca.crt", a
                    assert {"name": "ca", "secret": {"secretName": "vantage-grpc-ca"}} in spec["volumes"], spec["volumes"]
        refused = 0
        for body, words in [
            (url, ["is https://, but the coordinator would listen in plain HTTP/2", "Set coordinator_tls_secret"]),
            ('coordinator_grpc_url = "http://vantage-grpc.example.com:50051"\n  coordinator_tls_secret = "vantage-grpc-tls"',
             ["is plain http://, but coordinator_tls_secret turns TLS on", "Use https://"]),
            ('coordinator_grpc_url = "http://vantage-grpc.example.com:50051"\n  agent_ca_secret = "vantage-grpc-ca"',
             ["agent_ca_secret is for a TLS coordinator", "use https:// with coordinator_tls_secret, or drop agent_ca_secret"]),
        ]:
            with tempfile.TemporaryDirectory() as d:
                r, out = terraform_plan(d, body)
            said = " ".join((r.stdout + r.stderr).split())
            assert out is None and all(w in said for w in words), f"{body}: {said}"
            refused += 1
        with tempfile.TemporaryDirectory() as d:
            r, out = terraform_plan(d, 'coordinator_grpc_url = "http://vantage-grpc.vantage.svc:50051"')
            assert out, r.stdout + r.stderr
            assert "tls" not in yaml.safe_load(out["eu"])["coordinator"] and "agent" not in yaml.safe_load(out["us"]), out
        return f"TLS Secret -> [server.tls] and agents' --ca-file, `vantage serve --check` valid; {refused} mismatches refused at plan, naming the fix; plain http:// renders without TLS"

    @test
    def terraform_secrets_never_take_a_name_the_chart_renders():
        # The root module's kubernetes_secret_v1 names (terraform/main.tf) against the Secrets
        # the chart renders from the plan's values, with and without the API token: one name
        # with two owners fails at apply ("already exists") when api_token is set or cleared.
        with open(os.path.join(ROOT, "terraform/main.tf")) as f:
            main = f.read()
        assert "name      = module.plan.api_secret" in main and "existingSecret = module.plan.api_secret" in main, \
            "the root module names the API Secret from module.plan.api_secret"
        with tempfile.TemporaryDirectory() as d:
            r, out = terraform_plan(d, 'coordinator_grpc_url = "http://vantage-grpc.vantage.svc:50051"\n  credentials = ["prod"]')
            assert out, r.stdout + r.stderr
            values = yaml.safe_load(out["eu"])
            ours = {out["api_secret"], values["coordinator"]["agentTokensSecret"], "vantage-agent-eu-west", "vantage-agent-us-east"}
            ours |= {c["secretName"] for c in values["coordinator"]["credentials"]}
            for token_set in [False, True]:
                v = dict(values)
                if token_set:
                    v["coordinator"] = {**values["coordinator"], "apiTokens": {"existingSecret": out["api_secret"]}}
                rendered = {x["metadata"]["name"] for x in helm_docs(d, yaml.safe_dump(v)) if x["kind"] == "Secret"}
                rendered |= {x["metadata"]["name"] for x in helm_docs(d, out["us"]) if x["kind"] == "Secret"}
                clash = ours & rendered
                assert not clash, f"api_token {'set' if token_set else 'empty'}: Terraform and the chart both own {clash}"
        return f"{len(ours)} Secrets Terraform writes, none rendered by the chart with or without the API token"

    @test
    def the_dockerfile_follows_our_rules():
        import dockerfile
        cmds = dockerfile.parse_file(os.path.join(ROOT, "Dockerfile"))
        froms = [c for c in cmds if c.cmd == "FROM"]
        assert len(froms) >= 2, "multi-stage"
        assert all(":" in c.value[0] and not c.value[0].endswith(":latest") for c in froms), "pinned base images"
        final = cmds[[i for i, c in enumerate(cmds) if c.cmd == "FROM"][-1]:]
        users = [c for c in final if c.cmd == "USER"]
        assert users and users[-1].value[0].split(":")[0] not in ("0", "root"), "the runtime stage runs as non-root"
        assert not [c for c in cmds if c.cmd == "HEALTHCHECK"], "no HEALTHCHECK: Kubernetes probes instead"
        labels = " ".join(" ".join(c.value) for c in final if c.cmd == "LABEL")
        for key in ["org.opencontainers.image.title", "org.opencontainers.image.version", "org.opencontainers.image.source"]:
            assert key in labels, key
        copied = " ".join(" ".join(c.value) for c in final if c.cmd == "COPY")
        assert "vantage-agent" in copied and "/out/vantage" in copied, "both binaries"
        build = " ".join(" ".join(c.value) for c in cmds if c.cmd == "RUN")
        assert "cargo build --release --locked --bin vantage --bin vantage-agent" in build
        return f"{len(froms)} stages, non-root, OCI labels, both binaries"

    import conventions
    import refusals
    results.extend(refusals.tests(tools, CHART, TESTS, args.vantage))
    results.extend(conventions.tests(tools, CHART, TESTS))

    passed = failed = 0
    for fn in results:
        name = fn.__name__.replace("_", " ")
        try:
            detail = fn()
            passed += 1
            print(f"ok   {name}: {detail}", flush=True)
        except Exception as e:  # noqa: BLE001 - report and go on
            failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
