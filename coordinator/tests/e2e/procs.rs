//! Real processes for the fleet tests: the `vantage serve` coordinator and `vantage-agent`s,
//! each killed by its own pid when dropped, with their output captured for inspection; and
//! polling until something such a process does has happened.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A child process whose stdout and stderr are collected.
pub struct Proc {
    pub child: Child,
    pub out: Arc<Mutex<String>>,
}

impl Proc {
    pub fn spawn(mut cmd: Command) -> Proc {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn");
        let out = Arc::new(Mutex::new(String::new()));
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let out = out.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let mut o = out.lock().unwrap();
                    o.push_str(&line);
                    o.push('\n');
                }
            });
        }
        Proc { child, out }
    }

    pub fn output(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    /// Wait until the output contains `needle`.
    pub fn wait_for(&self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let o = self.output();
            if let Some(line) = o.lines().find(|l| l.contains(needle)) {
                return line.to_string();
            }
            assert!(
                Instant::now() < deadline,
                "no `{needle}` within {within:?}; output:\n{o}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Send `signal` (TERM, HUP, STOP, CONT) to this process, by its pid.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Wait for the process to exit; `None` if it is still running after `within`.
    pub fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn bin(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_BIN_EXE_vantage"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = dir.join(name);
    if !path.exists() {
        // `cargo test -p vantage-coordinator` alone does not build the agent's binary.
        let status = Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "vantage-agent", "--bin", name])
            .status()
            .expect("cargo build");
        assert!(status.success(), "building {name} failed");
    }
    path
}

/// A running coordinator.
pub struct Coordinator {
    pub proc: Proc,
    pub api: String,
    pub grpc: String,
    pub config: PathBuf,
}

pub const API_TOKEN: &str = "vantage-test-api-token-91d2";

pub fn agent_token(region: &str) -> String {
    format!("vantage-test-agent-token-{region}-55e0")
}

/// Write a config with one agent per region (tokens from env) and start `vantage serve`.
pub fn coordinator(
    dir: &std::path::Path,
    regions: &[&str],
    api: &str,
    grpc: &str,
    extra: &str,
) -> Coordinator {
    // `[server.tls]…` and `[server]\nkey = …` go into the [server] section.
    let (server_extra, extra) = if extra.starts_with("[server.") {
        (extra, "")
    } else if let Some(keys) = extra.strip_prefix("[server]\n") {
        (keys, "")
    } else {
        ("", extra)
    };
    let mut text = format!(
        "[server]\napi_listen = \"{api}\"\ngrpc_listen = \"{grpc}\"\napi_tokens = [{{ token_env = \"T_API\" }}]\n{server_extra}\
         [fleet]\nlocal_agent = false\nheartbeat_interval = \"500ms\"\nagent_timeout = \"3s\"\ndefault_deadline = \"10s\"\n\
         [probe]\ncheck_timeout = \"2s\"\nallow_non_global = [\"127.0.0.0/8\"]\n{extra}\n"
    );
    for r in regions {
        text.push_str(&format!(
            "[[agents]]\nname = \"{r}-1\"\nregion = \"{r}\"\ntoken_env = \"T_AGENT_{}\"\n",
            r.to_uppercase()
        ));
    }
    let config = dir.join("coordinator.toml");
    std::fs::write(&config, text).unwrap();
    start_coordinator(&config, regions)
}

pub fn start_coordinator(config: &std::path::Path, regions: &[&str]) -> Coordinator {
    start_coordinator_full(config, regions, Some("debug"), &[], &[])
}

/// `vantage serve` with a log filter (`None`: the default level) and extra arguments.
pub fn start_coordinator_with(
    config: &std::path::Path,
    regions: &[&str],
    log: Option<&str>,
    args: &[&str],
) -> Coordinator {
    start_coordinator_full(config, regions, log, args, &[])
}

/// Like [`start_coordinator`], with extra environment (secrets named by the config).
pub fn start_coordinator_env(
    config: &std::path::Path,
    regions: &[&str],
    env: &[(&str, &str)],
) -> Coordinator {
    start_coordinator_full(config, regions, Some("debug"), &[], env)
}

fn start_coordinator_full(
    config: &std::path::Path,
    regions: &[&str],
    log: Option<&str>,
    args: &[&str],
    env: &[(&str, &str)],
) -> Coordinator {
    let mut cmd = Command::new(bin("vantage"));
    cmd.envs(env.iter().copied());
    cmd.args(["serve", "--config", &config.display().to_string()])
        .args(args)
        .env("T_API", API_TOKEN)
        .env_remove("VANTAGE_LOG")
        .env_remove("VANTAGE_LOG_FORMAT");
    if let Some(filter) = log {
        cmd.env("VANTAGE_LOG", filter);
    }
    for r in regions {
        cmd.env(format!("T_AGENT_{}", r.to_uppercase()), agent_token(r));
    }
    cmd.env("T_CRED_PROD", vantage_fixture::FIXTURE_TOKEN);
    let proc = Proc::spawn(cmd);
    let line = proc.wait_for("vantage serve: api", Duration::from_secs(20));
    let mut words = line.split_whitespace();
    let api = words
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    let grpc = words
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    Coordinator {
        proc,
        api,
        grpc,
        config: config.to_path_buf(),
    }
}

/// Poll `f` every `every` until it holds; fail naming `what` once `within` has passed (a
/// bound on waiting, not an assertion about time). How long it took.
pub async fn until(
    what: &str,
    within: Duration,
    every: Duration,
    mut f: impl AsyncFnMut() -> bool,
) -> Duration {
    let start = Instant::now();
    while !f().await {
        assert!(
            start.elapsed() < within,
            "{what} did not happen within {within:?}"
        );
        tokio::time::sleep(every).await;
    }
    start.elapsed()
}

/// `vantage serve --config CONFIG` with the API token `x` in `T_API`, once its API listens.
pub fn serve_config(config: &std::path::Path) -> Proc {
    let mut cmd = Command::new(bin("vantage"));
    cmd.args(["serve", "--config"])
        .arg(config)
        .env("T_API", "x");
    let p = Proc::spawn(cmd);
    p.wait_for("vantage serve: api", Duration::from_secs(20));
    p
}

/// The API URL a `vantage serve` printed on its `vantage serve: api …` line.
pub fn serve_api(p: &Proc) -> String {
    p.wait_for("vantage serve: api", Duration::from_secs(20))
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string()
}

/// Start an agent for `region` with `token`.
pub fn agent(grpc: &str, region: &str, token: &str) -> Proc {
    agent_with(grpc, region, token, &[])
}

/// One agent for each of `regions`, each with its region's token.
pub fn agent_per_region(grpc: &str, regions: &[&str]) -> Vec<Proc> {
    regions
        .iter()
        .map(|r| agent(grpc, r, &agent_token(r)))
        .collect()
}

/// Start an agent with extra arguments (TLS files and the like).
pub fn agent_with(grpc: &str, region: &str, token: &str, extra: &[String]) -> Proc {
    agent_with_env(grpc, region, token, extra, &[])
}

/// [`agent_with`] with extra environment (a debug build's test seams).
pub fn agent_with_env(
    grpc: &str,
    region: &str,
    token: &str,
    extra: &[String],
    env: &[(&str, &str)],
) -> Proc {
    let mut cmd = Command::new(bin("vantage-agent"));
    cmd.envs(env.iter().copied());
    cmd.args([
        "--coordinator",
        grpc,
        "--region",
        region,
        "--listen",
        "127.0.0.1:0",
        "--backoff-min",
        "100ms",
        "--backoff-max",
        "1s",
        "--check-timeout",
        "2s",
    ])
    .args(extra)
    .env("VANTAGE_AGENT_TOKEN", token)
    .env("VANTAGE_LOG", "debug");
    Proc::spawn(cmd)
}

/// The agent's health address, from its log.
pub fn agent_health(p: &Proc) -> SocketAddr {
    let line = p.wait_for("health and metrics endpoints up", Duration::from_secs(10));
    let at = line.find("listen=").unwrap() + "listen=".len();
    line[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

pub fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}
