//! Mistakes an operator makes on the first day, each answered with the likely cause and the
//! fix: a URL without its scheme, the API and gRPC ports swapped, a nameserver without its
//! port, a coordinator CA given for targets, configuration errors with their origin and key
//! path, and the API token of a local coordinator (a stable file, removed at exit).

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use vantage_fixture::Fixture;

use crate::procs::{agent, agent_health, bin, coordinator, serve_api};
use crate::support::Scratch;
use crate::token_files::{runtime_dir, serve, token_file};

/// Run a binary with a clean environment for tokens and logs, plus `env`.
fn run(name: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(bin(name));
    cmd.args(args)
        .stdin(Stdio::null())
        .env_remove("VANTAGE_API_TOKEN")
        .env_remove("VANTAGE_AGENT_TOKEN")
        .env_remove("VANTAGE_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("runs")
}

async fn run_async(name: &'static str, args: Vec<String>, env: Vec<(String, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let e: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        run(name, &a, &e)
    })
    .await
    .unwrap()
}

/// `vantage check http://127.0.0.1:9/mcp --coordinator URL` (with the API token when
/// `token`): it must refuse (exit 1); its stderr.
async fn check_via(coordinator: String, token: bool) -> String {
    let env = if token {
        vec![("VANTAGE_API_TOKEN".into(), crate::procs::API_TOKEN.into())]
    } else {
        Vec::new()
    };
    let o = run_async(
        "vantage",
        vec![
            "check".into(),
            "http://127.0.0.1:9/mcp".into(),
            "--coordinator".into(),
            coordinator,
        ],
        env,
    )
    .await;
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    e
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// [`run`], which must refuse (exit 1): its stderr.
fn refused(name: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let o = run(name, args, env);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    e
}

#[test]
fn addresses_without_their_scheme_or_port_are_refused_with_the_fix() {
    const CHECK: &[&str] = &["check", "http://127.0.0.1:9/mcp"];
    const API_TOKEN: &[(&str, &str)] = &[("VANTAGE_API_TOKEN", "x")];
    const AGENT_TOKEN: &[(&str, &str)] = &[("VANTAGE_AGENT_TOKEN", "x")];
    // (binary, arguments after CHECK for vantage, environment, what stderr says, what it
    // never says); each is refused (exit 1).
    type Case = (
        &'static str,
        &'static [&'static str],
        &'static [(&'static str, &'static str)],
    );
    let cases: &[(Case, &[&str], &[&str])] = &[
        (
            ("vantage", &["--coordinator", "127.0.0.1:8080"], API_TOKEN),
            &["--coordinator 127.0.0.1:8080: give the API's URL with its scheme, e.g. http://127.0.0.1:8080"],
            &["builder error"],
        ),
        (
            ("vantage", &["--nameserver", "198.51.100.53"], &[]),
            &["`198.51.100.53` has no port; write 198.51.100.53:53"],
            &[],
        ),
        (
            ("vantage", &["--nameserver", "2001:db8::53"], &[]),
            &["write [2001:db8::53]:53"],
            &[],
        ),
        (
            ("vantage-agent", &["--coordinator", "127.0.0.1:50051", "--region", "eu"], AGENT_TOKEN),
            &["give the coordinator's gRPC URL with its scheme, e.g. http://127.0.0.1:50051"],
            &[],
        ),
        // A coordinator URL with a password: refused by both, and the password never repeated.
        (
            ("vantage-agent", &["--coordinator", "http://bob:AgentSecret@127.0.0.1:50051", "--region", "eu"], AGENT_TOKEN),
            &["carries user information", "--token-env"],
            &["AgentSecret"],
        ),
        (
            ("vantage", &["--coordinator", "http://bob:CoordSecret@127.0.0.1:9"], &[]),
            &["carries user information", "--api-token-env"],
            &["CoordSecret"],
        ),
    ];
    for ((name, args, env), says, never) in cases {
        let args: Vec<&str> = match *name {
            "vantage" => CHECK.iter().chain(*args).copied().collect(),
            _ => args.to_vec(),
        };
        let e = refused(name, &args, env);
        let has = |s: &&str| e.contains(s);
        assert!(
            says.iter().all(has) && !never.iter().any(has),
            "{args:?}: {e}"
        );
    }
}

#[test]
fn a_coordinator_ca_on_a_plain_http_coordinator_points_to_target_ca_file() {
    let dir = Scratch::new("operr-cafile");
    let ca = dir.join("lab-ca.pem");
    std::fs::write(&ca, crate::support::LabCa::new().ca_pem).unwrap();
    let e = refused(
        "vantage-agent",
        &[
            "--coordinator",
            "http://127.0.0.1:50051",
            "--region",
            "eu",
            "--ca-file",
            &ca.display().to_string(),
            "--listen",
            "127.0.0.1:0",
        ],
        &[("VANTAGE_AGENT_TOKEN", "x")],
    );
    assert!(
        e.contains("--ca-file is for a TLS coordinator") && e.contains("use --target-ca-file"),
        "{e}"
    );
    // --target-ca-file is documented where operators look.
    let help = String::from_utf8_lossy(&run("vantage-agent", &["--help"], &[]).stdout).to_string();
    assert!(help.contains("--target-ca-file"), "{help}");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    for doc in ["README.md", "charts/vantage/README.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        assert!(
            text.contains("--target-ca-file"),
            "{doc} does not mention --target-ca-file"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_and_grpc_ports_swapped_are_named_as_such() {
    let dir = Scratch::new("operr-ports");
    let c = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let grpc_port = "is it the agents' gRPC port (server.grpc_listen";
    // (--coordinator, with the API token, what the refusal says, what it must not say)
    for (url, token, says, never) in [
        // `vantage check` pointed at the gRPC port.
        (c.grpc.clone(), true, &[grpc_port][..], &[][..]),
        // The same without a token: the port is named first, not a token file that is not
        // there.
        (c.grpc.clone(), false, &[grpc_port], &["needs a token"]),
        // https:// to the plain-HTTP API: named as such, not "is the coordinator running?".
        (
            c.api.replace("http://", "https://"),
            false,
            &["it answered in plain HTTP, not TLS: write --coordinator http://"],
            &[],
        ),
        // The API itself without a token: where a token comes from, and that none was
        // written.
        (
            c.api.clone(),
            false,
            &[
                "the coordinator's API needs a token: export VANTAGE_API_TOKEN",
                "no `vantage serve` here has written it",
            ],
            &[],
        ),
    ] {
        let e = check_via(url.clone(), token).await;
        for s in says {
            assert!(e.contains(s), "{url}: {s:?} missing: {e}");
        }
        for s in never {
            assert!(!e.contains(s), "{url}: {s:?} present: {e}");
        }
    }
    // An agent pointed at the API port.
    let a = agent(&c.api, "eu", &crate::procs::agent_token("eu"));
    let line = a.wait_for(
        "does not look like the coordinator's gRPC port",
        Duration::from_secs(10),
    );
    assert!(line.contains("server.grpc_listen"), "{line}");
    let health = agent_health(&a);
    let client = crate::support::http();
    let resp = client
        .get(format!("http://{health}/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 503);
    assert!(resp.text().await.unwrap().contains("gRPC port"));
    // `vantage check` pointed at that agent's health port: named, not "404: " and nothing.
    let e = check_via(format!("http://{health}"), true).await;
    assert!(
        e.contains("the coordinator refused the check: 404 with")
            && e.contains("which is not the coordinator's API")
            && e.contains("an agent's health port"),
        "{e}"
    );
}

/// An agent dialing `https://` a coordinator that serves plain HTTP/2, or `http://` one that
/// serves TLS, is told which side speaks what and the fix (red team 16, D3): it was only
/// "transport error". Neither registers; /readyz says it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_and_plain_http_mixed_up_between_agent_and_coordinator_are_named() {
    let dir = Scratch::new("operr-tlsmix");
    // A plain coordinator, dialed with https://.
    let plain = coordinator(&dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", "");
    let a = agent(
        &plain.grpc.replace("http://", "https://"),
        "eu",
        &crate::procs::agent_token("eu"),
    );
    let line = a.wait_for("coordinator connection", Duration::from_secs(10));
    eprintln!("https:// to a plain coordinator: {line}");
    assert!(
        line.contains("TLS handshake failed")
            && line.contains("does the coordinator serve TLS?")
            && line.contains("write --coordinator http://")
            && line.contains("[server.tls]"),
        "{line}"
    );
    let readyz = crate::support::http()
        .get(format!("http://{}/readyz", agent_health(&a)))
        .send()
        .await
        .unwrap();
    assert_eq!(readyz.status().as_u16(), 503);
    assert!(readyz
        .text()
        .await
        .unwrap()
        .contains("TLS handshake failed"));
    drop(a);

    // A TLS coordinator, dialed with http://.
    let tls_dir = Scratch::new("operr-tlsmix-tls");
    let ca = crate::support::LabCa::new();
    let (cert, key) = ca.leaf(&["localhost"], 30);
    std::fs::write(tls_dir.join("tls.crt"), cert).unwrap();
    std::fs::write(tls_dir.join("tls.key"), key).unwrap();
    let extra = format!(
        "[server.tls]\ncert_file = \"{}\"\nkey_file = \"{}\"\n",
        tls_dir.join("tls.crt").display(),
        tls_dir.join("tls.key").display()
    );
    let tls = coordinator(&tls_dir, &["eu"], "127.0.0.1:0", "127.0.0.1:0", &extra);
    let port = tls.grpc.rsplit(':').next().unwrap().to_string();
    let a = agent(
        &format!("http://localhost:{port}"),
        "eu",
        &crate::procs::agent_token("eu"),
    );
    // The attempt whose handshake read the TLS answer names it; under load an attempt can
    // end at the transport first ("attach: transport error"), and the agent retries: the
    // line that names the mix-up must come within a few attempts.
    let line = a.wait_for("the coordinator answered in TLS", Duration::from_secs(30));
    eprintln!("http:// to a TLS coordinator: {line}");
    assert!(
        line.contains("the coordinator answered in TLS")
            && line.contains("write --coordinator https://")
            && line.contains("--ca-file"),
        "{line}"
    );
    assert!(
        !line.contains("does not look like the coordinator's gRPC port"),
        "{line}"
    );
}

#[test]
fn configuration_errors_name_their_origin_and_key_once() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = root.join("vantage.example.toml").display().to_string();
    let e = refused(
        "vantage",
        &["serve", "--config", &example],
        &[("VANTAGE_AGENT_TOKEN_EU_WEST", "")],
    );
    let needle = "[[agents]] `eu-west-1`: environment variable VANTAGE_AGENT_TOKEN_EU_WEST is not set or empty";
    assert_eq!(e.matches(needle).count(), 1, "said exactly once: {e}");
    assert!(e.contains("token_file"), "{e}");
    assert!(
        !e.contains("--"),
        "no command-line flag in a config error: {e}"
    );

    let e = refused(
        "vantage",
        &["serve", "--check"],
        &[("VANTAGE_SERVER__BOGUS", "1")],
    );
    assert!(
        e.contains("environment variable VANTAGE_SERVER__BOGUS: unknown key `server.bogus`"),
        "{e}"
    );
    let dir = Scratch::new("operr-cfg");
    let file = dir.join("vantage.toml");
    std::fs::write(
        &file,
        "[fleet]\nlocal_region = \"lab\"\n\n[server]\napi_lissen = \"127.0.0.1:1\"\n",
    )
    .unwrap();
    let e = refused(
        "vantage",
        &["serve", "--config", &file.display().to_string(), "--check"],
        &[],
    );
    assert!(
        e.contains(&format!(
            "{}: unknown key `server.api_lissen` (line 5)",
            file.display()
        )),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_coordinator_token_is_found_used_by_file_and_removed_at_exit() {
    let dir = Scratch::new("operr-token");
    let xdg = runtime_dir(&dir);
    let fixture = Fixture::start(&[]).await.unwrap();
    let mut p = serve(&xdg, "127.0.0.1:0");
    let api = serve_api(&p);
    let path = token_file(&xdg, &api);
    let line = p.wait_for("API token written to", Duration::from_secs(5));
    assert!(
        line.ends_with(&path.display().to_string()),
        "a stable path: {line}"
    );
    let check = |extra: Vec<String>, xdg: String| {
        let mut args = vec![
            "check".to_string(),
            fixture.url(),
            "--coordinator".into(),
            api.clone(),
            "--format".into(),
            "json".into(),
        ];
        args.extend(extra);
        run_async("vantage", args, vec![("XDG_RUNTIME_DIR".into(), xdg)])
    };
    // No token flag: the generated one is found at its stable path.
    let o = check(vec![], xdg.clone()).await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // --api-token-file, from anywhere.
    let elsewhere = dir.join("elsewhere").display().to_string();
    let o = check(
        vec!["--api-token-file".into(), path.display().to_string()],
        elsewhere.clone(),
    )
    .await;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Neither: the error names both ways.
    let o = check(vec![], elsewhere).await;
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("export VANTAGE_API_TOKEN") && e.contains("--api-token-file PATH"),
        "{e}"
    );
    let token = std::fs::read_to_string(&path).unwrap();
    assert!(
        !p.output().contains(token.trim()),
        "the token is never printed"
    );
    p.signal("TERM");
    assert!(
        p.wait_exit(Duration::from_secs(30))
            .is_some_and(|s| s.success()),
        "{}",
        p.output()
    );
    assert!(
        !path.exists(),
        "the generated token file is removed at exit"
    );
}

/// An egress exception that covers every address is refused on the command line as the
/// configuration refuses it (it would switch the egress policy off for the URLs a hostile
/// target names), with the fix; a real prefix is accepted.
#[test]
fn catch_all_egress_exceptions_are_refused_on_the_command_line_too() {
    for (flag, value) in [
        ("--allow-non-global", "0.0.0.0/0"),
        ("--assume-global", "::/0"),
        ("--assume-global", "0.0.0.0/0"),
    ] {
        let e = refused(
            "vantage",
            &["check", "http://127.0.0.1:9/mcp", flag, value],
            &[],
        );
        assert!(
            e.contains(&format!(
                "{value} covers every address, which switches the egress policy off"
            )) && e.contains("name the lab's own prefixes"),
            "{e}"
        );
    }
    // `serve --check` says the same of the configuration.
    let dir = Scratch::new("operr-catchall");
    let cfg = dir.join("vantage.toml");
    std::fs::write(&cfg, "[probe]\nallow_non_global = [\"0.0.0.0/0\"]\n").unwrap();
    let o = run(
        "vantage",
        &["serve", "--check", "--config", &cfg.display().to_string()],
        &[],
    );
    assert_ne!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("0.0.0.0/0 covers every address"),
        "{}",
        stderr(&o)
    );
}
