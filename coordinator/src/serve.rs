//! `vantage serve`: the coordinator. Agent gRPC, the HTTP API with /metrics, the
//! in-process vantage and the reaper of silent agents, until a shutdown signal.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use secrecy::SecretString;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use vantage_agent::{Credentials, Engine, Policy, ProbeOptions};

use crate::api::{self, Api};
use crate::config::{resolve, Config, ConfigError};
use crate::dispatch::Dispatcher;
use crate::fleet::{AgentAuth, FleetService, Registry};
use crate::metrics::Metrics;
use crate::store::Store;

/// Why the coordinator could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("binding {what} on {addr}: {source}")]
    Bind {
        what: &'static str,
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("{0}")]
    Setup(String),
}

async fn bind(what: &'static str, addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { what, addr, source })
}

fn mtime(path: &std::path::Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// What a configuration reload changes while the coordinator runs.
struct Live {
    path: Option<std::path::PathBuf>,
    mtime: Option<std::time::SystemTime>,
    api: Arc<Api>,
    agent_auth: Arc<std::sync::RwLock<Vec<AgentAuth>>>,
    generated: Option<SecretString>,
    current: Config,
    scheduled: Vec<tokio::task::JoinHandle<()>>,
}

impl Live {
    /// Re-read the file: scheduled checks, credentials, API and agent tokens, regions.
    /// Connected agents stay; listeners and the local vantage stay as started. A bad file
    /// changes nothing.
    fn reload(&mut self, why: &str) {
        let Some(path) = self.path.clone() else {
            tracing::warn!("{why}: no configuration file to re-read");
            return;
        };
        self.mtime = mtime(&path);
        let (next, s) = match Config::load(Some(&path)).and_then(|c| secrets(&c).map(|s| (c, s))) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!("{why}: keeping the running configuration: {e}");
                return;
            }
        };
        let api = &self.api;
        for old in &self.current.checks {
            if !next.checks.iter().any(|c| c.target == old.target) {
                if let Ok(t) = vantage_agent::Target::parse(&old.target) {
                    api.metrics.forget_target(&t.to_string());
                    api.degraded.forget(&t.to_string());
                }
            }
        }
        for h in self.scheduled.drain(..) {
            h.abort();
        }
        *self.agent_auth.write().unwrap_or_else(|p| p.into_inner()) = s.agents;
        let mut tokens = s.tokens;
        if tokens.is_empty() {
            tokens.extend(self.generated.clone());
        }
        *api.tokens.write().unwrap_or_else(|p| p.into_inner()) = tokens;
        *api.credentials.write().unwrap_or_else(|p| p.into_inner()) = s.credentials;
        *api.regions.write().unwrap_or_else(|p| p.into_inner()) = next.regions();
        self.scheduled = crate::schedule::start(api, &next.checks, next.fleet.default_deadline);
        tracing::info!(checks = next.checks.len(), regions = ?next.regions(), "{why}: configuration reloaded");
        self.current = next;
    }
}

/// SIGHUP as a stream of `()`.
fn hangups() -> tokio::sync::mpsc::Receiver<()> {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    #[cfg(unix)]
    tokio::spawn(async move {
        let Ok(mut hup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        else {
            return;
        };
        while hup.recv().await.is_some() {
            if tx.send(()).await.is_err() {
                return;
            }
        }
    });
    #[cfg(not(unix))]
    drop(tx);
    rx
}

/// The addresses actually bound (ports may have been 0).
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub api: SocketAddr,
    pub grpc: SocketAddr,
}

/// A generated API token, written to a private file; returns the path.
fn generated_token() -> Result<(SecretString, std::path::PathBuf), ServeError> {
    let token = format!("{}{}", ulid::Ulid::new(), ulid::Ulid::new()).to_ascii_lowercase();
    let path = std::env::temp_dir().join(format!("vantage-api-token-{}", std::process::id()));
    #[cfg(unix)]
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| {
                ServeError::Setup(format!(
                    "writing the generated API token to {}: {e}",
                    path.display()
                ))
            })?;
        f.write_all(token.as_bytes())
            .map_err(|e| ServeError::Setup(e.to_string()))?;
    }
    #[cfg(not(unix))]
    std::fs::write(&path, &token).map_err(|e| ServeError::Setup(e.to_string()))?;
    Ok((SecretString::from(token), path))
}

/// The secrets a configuration names, resolved.
struct Secrets {
    agents: Vec<AgentAuth>,
    tokens: Vec<SecretString>,
    credentials: BTreeMap<String, Credentials>,
}

fn secrets(cfg: &Config) -> Result<Secrets, ConfigError> {
    let agents = cfg
        .agents
        .iter()
        .map(|a| {
            Ok(AgentAuth {
                name: a.name.clone(),
                region: a.region.clone(),
                token: resolve(&format!("agents `{}`", a.name), &a.token_env, &a.token_file)?,
            })
        })
        .collect::<Result<_, ConfigError>>()?;
    let tokens = cfg
        .server
        .api_tokens
        .iter()
        .enumerate()
        .map(|(i, t)| {
            resolve(
                &format!("server.api_tokens[{i}]"),
                &t.token_env,
                &t.token_file,
            )
        })
        .collect::<Result<_, _>>()?;
    let credentials = cfg
        .credentials
        .iter()
        .map(|c| Ok((c.name.clone(), c.resolve()?)))
        .collect::<Result<_, ConfigError>>()?;
    Ok(Secrets {
        agents,
        tokens,
        credentials,
    })
}

/// Start everything; `ready` gets the bound addresses; returns when `shutdown` completes.
/// With `config_path`, SIGHUP re-reads it: scheduled checks, credentials and tokens change
/// without dropping connected agents (listeners and the local vantage stay as started).
pub async fn serve(
    cfg: Config,
    config_path: Option<std::path::PathBuf>,
    shutdown: impl Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(Bound),
) -> Result<(), ServeError> {
    let Secrets {
        agents,
        mut tokens,
        credentials,
    } = secrets(&cfg)?;
    let mut generated = None;
    if tokens.is_empty() {
        let (token, path) = generated_token()?;
        tracing::warn!(
            "no server.api_tokens configured: generated one and wrote it to {} (mode 0600)",
            path.display()
        );
        eprintln!("vantage serve: API token written to {}", path.display());
        generated = Some(token.clone());
        tokens.push(token);
    }
    let extra_ca_pem = match &cfg.probe.ca_file {
        Some(p) => Some(
            std::fs::read(p)
                .map_err(|e| ServeError::Setup(format!("probe.ca_file {}: {e}", p.display())))?,
        ),
        None => None,
    };

    let registry = Arc::new(Registry::default());
    // The in-process vantage's own settings; each job brings its deadline, policy and
    // credentials, as it does to an agent.
    let local = if cfg.fleet.local_agent {
        let engine = Engine::new(ProbeOptions {
            region: cfg.fleet.local_region.clone(),
            check_timeout: cfg.probe.check_timeout,
            extra_ca_pem,
            connect_non_global: false,
            ..ProbeOptions::default()
        })
        .map_err(|e| ServeError::Setup(format!("probe: {e}")))?;
        Some((cfg.fleet.local_region.clone(), engine))
    } else {
        None
    };
    let dispatcher = Arc::new(Dispatcher {
        registry: registry.clone(),
        local,
        policy: Policy {
            assume_global: cfg.probe.assume_global.clone(),
            allow_non_global: cfg.probe.allow_non_global.clone(),
        },
    });
    let metrics = Arc::new(
        Metrics::new(prometheus::Registry::new())
            .map_err(|e| ServeError::Setup(format!("metrics: {e}")))?,
    );
    let api = Arc::new(Api {
        tokens: std::sync::RwLock::new(tokens),
        credentials: std::sync::RwLock::new(credentials),
        regions: std::sync::RwLock::new(cfg.regions()),
        default_deadline: cfg.fleet.default_deadline,
        max_body_bytes: cfg.server.max_body_bytes,
        rate: crate::api::RateLimit::new(cfg.server.checks_per_target_per_minute),
        metrics_require_auth: cfg.server.metrics_require_auth,
        dispatcher,
        store: Arc::new(Store::new(cfg.store.max_reports, cfg.store.max_age)),
        registry: registry.clone(),
        metrics,
        degraded: Arc::new(crate::degraded::Degraded::default()),
    });

    let grpc_listener = bind("server.grpc_listen", cfg.server.grpc_listen).await?;
    let api_listener = bind("server.api_listen", cfg.server.api_listen).await?;
    let bound = Bound {
        api: api_listener
            .local_addr()
            .map_err(|e| ServeError::Setup(e.to_string()))?,
        grpc: grpc_listener
            .local_addr()
            .map_err(|e| ServeError::Setup(e.to_string()))?,
    };

    let agent_auth = Arc::new(std::sync::RwLock::new(agents));
    let service = FleetService {
        registry: registry.clone(),
        agents: agent_auth.clone(),
        heartbeat: cfg.fleet.heartbeat_interval,
    };
    let mut server = Server::builder()
        .http2_keepalive_interval(Some(std::time::Duration::from_secs(10)))
        .http2_keepalive_timeout(Some(std::time::Duration::from_secs(5)));
    if let Some(tls) = &cfg.server.tls {
        let cert = std::fs::read(&tls.cert_file).map_err(|e| {
            ServeError::Setup(format!(
                "server.tls.cert_file {}: {e}",
                tls.cert_file.display()
            ))
        })?;
        let key = std::fs::read(&tls.key_file).map_err(|e| {
            ServeError::Setup(format!(
                "server.tls.key_file {}: {e}",
                tls.key_file.display()
            ))
        })?;
        let mut tls_config = ServerTlsConfig::new().identity(Identity::from_pem(cert, key));
        if let Some(ca) = &tls.client_ca_file {
            let pem = std::fs::read(ca).map_err(|e| {
                ServeError::Setup(format!("server.tls.client_ca_file {}: {e}", ca.display()))
            })?;
            tls_config = tls_config.client_ca_root(tonic::transport::Certificate::from_pem(pem));
        }
        server = server
            .tls_config(tls_config)
            .map_err(|e| ServeError::Setup(format!("server.tls: {e}")))?;
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut grpc_stop = stop_rx.clone();
    let grpc = tokio::spawn(
        server
            .add_service(service.into_server())
            .serve_with_incoming_shutdown(TcpListenerStream::new(grpc_listener), async move {
                let _ = grpc_stop.wait_for(|s| *s).await;
            }),
    );
    let mut api_stop = stop_rx.clone();
    let router = api::router(api.clone());
    let http = tokio::spawn(async move {
        axum::serve(api_listener, router)
            .with_graceful_shutdown(async move {
                let _ = api_stop.wait_for(|s| *s).await;
            })
            .await
    });
    let reap_registry = registry.clone();
    let (every, timeout) = (cfg.fleet.heartbeat_interval, cfg.fleet.agent_timeout);
    let reaper = tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            reap_registry.reap(timeout);
        }
    });
    let scheduled = crate::schedule::start(&api, &cfg.checks, cfg.fleet.default_deadline);
    tracing::info!(api = %bound.api, grpc = %bound.grpc, regions = ?cfg.regions(), checks = cfg.checks.len(), "coordinator up");
    ready(bound);
    let mut live = Live {
        mtime: config_path.as_deref().and_then(mtime),
        path: config_path,
        api: api.clone(),
        agent_auth,
        generated,
        current: cfg,
        scheduled,
    };
    let mut shutdown = std::pin::pin!(shutdown);
    let mut hup = hangups();
    // A change of the file is noticed too (a cheap mtime poll), as if SIGHUP had been sent.
    let mut poll = tokio::time::interval(std::time::Duration::from_secs(2));
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            Some(()) = hup.recv() => live.reload("SIGHUP"),
            _ = poll.tick() => {
                let now = live.path.as_deref().and_then(mtime);
                if now.is_some() && now != live.mtime {
                    live.reload("the configuration file changed");
                }
            }
        }
    }
    tracing::info!("shutting down");
    for h in live.scheduled.drain(..) {
        h.abort();
    }
    let _ = stop_tx.send(true);
    reaper.abort();
    let _ = grpc.await;
    let _ = http.await;
    Ok(())
}
