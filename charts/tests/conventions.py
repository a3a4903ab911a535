"""Deploy tests of the chart's operating conventions (imported by run.py):

- selectors stable across a version bump, never carrying the chart or app version, and
  selecting their own pods;
- NetworkPolicies admitting exactly what charts/vantage/README.md documents, with /metrics
  on its own port reachable from the monitoring namespaces;
- the ServiceMonitor's authorization when /metrics requires the API token, and the agents'
  PodMonitor;
- prometheus-community conventions: nameOverride, fullnameOverride, serviceAccount,
  extraEnv, extraArgs, podLabels;
- terminationGracePeriodSeconds agreeing with each daemon's drain, and the target CAs
  (`--target-ca-file`, probe.ca_file) wired and documented.
"""

import os
import re
import shutil
import subprocess
import tempfile

import yaml


def tests(tools, chart, values_dir):
    """The test functions, each returning a one-line detail or raising."""

    def render(values, chart_dir=chart, sets=()):
        args = [f"{tools}/helm", "template", "vantage", chart_dir, "--namespace", "vantage",
                "-f", os.path.join(values_dir, f"values-{values}.yaml")]
        for s in sets:
            args += ["--set", s]
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert r.returncode == 0, r.stderr
        return [d for d in yaml.safe_load_all(r.stdout) if d]

    def of(docs, kind):
        return [d for d in docs if d["kind"] == kind]

    def selectors(docs):
        out = {}
        for d in docs:
            key = f"{d['kind']}/{d['metadata']['name']}"
            spec = d.get("spec") or {}
            if d["kind"] in ("Deployment", "PodDisruptionBudget", "ServiceMonitor", "PodMonitor"):
                out[key] = spec["selector"]["matchLabels"]
            elif d["kind"] == "Service":
                out[key] = spec["selector"]
            elif d["kind"] == "NetworkPolicy":
                out[key] = spec["podSelector"]["matchLabels"]
        return out

    def pods(docs):
        return {d["metadata"]["name"]: d["spec"]["template"] for d in of(docs, "Deployment")}

    def matches(selector, labels):
        return all(labels.get(k) == v for k, v in selector.items())

    def config(docs):
        cm = next(d for d in of(docs, "ConfigMap") if d["metadata"]["name"].endswith("-config"))
        return cm["data"]["vantage.toml"]

    def readme():
        with open(os.path.join(chart, "README.md")) as f:
            return f.read()

    def selectors_are_stable_across_a_version_bump_and_select_their_pods():
        checked = 0
        with tempfile.TemporaryDirectory() as tmp:
            bumped = os.path.join(tmp, "vantage")
            shutil.copytree(chart, bumped)
            path = os.path.join(bumped, "Chart.yaml")
            with open(path) as f:
                text = f.read()
            text = re.sub(r"(?m)^version: .*$", "version: 9.9.9", text)
            text = re.sub(r"(?m)^appVersion: .*$", 'appVersion: "9.9.9"', text)
            with open(path, "w") as f:
                f.write(text)
            for values in ["coordinator", "agent", "all", "options"]:
                before, after = render(values), render(values, chart_dir=bumped)
                assert of(after, "Deployment")[0]["metadata"]["labels"]["app.kubernetes.io/version"] == "9.9.9"
                a, b = selectors(before), selectors(after)
                assert a == b, f"{values}: selectors changed with the version:\n{a}\n{b}"
                for key, sel in a.items():
                    assert "helm.sh/chart" not in sel and "app.kubernetes.io/version" not in sel, f"{key}: {sel}"
                    checked += 1
                for name, tpl in pods(before).items():
                    dep = next(d for d in of(before, "Deployment") if d["metadata"]["name"] == name)
                    assert matches(dep["spec"]["selector"]["matchLabels"], tpl["metadata"]["labels"]), name
                coordinator_pods = [t["metadata"]["labels"] for n, t in pods(before).items() if n.endswith("-coordinator")]
                for svc in of(before, "Service"):
                    assert any(matches(svc["spec"]["selector"], p) for p in coordinator_pods), svc["metadata"]["name"]
        return f"{checked} selectors identical after 0.1.0 -> 9.9.9, each selecting its pods"

    def network_policies_admit_what_the_readme_documents():
        def ingress(docs, suffix):
            np = next(d for d in of(docs, "NetworkPolicy") if d["metadata"]["name"].endswith(suffix))
            return {rule["ports"][0]["port"]: rule.get("from") for rule in np["spec"]["ingress"]}

        this_namespace = [{"podSelector": {}}]

        def namespaces(*names):
            return [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": n}}} for n in names]

        # Defaults: the API from this namespace only, metrics from `monitoring`, gRPC from anywhere.
        rules = ingress(render("all"), "-coordinator")
        assert rules == {50051: None, 8080: this_namespace, 9090: namespaces("monitoring")}, rules
        assert ingress(render("all"), "-agents") == {9101: namespaces("monitoring")}
        # apiFromNamespaces set: those namespaces only.
        rules = ingress(render("coordinator"), "-coordinator")
        assert rules[8080] == namespaces("ci"), rules
        # metricsFromNamespaces set: the coordinator's metrics port and the agents' health port.
        docs = render("options")
        rules = ingress(docs, "-coordinator")
        assert rules[9191] == namespaces("monitoring", "observability") and rules[8080] == this_namespace, rules
        assert ingress(docs, "-agents") == {9101: namespaces("monitoring", "observability")}
        doc = readme()
        for claim in ["empty: this namespace's pods only", "metricsFromNamespaces", "gRPC from anywhere"]:
            assert claim in doc, f"the chart README does not say {claim!r}"
        return "API, metrics and gRPC ingress as documented, defaults and overrides"

    def metrics_have_their_own_port_and_monitors_scrape_it():
        docs = render("options")
        coordinator = next(d for d in of(docs, "Deployment") if d["metadata"]["name"].endswith("-coordinator"))
        c = coordinator["spec"]["template"]["spec"]["containers"][0]
        ports = {p["name"]: p["containerPort"] for p in c["ports"]}
        assert ports["metrics"] == 9191 and ports["api"] == 8080, ports
        assert c["readinessProbe"]["httpGet"]["port"] == "metrics"
        assert 'metrics_listen = "0.0.0.0:9191"' in config(docs)
        api = next(s for s in of(docs, "Service") if s["metadata"]["name"].endswith("-api"))
        assert {p["name"]: p["port"] for p in api["spec"]["ports"]}["metrics"] == 9191
        sm = of(docs, "ServiceMonitor")[0]
        assert sm["spec"]["endpoints"][0]["port"] == "metrics"
        assert matches(sm["spec"]["selector"]["matchLabels"], api["metadata"]["labels"])
        grpc = next(s for s in of(docs, "Service") if s["metadata"]["name"].endswith("-grpc"))
        assert not matches(sm["spec"]["selector"]["matchLabels"], grpc["metadata"]["labels"]), "only the API Service"
        return "metrics port 9191 in container, Service, config, probes and ServiceMonitor"

    def servicemonitor_sends_the_api_token_when_metrics_require_auth():
        sm = of(render("options"), "ServiceMonitor")[0]
        auth = sm["spec"]["endpoints"][0].get("authorization")
        assert auth == {"type": "Bearer", "credentials": {"name": "vantage-api", "key": "api-token-0"}}, auth
        sm = of(render("coordinator"), "ServiceMonitor")[0]
        assert "authorization" not in sm["spec"]["endpoints"][0], "no token when /metrics is open"
        docs = render("coordinator", sets=["coordinator.metricsRequireAuth=true", "coordinator.apiTokens.existingSecret=",
                                           "fullnameOverride=mon"])
        auth = of(docs, "ServiceMonitor")[0]["spec"]["endpoints"][0]["authorization"]
        assert auth["credentials"]["name"] == "mon-api", "the chart's own generated Secret"
        return "Bearer from the API Secret, only with metricsRequireAuth"

    def no_annotation_scrape_of_a_coordinator_whose_metrics_need_a_token():
        # An annotation scrape sends no token: with metricsRequireAuth it would get 401 and
        # VantageCoordinatorDown would fire while the coordinator runs fine.
        def scrape(docs):
            return {n: {k: v for k, v in (t["metadata"].get("annotations") or {}).items() if k.startswith("prometheus.io/")}
                    for n, t in pods(docs).items()}
        open_ = scrape(render("all"))
        assert all(a.get("prometheus.io/scrape") == "true" for a in open_.values()) and len(open_) == 3, open_
        closed = scrape(render("all", sets=["coordinator.metricsRequireAuth=true"]))
        coordinator = [n for n in closed if n.endswith("-coordinator")]
        assert coordinator and closed[coordinator[0]] == {}, closed
        assert all(a.get("prometheus.io/scrape") == "true" for n, a in closed.items() if n not in coordinator), closed
        assert "metricsRequireAuth" in readme() and "no `prometheus.io/*` annotations" in readme()
        notes = subprocess.run([f"{tools}/helm", "install", "vantage", chart, "--dry-run=client", "--set", "coordinator.metricsRequireAuth=true"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert notes.returncode == 0 and "with metrics.serviceMonitor.enabled=true" in notes.stdout, notes.stdout[-600:] + notes.stderr
        notes = subprocess.run([f"{tools}/helm", "install", "vantage", chart, "--dry-run=client", "--set", "coordinator.metricsRequireAuth=true",
                                "--set", "metrics.serviceMonitor.enabled=true"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert notes.returncode == 0 and "with metrics.serviceMonitor.enabled=true" not in notes.stdout, notes.stdout[-600:] + notes.stderr
        return "coordinator pod annotations dropped with metricsRequireAuth (the agents keep theirs), documented, NOTES say how to scrape it"

    def agents_get_a_podmonitor():
        docs = render("options")
        pm = of(docs, "PodMonitor")
        assert len(pm) == 1, [d["kind"] for d in docs]
        endpoint = pm[0]["spec"]["podMetricsEndpoints"][0]
        assert endpoint["port"] == "health" and endpoint["path"] == "/metrics", endpoint
        agent_pods = [t for n, t in pods(docs).items() if "-agent-" in n]
        assert agent_pods and all(matches(pm[0]["spec"]["selector"]["matchLabels"], t["metadata"]["labels"]) for t in agent_pods)
        assert not any(matches(pm[0]["spec"]["selector"]["matchLabels"], t["metadata"]["labels"])
                       for n, t in pods(docs).items() if n.endswith("-coordinator"))
        assert not of(render("agent"), "PodMonitor"), "off by default"
        return "PodMonitor on the agents' health port, agents only"

    def prometheus_community_conventions_are_honoured():
        docs = render("options")
        names = [d["metadata"]["name"] for d in docs]
        assert all(n.startswith("vantage-probe") or n == "vantage-sa" for n in names), names
        assert all(d["metadata"]["labels"]["app.kubernetes.io/name"] == "probe" for d in docs if "labels" in d["metadata"])
        sa = of(docs, "ServiceAccount")
        assert len(sa) == 1 and sa[0]["metadata"]["name"] == "vantage-sa" and sa[0]["automountServiceAccountToken"] is False
        assert sa[0]["metadata"]["annotations"] == {"example.com/role": "probe"}
        for name, tpl in pods(docs).items():
            spec = tpl["spec"]
            assert spec["serviceAccountName"] == "vantage-sa" and spec["automountServiceAccountToken"] is False, name
            labels = tpl["metadata"]["labels"]
            assert labels["team"] == "platform", labels
            assert labels["app.kubernetes.io/name"] == "probe", "the chart's labels win over podLabels"
            c = spec["containers"][0]
            env = {e["name"]: e.get("value") for e in c.get("env", [])}
            if name.endswith("-coordinator"):
                assert env == {"VANTAGE_LOG": "debug"} and c["args"][-2:] == ["--log-format", "json"], c
            else:
                assert env == {"VANTAGE_LOG_FORMAT": "json"} and c["args"][-2:] == ["--id", "eu-agent"], c
        docs = render("all", sets=["fullnameOverride=lab", "serviceAccount.create=false"])
        assert all(d["metadata"]["name"].startswith("lab-") or d["metadata"]["name"] == "lab" for d in docs), [d["metadata"]["name"] for d in docs]
        assert not of(docs, "ServiceAccount")
        assert all(t["spec"]["serviceAccountName"] == "default" for t in pods(docs).values())
        return "nameOverride, fullnameOverride, serviceAccount, extraEnv, extraArgs, podLabels"

    def termination_grace_agrees_with_each_drain():
        checked = 0
        for values in ["all", "options"]:
            docs = render(values)
            for name, tpl in pods(docs).items():
                spec = tpl["spec"]
                if name.endswith("-coordinator"):
                    drain = int(re.search(r'drain_timeout = "(\d+)s"', config(docs)).group(1))
                else:
                    args = spec["containers"][0]["args"]
                    drain = int(args[args.index("--drain-timeout") + 1].rstrip("s"))
                grace = spec["terminationGracePeriodSeconds"]
                assert grace == drain + 10, f"{values} {name}: grace {grace}, drain {drain}"
                checked += 1
        docs = render("options")
        assert 'drain_timeout = "45s"' in config(docs)
        return f"{checked} pods: terminationGracePeriodSeconds = drain + 10"

    def target_cas_are_wired_and_documented():
        docs = render("options")
        for name, tpl in pods(docs).items():
            c = tpl["spec"]["containers"][0]
            mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
            volumes = {v["name"]: v for v in tpl["spec"]["volumes"]}
            assert volumes[mounts["/etc/vantage/target-ca"]]["secret"]["secretName"] == "vantage-lab-ca", name
            if name.endswith("-coordinator"):
                assert 'ca_file = "/etc/vantage/target-ca/ca.crt"' in config(docs)
            else:
                args = c["args"]
                assert args[args.index("--target-ca-file") + 1] == "/etc/vantage/target-ca/ca.crt", args
                assert "--ca-file" not in args, "the coordinator CA is a different flag"
        assert "--target-ca-file" in readme() and "targetCaSecret" in readme()
        return "--target-ca-file and probe.ca_file from their Secrets, documented"

    return [
        selectors_are_stable_across_a_version_bump_and_select_their_pods,
        network_policies_admit_what_the_readme_documents,
        metrics_have_their_own_port_and_monitors_scrape_it,
        servicemonitor_sends_the_api_token_when_metrics_require_auth,
        no_annotation_scrape_of_a_coordinator_whose_metrics_need_a_token,
        agents_get_a_podmonitor,
        prometheus_community_conventions_are_honoured,
        termination_grace_agrees_with_each_drain,
        target_cas_are_wired_and_documented,
    ]
