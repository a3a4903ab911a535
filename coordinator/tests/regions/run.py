#!/usr/bin/env python3
"""Regions on one machine: the multi-region end-to-end suite.

Builds a small internet of network namespaces (a bridge in a namespace of its own with no
uplink and no default route anywhere), runs one dnsmasq per DNS view, a real MCP server from
the official TypeScript SDK v2 behind nginx with TLS from a lab CA, the real `vantage serve`
coordinator and three `vantage-agent`s (eu, us, ap), then plays the scenarios and asserts
each merged report's findings, scopes and regions. Everything it creates is removed at the
end, also on failure or interruption; it ends only processes it started, by their pid.

Address plan (../shared/design.md): target 198.51.100.0/24 and 2001:db8:b::/64 ("public",
declared with assume_global), 100.64.0.0/10 (internal), coordinator and regions in
203.0.113.0/24 and 2001:db8:a::/64, DNS servers in 198.18.0.0/15.

Usage: run.py [--bin-dir target/debug]     (root; prints one line per scenario and a
closing `N passed, N failed` line; exit 1 on any failure)
"""

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TAG = secrets.token_hex(2)
NS = {n: f"vt{TAG}-{n}" for n in ["br", "dns", "target", "coord", "eu", "us", "ap"]}
REGIONS = ["eu", "us", "ap"]
ADDR = {
    "coord": "203.0.113.2",
    "eu": "203.0.113.11",
    "us": "203.0.113.12",
    "ap": "203.0.113.13",
    "dns": ["198.18.0.1", "198.18.0.2", "198.18.0.3"],
    "target": ["198.51.100.10", "198.51.100.20", "100.64.0.10"],
}
V6 = {"target": "2001:db8:b::10", "eu": "2001:db8:a::11", "us": "2001:db8:a::12", "ap": "2001:db8:a::13"}
ROUTES4 = ["198.51.100.0/24", "100.64.0.0/10", "203.0.113.0/24", "198.18.0.0/15"]
ROUTES6 = ["2001:db8:a::/64", "2001:db8:b::/64"]
NAMES = ["healthy", "split", "nx", "v6only", "redirect", "badedge", "divergent", "stale", "www"]

started = []  # (name, Popen) we started, ended by pid
work = None


def log(msg):
    print(msg, flush=True)


def sh(*args, check=True, ns=None, quiet=False):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stdout.strip()}")
    return r.stdout


def spawn(name, args, ns=None, env=None):
    path = os.path.join(work, f"{name}.log")
    out = open(path, "w")
    cmd = (["ip", "netns", "exec", ns] if ns else []) + args
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         env={**os.environ, **(env or {})})
    started.append((name, p))
    return p


def stop(name):
    for n, p in started:
        if n == name and p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def cleanup():
    for _, p in reversed(started):
        if p.poll() is None:
            p.terminate()
    deadline = time.time() + 5
    for _, p in started:
        try:
            p.wait(max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for ns in NS.values():
        subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)
        shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
    if work and not os.environ.get("VANTAGE_KEEP_LAB"):
        shutil.rmtree(work, ignore_errors=True)


def preflight():
    problems = []
    if os.geteuid() != 0:
        problems.append("it must run as root (network namespaces, iptables)")
    for tool in ["ip", "dnsmasq", "nginx", "iptables", "openssl", "node"]:
        if not shutil.which(tool):
            problems.append(f"`{tool}` is missing (apt-get install iproute2 dnsmasq-base nginx-light iptables openssl; Node.js 20)")
    if not problems:
        probe = f"vt{TAG}-probe"
        r = subprocess.run(["ip", "netns", "add", probe], stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            problems.append(f"`ip netns add` does not work here: {r.stderr.strip()}")
        else:
            subprocess.run(["ip", "netns", "del", probe])
    return problems


def build_network():
    for ns in NS.values():
        sh("ip", "netns", "add", ns)
        sh("ip", "link", "set", "lo", "up", ns=ns)
    br = NS["br"]
    sh("ip", "link", "add", "br0", "type", "bridge", ns=br)
    sh("ip", "link", "set", "br0", "up", ns=br)
    for host in ["dns", "target", "coord", "eu", "us", "ap"]:
        inner, outer = f"v{TAG}{host[:3]}", f"b{TAG}{host[:3]}"
        sh("ip", "link", "add", inner, "type", "veth", "peer", "name", outer)
        sh("ip", "link", "set", inner, "netns", NS[host])
        sh("ip", "link", "set", outer, "netns", br)
        sh("ip", "link", "set", outer, "master", "br0", ns=br)
        sh("ip", "link", "set", outer, "up", ns=br)
        ns = NS[host]
        addrs = ADDR[host] if isinstance(ADDR[host], list) else [ADDR[host]]
        for a in addrs:
            sh("ip", "addr", "add", f"{a}/32", "dev", inner, ns=ns)
        if host in V6:
            sh("ip", "-6", "addr", "add", f"{V6[host]}/128", "dev", inner, "nodad", ns=ns)
        sh("ip", "link", "set", inner, "up", ns=ns)
        # On-link routes to the lab prefixes only: no default route anywhere.
        for r in ROUTES4:
            sh("ip", "route", "add", r, "dev", inner, ns=ns)
        for r in ROUTES6:
            sh("ip", "-6", "route", "add", r, "dev", inner, ns=ns)
        routes = sh("ip", "route", "show", "default", ns=ns) + sh("ip", "-6", "route", "show", "default", ns=ns)
        assert routes.strip() == "", f"{ns} has a default route: {routes}"


def dns_views():
    target, second, internal = ADDR["target"]
    views = {
        "eu": {"healthy": target, "split": target, "nx": target, "divergent": target, "stale": target},
        "us": {"healthy": target, "split": target, "nx": target, "divergent": target, "stale": target},
        "ap": {"healthy": target, "split": internal, "nx": None, "divergent": second, "stale": second},
    }
    for i, region in enumerate(REGIONS):
        args = ["dnsmasq", "--keep-in-foreground", "--conf-file=/dev/null", "--no-resolv", "--no-hosts",
                "--bind-interfaces", f"--listen-address={ADDR['dns'][i]}", "--port=53", "--local=/lab.test/",
                "--user=root", "--log-facility=-", f"--pid-file={work}/dnsmasq-{region}.pid"]
        # --host-record, not --address: dnsmasq answers the other family of an --address
        # name NXDOMAIN (a zone that says the name does not exist while it has records, which
        # dns.resolve fails); a host record's other family is NOERROR without data.
        for name, ip in views[region].items():
            if ip:
                args.append(f"--host-record={name}.lab.test,{ip}")
        for name in ["redirect", "badedge", "www"]:
            args.append(f"--host-record={name}.lab.test,{target}")
        args.append(f"--host-record=v6only.lab.test,{V6['target']}")
        spawn(f"dnsmasq-{region}", args, ns=NS["dns"])
        os.makedirs(f"/etc/netns/{NS[region]}", exist_ok=True)
        with open(f"/etc/netns/{NS[region]}/resolv.conf", "w") as f:
            f.write(f"nameserver {ADDR['dns'][i]}\n")


def lab_ca():
    ca_key, ca = f"{work}/ca.key", f"{work}/ca.pem"
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "90",
       "-subj", "/CN=Vantage Lab CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    san = ",".join(f"DNS:{n}.lab.test" for n in NAMES)
    sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{work}/edge.key", "-out", f"{work}/edge.csr",
       "-subj", "/CN=lab.test")
    with open(f"{work}/ext.cnf", "w") as f:
        f.write(f"subjectAltName={san}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    sh("openssl", "x509", "-req", "-in", f"{work}/edge.csr", "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
       "-out", f"{work}/edge.pem", "-days", "90", "-extfile", f"{work}/ext.cnf")
    return ca


def target_services():
    peers = os.path.join(ROOT, "coordinator/tests/peers/ts-v2")
    if not os.path.isdir(os.path.join(peers, "node_modules/@modelcontextprotocol/server")):
        raise RuntimeError("the TypeScript SDK v2 peer is not installed; run `bash .ci/install-peers`")
    # The backend (the SDK's paginated list handlers), and an older one a stale edge still
    # routes to in one region: another tool list.
    spawn("mcp-server", ["node", os.path.join(peers, "server.mjs"), "3000", "dual", "paged"], ns=NS["target"])
    spawn("mcp-server-old", ["node", os.path.join(peers, "server.mjs"), "3001", "dual", "paged", "old"], ns=NS["target"])
    public, second, internal = ADDR["target"]
    common = f"""
        ssl_certificate {work}/edge.pem; ssl_certificate_key {work}/edge.key;
        location /mcp {{
            proxy_pass http://127.0.0.1:3000; proxy_http_version 1.1;
            proxy_set_header Connection ""; proxy_buffering off;
        }}"""
    conf = f"""
user root; worker_processes 1; pid {work}/nginx.pid; error_log {work}/nginx-error.log;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {work}/nginx-body; proxy_temp_path {work}/nginx-proxy;
    fastcgi_temp_path {work}/nginx-fcgi; uwsgi_temp_path {work}/nginx-uwsgi; scgi_temp_path {work}/nginx-scgi;
    server {{ listen {public}:443 ssl default_server; listen {internal}:443 ssl; listen [{V6['target']}]:443 ssl;
             server_name healthy.lab.test split.lab.test nx.lab.test v6only.lab.test divergent.lab.test stale.lab.test; {common} }}
    server {{ listen {public}:443 ssl; server_name redirect.lab.test;
             ssl_certificate {work}/edge.pem; ssl_certificate_key {work}/edge.key;
             location / {{ return 308 https://www.lab.test$request_uri; }} }}
    server {{ listen {public}:443 ssl; server_name badedge.lab.test;
             ssl_certificate {work}/edge.pem; ssl_certificate_key {work}/edge.key;
             location /mcp {{
                 default_type text/html;
                 if ($request_method = GET) {{ return 200 "<!doctype html><h1>Welcome to the gateway</h1>"; }}
                 proxy_pass http://127.0.0.1:3000; proxy_http_version 1.1; proxy_set_header Mcp-Method "";
             }} }}
    # The second edge one region reaches (its DNS view differs): answers GET with a page.
    server {{ listen {second}:443 ssl; server_name divergent.lab.test;
             ssl_certificate {work}/edge.pem; ssl_certificate_key {work}/edge.key;
             location /mcp {{
                 default_type text/html;
                 if ($request_method = GET) {{ return 200 "<!doctype html><h1>CDN edge</h1>"; }}
                 proxy_pass http://127.0.0.1:3000; proxy_http_version 1.1;
             }} }}
    # A stale edge the same region reaches for stale.lab.test: it still routes to the old backend.
    server {{ listen {second}:443 ssl; server_name stale.lab.test;
             ssl_certificate {work}/edge.pem; ssl_certificate_key {work}/edge.key;
             location /mcp {{
                 proxy_pass http://127.0.0.1:3001; proxy_http_version 1.1;
                 proxy_set_header Connection ""; proxy_buffering off;
             }} }}
}}
"""
    with open(f"{work}/nginx.conf", "w") as f:
        f.write(conf)
    spawn("nginx", ["nginx", "-c", f"{work}/nginx.conf", "-g", "daemon off;"], ns=NS["target"])


def wait_backends(within=30):
    """Both MCP backends answer (anything at all) on their ports inside the target namespace."""
    deadline = time.time() + within
    for port in (3000, 3001):
        while True:
            code = sh("curl", "-s", "-o", "/dev/null", "-m", "2", "-w", "%{http_code}", f"http://127.0.0.1:{port}/mcp",
                      ns=NS["target"], check=False).strip()
            if code not in ("", "000"):
                break
            if time.time() > deadline:
                raise RuntimeError(f"the MCP backend on port {port} did not start within {within}s")
            time.sleep(0.2)


def coordinator(bin_dir):
    tokens = {r: secrets.token_hex(16) for r in REGIONS}
    api_token = secrets.token_hex(16)
    agents = "".join(f'[[agents]]\nname = "{r}-1"\nregion = "{r}"\ntoken_env = "T_{r.upper()}"\n' for r in REGIONS)
    with open(f"{work}/coordinator.toml", "w") as f:
        f.write(f"""[server]
api_listen = "127.0.0.1:8080"
grpc_listen = "{ADDR['coord']}:50051"
api_tokens = [{{ token_env = "T_API" }}]
[fleet]
local_agent = false
heartbeat_interval = "1s"
agent_timeout = "5s"
default_deadline = "20s"
[probe]
check_timeout = "2s"
assume_global = ["198.51.100.0/24", "2001:db8:b::/64"]
{agents}""")
    env = {"T_API": api_token, **{f"T_{r.upper()}": t for r, t in tokens.items()}}
    spawn("coordinator", [f"{bin_dir}/vantage", "serve", "--config", f"{work}/coordinator.toml"], ns=NS["coord"], env=env)
    return api_token, tokens


def start_agent(bin_dir, region, token, ca):
    spawn(f"agent-{region}", [f"{bin_dir}/vantage-agent", "--coordinator", f"http://{ADDR['coord']}:50051",
                              "--region", region, "--listen", "127.0.0.1:9101", "--target-ca-file", ca,
                              "--check-timeout", "2s", "--backoff-min", "100ms", "--backoff-max", "1s"],
          ns=NS[region], env={"VANTAGE_AGENT_TOKEN": token})


def api(api_token, path, body=None):
    """Call the coordinator's API from inside its namespace."""
    args = ["curl", "-s", "-m", "40", "-H", f"Authorization: Bearer {api_token}", f"http://127.0.0.1:8080{path}"]
    if body is not None:
        args += ["-H", "Content-Type: application/json", "-d", json.dumps(body)]
    out = sh(*args, ns=NS["coord"], check=False)
    return json.loads(out) if out.strip().startswith(("{", "[")) else {"raw": out}


def wait_agents(api_token, n, within=30):
    deadline = time.time() + within
    while time.time() < deadline:
        got = api(api_token, "/v1/agents").get("agents", [])
        if len(got) == n:
            return
        time.sleep(0.2)
    raise RuntimeError(f"{n} agents did not register within {within}s; coordinator log:\n" + open(f"{work}/coordinator.log").read()[-2000:])


_validator = None


def validate_report(report):
    """Every report validates against the shipped JSON Schema (when jsonschema is installed:
    .ci/install-deploy-tools puts it in target/tools/venv, which .ci/test runs this with)."""
    global _validator
    try:
        import jsonschema
    except ImportError:
        if os.environ.get("CI"):
            raise AssertionError("jsonschema is missing: run under target/tools/venv/bin/python")
        return
    if _validator is None:
        with open(os.path.join(ROOT, "coordinator/schema/report.v1.json")) as f:
            _validator = jsonschema.Draft202012Validator(json.load(f))
    errors = [f"{e.message} at {list(e.path)}" for e in _validator.iter_errors(report)]
    assert not errors, f"the report does not match the schema: {errors[:3]}"


def check(api_token, name):
    report = api(api_token, "/v1/checks?wait=60s", {"target": f"https://{name}.lab.test/mcp"})
    if "findings" in report:
        validate_report(report)
    return report


def above_info(report):
    return sorted((f["id"], f["severity"], f["scope"], tuple(f["regions"]))
                  for f in report.get("findings", []) if f["severity"] != "info")


def region(report, name):
    return next(r for r in report["regions"] if r["region"] == name)


def outcome(report, reg, check_id):
    return next(c for c in region(report, reg)["checks"] if c["id"] == check_id)


ALL = ("ap", "eu", "us")


def scenarios(bin_dir, api_token, tokens, ca):
    def healthy(r):
        assert above_info(r) == [], above_info(r)
        assert r["decision"] == "pass", r["reason"]
        assert sorted((x["region"], x["status"]) for x in r["regions"]) == [(g, "complete") for g in ALL]
        return "pass in ap, eu, us"

    def split(r):
        # checks.md 4.1: ap refused the internal address by policy, so it did not observe the
        # target: probe.policy-refused names why (it was a silent skip before issue 12).
        assert above_info(r) == [("dns.non-global-address", "high", "regional", ("ap",)),
                                 ("dns.split-horizon", "high", "regional", ("ap",)),
                                 ("probe.policy-refused", "medium", "regional", ("ap",))], above_info(r)
        c = outcome(r, "ap", "net.connect")
        assert c["outcome"] == "unknown" and c.get("cause") == "policy-refused", c
        assert "refused by egress policy: 100.64.0.10 is shared address space" in c["observed"], c
        assert region(r, "ap")["dns"]["a"] == ["100.64.0.10"]
        return "dns.split-horizon + dns.non-global-address + probe.policy-refused in ap; ap never connected to 100.64.0.10"

    def nx(r):
        assert above_info(r) == [("dns.split-horizon", "high", "regional", ("ap",))], above_info(r)
        assert region(r, "ap")["dns"]["rcode"] == "NXDOMAIN"
        return "dns.split-horizon in ap (NXDOMAIN)"

    def v6only(r):
        assert above_info(r) == [("dns.no-a-record", "high", "global", ALL)], above_info(r)
        assert outcome(r, "eu", "net.connect")["outcome"] == "pass"
        return "dns.no-a-record, global; IPv6 connects"

    def egress(word):
        def f(r):
            assert above_info(r) == [("egress.blocked", "high", "regional", ("us",))], above_info(r)
            ev = next(x for x in r["findings"] if x["id"] == "egress.blocked")["evidence"]
            assert any(word in e for e in ev), ev
            return f"egress.blocked in us, evidence {word!r}"
        return f

    def redirect(r):
        assert above_info(r) == [("redirect.cross-host", "high", "global", ALL)], above_info(r)
        return "redirect.cross-host, global"

    def badedge(r):
        found = above_info(r)
        ids = {f[0] for f in found}
        assert {"transport.get", "discover.shape"} <= ids, found
        assert all(f[2] == "global" and f[3] == ALL for f in found), found
        shape = next(x for x in r["findings"] if x["id"] == "discover.shape")
        assert any("-32020" in e for e in shape["evidence"]), shape["evidence"]
        # The wire proves nginx (its Server header): the fix names nginx's header setting.
        assert shape["remediation"].startswith("nginx: "), shape["remediation"]
        assert "proxy_set_header Mcp-Method" in shape["remediation"], shape["remediation"]
        assert "Server: nginx" in shape["stack"]["evidence"], shape.get("stack")
        return "global: " + ", ".join(sorted(ids)) + "; the fix names nginx (Server: nginx)"

    def divergent(r):
        assert above_info(r) == [("edge.divergent", "medium", "regional", ("ap",)),
                                 ("transport.get", "medium", "regional", ("ap",))], above_info(r)
        get = next(x for x in r["findings"] if x["id"] == "transport.get")
        assert get["remediation"].startswith("nginx: GET on the MCP location"), get["remediation"]
        return "edge.divergent + transport.get in ap, the fix for nginx"

    def stale(r):
        assert above_info(r) == [("edge.divergent", "medium", "regional", ("ap",))], above_info(r)
        f = next(x for x in r["findings"] if x["id"] == "edge.divergent")
        want = "ap: tools/list differs from eu, us: added legacy_report; removed lookup; changed add"
        assert want in f["evidence"], f["evidence"]
        digests = {x["region"]: next(l["digest"] for l in x["surface"]["lists"] if l["kind"] == "tools") for x in r["regions"]}
        assert digests["eu"] == digests["us"] != digests["ap"], digests
        return "edge.divergent in ap, naming the tools the stale edge's backend adds, lacks and changes"

    def missing(r):
        assert above_info(r) == [("fleet.region-missing", "medium", "regional", ("ap",))], above_info(r)
        assert r["decision"] == "unknown", r["decision"]
        return "fleet.region-missing in ap, decision unknown"

    def drop(action):
        def f():
            sh("iptables", action, "OUTPUT", "-d", ADDR["target"][0], "-p", "tcp", "--dport", "443", "-j", "DROP", ns=NS["us"])
        return f

    def reject(action):
        def f():
            sh("iptables", action, "OUTPUT", "-d", ADDR["target"][0], "-p", "tcp", "--dport", "443", "-j", "REJECT",
               "--reject-with", "tcp-reset", ns=NS["us"])
        return f

    timings = {}

    def partition(action):
        def f():
            for chain, flag in (("OUTPUT", "-d"), ("INPUT", "-s")):
                sh("iptables", action, chain, flag, ADDR["coord"], "-j", "DROP", ns=NS["us"])
            if action == "-A":
                t = time.time()
                deadline = t + 20
                while len(api(api_token, "/v1/agents").get("agents", [])) != 2:
                    assert time.time() < deadline, "the partitioned agent was not dropped within 20 s"
                    time.sleep(0.1)
                timings["detected"] = time.time() - t
            else:
                t = time.time()
                deadline = t + 30
                while len(api(api_token, "/v1/agents").get("agents", [])) != 3:
                    assert time.time() < deadline, "the agent did not come back within 30 s of the partition ending"
                    time.sleep(0.1)
                timings["recovered"] = time.time() - t
        return f

    def partitioned(r):
        assert above_info(r) == [("fleet.region-missing", "medium", "regional", ("us",))], above_info(r)
        assert r["decision"] == "unknown"
        return f"fleet.region-missing in us; the coordinator dropped the partitioned agent in {timings['detected']:.1f}s (agent_timeout 5s)"

    def after_partition(r):
        assert r["decision"] == "pass", r["reason"]
        return f"all regions back; the agent re-registered {timings['recovered']:.1f}s after the partition ended"

    def kill_ap():
        stop("agent-ap")
        deadline = time.time() + 10
        while len(api(api_token, "/v1/agents").get("agents", [])) != 2:
            assert time.time() < deadline, "the killed agent is still listed"
            time.sleep(0.1)

    return [
        ("healthy", "healthy", None, None, healthy),
        ("split-horizon", "split", None, None, split),
        ("nxdomain-in-one-region", "nx", None, None, nx),
        ("aaaa-only", "v6only", None, None, v6only),
        ("egress-drop", "healthy", drop("-A"), drop("-D"), egress("timeout")),
        ("egress-reject", "healthy", reject("-A"), reject("-D"), egress("refused")),
        ("cross-host-redirect", "redirect", None, None, redirect),
        ("bad-edge", "badedge", None, None, badedge),
        ("edge-divergent", "divergent", None, None, divergent),
        ("stale-edge-tool-list", "stale", None, None, stale),
        ("agent-partitioned", "healthy", partition("-A"), partition("-D"), partitioned),
        ("after-the-partition", "healthy", None, None, after_partition),
        ("agent-killed", "healthy", kill_ap, None, missing),
    ]


def main():
    global work
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "target/debug"))
    args = ap.parse_args()
    bin_dir = os.path.abspath(args.bin_dir)
    problems = preflight()
    for b in ["vantage", "vantage-agent"]:
        if not os.access(os.path.join(bin_dir, b), os.X_OK):
            problems.append(f"{bin_dir}/{b} is missing (cargo build --workspace)")
    if problems:
        log("=" * 72)
        log("THE REGION SUITE CANNOT RUN:")
        for p in problems:
            log(f"  - {p}")
        log("=" * 72)
        return 1 if os.environ.get("CI") else 77
    work = tempfile.mkdtemp(prefix="vantage-regions-")
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: sys.exit(130))
    passed = failed = 0
    t0 = time.time()
    try:
        build_network()
        dns_views()
        ca = lab_ca()
        target_services()
        wait_backends()
        api_token, tokens = coordinator(bin_dir)
        time.sleep(0.5)
        for r in REGIONS:
            start_agent(bin_dir, r, tokens[r], ca)
        wait_agents(api_token, 3)
        log(f"lab up in {time.time() - t0:.1f}s (namespaces {', '.join(NS.values())})")
        for i, (name, host, before, after, verify) in enumerate(scenarios(bin_dir, api_token, tokens, ca), 1):
            t = time.time()
            try:
                if before:
                    before()
                report = check(api_token, host)
                if "findings" not in report:
                    raise AssertionError(f"no report: {report}")
                detail = verify(report)
                passed += 1
                log(f"ok   {i:2} {name:<24} {time.time() - t:5.1f}s  {detail}")
            except Exception as e:  # noqa: BLE001 - every failure is reported, the suite goes on
                failed += 1
                log(f"FAIL {i:2} {name:<24} {time.time() - t:5.1f}s  {type(e).__name__}: {e}")
            finally:
                if after:
                    try:
                        after()
                    except Exception as e:  # noqa: BLE001
                        log(f"     cleanup of {name} failed: {e}")
    except Exception as e:  # noqa: BLE001
        failed += 1
        log(f"FAIL lab setup: {e}")
        for n, _ in started:
            path = os.path.join(work, f"{n}.log")
            if os.path.exists(path):
                log(f"--- {n}.log (tail)\n{open(path).read()[-1500:]}")
    finally:
        cleanup()
    log(f"region suite: {time.time() - t0:.1f}s")
    log(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
