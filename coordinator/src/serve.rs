//! `vantage serve`: the coordinator. Agent gRPC, the HTTP API with /metrics (and optionally
//! a separate metrics port), the in-process vantage and the reaper of silent agents, until a
//! shutdown signal; then a bounded drain (`shutdown`). SIGHUP or a change of the file
//! re-reads the configuration (`reload`).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::serve::{ListenerExt, TapIo};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tonic::transport::server::TcpIncoming;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use vantage_agent::pem::{self, PemError};
use vantage_agent::{Engine, Policy, ProbeOptions};

use crate::api::{self, Api};
use crate::checks::{Checks, Degraded, Dispatcher, Store};
use crate::config::{Config, ConfigError};
use crate::fleet::{FleetService, Registry};
use crate::metrics::Metrics;
use crate::reload::{mtime, secrets, Live, Secrets};
use crate::token_file::{GeneratedToken, TokenFileError};

/// Why the coordinator could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Pem(#[from] PemError),
    #[error(transparent)]
    TokenFile(#[from] TokenFileError),
    #[error("binding {what} on {addr}")]
    Bind {
        what: &'static str,
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("server.tls")]
    Tls(#[source] tonic::transport::Error),
    #[error("probe: the in-process vantage cannot start")]
    Probe(#[source] vantage_agent::EngineError),
    #[error("metrics: {0}")]
    Metrics(prometheus::Error),
}

async fn bind(
    what: &'static str,
    addr: SocketAddr,
) -> Result<(TcpListener, SocketAddr), ServeError> {
    let err = |source| ServeError::Bind { what, addr, source };
    let l = TcpListener::bind(addr).await.map_err(err)?;
    let local = l.local_addr().map_err(err)?;
    Ok((l, local))
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
#[derive(Debug, Clone)]
pub struct Bound {
    pub api: SocketAddr,
    pub grpc: SocketAddr,
    pub metrics: Option<SocketAddr>,
    /// Where the generated API token was written, when none is configured (the caller
    /// tells people; the log line carries it too).
    pub generated_token: Option<std::path::PathBuf>,
}

/// The gRPC server builder, with TLS from `server.tls` when configured.
fn grpc_server(cfg: &Config) -> Result<Server, ServeError> {
    let server = Server::builder()
        .http2_keepalive_interval(Some(Duration::from_secs(10)))
        .http2_keepalive_timeout(Some(Duration::from_secs(5)));
    let Some(tls) = &cfg.server.tls else {
        return Ok(server);
    };
    let cert = pem::read_certificates("server.tls.cert_file", &tls.cert_file)?;
    let key = pem::read("server.tls.key_file", &tls.key_file)?;
    let mut tls_config = ServerTlsConfig::new().identity(Identity::from_pem(cert, key));
    if let Some(ca) = &tls.client_ca_file {
        let pem = pem::read_certificates("server.tls.client_ca_file", ca)?;
        tls_config = tls_config.client_ca_root(tonic::transport::Certificate::from_pem(pem));
    }
    server.tls_config(tls_config).map_err(ServeError::Tls)
}

/// The gRPC listener's connections, with TCP_NODELAY. tonic sets it only on listeners it
/// binds itself. Without it (Nagle's algorithm), a small write that follows another one
/// still unacknowledged waits for the peer's delayed ACK, about 40 ms on Linux: the p99 of
/// BENCHMARKS.md's "Multi-region overhead".
fn grpc_incoming(listener: TcpListener) -> TcpIncoming {
    TcpIncoming::from(listener).with_nodelay(Some(true))
}

/// An HTTP listener's connections, with TCP_NODELAY (see `grpc_incoming`): axum does not
/// set it.
fn http_incoming(listener: TcpListener) -> TapIo<TcpListener, fn(&mut TcpStream)> {
    listener.tap_io(nodelay as fn(&mut TcpStream))
}

fn nodelay(tcp: &mut TcpStream) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!("TCP_NODELAY on an accepted connection: {e}");
    }
}

/// Serve an axum router until `stop` turns true.
fn http(
    listener: TcpListener,
    router: axum::Router,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        // The peer's address reaches the handlers (the log line of a refused API token).
        let service = router.into_make_service_with_connect_info::<std::net::SocketAddr>();
        let _ = axum::serve(http_incoming(listener), service)
            .with_graceful_shutdown(async move {
                let _ = stop.wait_for(|s| *s).await;
            })
            .await;
    })
}

/// Start everything; `ready` gets the bound addresses; returns when `shutdown` completes and
/// the drain is over. With `config_path`, SIGHUP re-reads it (see `reload`).
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
    let extra_ca_pem = pem::read_certificates_opt("probe.ca_file", cfg.probe.ca_file.as_deref())?;

    let registry = Arc::new(Registry::default());
    // The in-process vantage's own settings; each job brings its deadline, policy and
    // credentials, as it does to an agent.
    let local = if cfg.fleet.local_agent {
        let engine = Engine::new(ProbeOptions {
            region: cfg.fleet.local_region.clone(),
            check_timeout: cfg.probe.check_timeout,
            extra_ca_pem,
            // A fleet vantage: the target obeys probe.allow_non_global like every address.
            allow_named_target: false,
            ipv6: cfg.probe.ipv6,
            ..ProbeOptions::default()
        })
        .map_err(ServeError::Probe)?;
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
    let metrics = Arc::new(Metrics::new(prometheus::Registry::new()).map_err(ServeError::Metrics)?);
    metrics.set_in_process(
        cfg.fleet
            .local_agent
            .then(|| cfg.fleet.local_region.clone()),
    );
    // Bound before the token is generated: its default path is per API port, and a port we
    // hold is no other live coordinator's, so its file is ours to write and to remove.
    let server = grpc_server(&cfg)?;
    let (grpc_listener, grpc_addr) = bind("server.grpc_listen", cfg.server.grpc_listen).await?;
    let (api_listener, api_addr) = bind("server.api_listen", cfg.server.api_listen).await?;
    let metrics_listener = match cfg.server.metrics_listen {
        Some(addr) => Some(bind("server.metrics_listen", addr).await?),
        None => None,
    };
    // Removed when `serve` returns.
    let mut generated = None;
    if tokens.is_empty() {
        let g =
            GeneratedToken::create(cfg.server.generated_token_file.as_deref(), api_addr.port())?;
        tracing::warn!(
            path = %g.path.display(),
            "no server.api_tokens configured: generated an API token (mode 0600, removed at exit); `vantage check --coordinator` on this machine reads it from there"
        );
        tokens.push(g.token.clone());
        generated = Some(g);
    }
    let checks = Arc::new(Checks {
        credentials: std::sync::RwLock::new(credentials),
        regions: std::sync::RwLock::new(cfg.regions()),
        dispatcher,
        store: Arc::new(Store::new(cfg.store.max_reports, cfg.store.max_age)),
        metrics,
        degraded: Arc::new(Degraded::default()),
    });
    let api = Arc::new(Api {
        tokens: std::sync::RwLock::new(tokens),
        default_deadline: cfg.fleet.default_deadline,
        max_body_bytes: cfg.server.max_body_bytes,
        rate: crate::api::RateLimit::new(cfg.server.checks_per_target_per_minute),
        in_flight: crate::api::InFlight::new(cfg.server.max_checks_in_flight),
        metrics_require_auth: cfg.server.metrics_require_auth,
        registry: registry.clone(),
        checks: checks.clone(),
        auth_log: Default::default(),
    });

    let bound = Bound {
        api: api_addr,
        grpc: grpc_addr,
        metrics: metrics_listener.as_ref().map(|(_, a)| *a),
        generated_token: generated.as_ref().map(|g: &GeneratedToken| g.path.clone()),
    };

    let agent_auth = Arc::new(std::sync::RwLock::new(agents));
    let service = FleetService {
        registry: registry.clone(),
        agents: agent_auth.clone(),
        heartbeat: cfg.fleet.heartbeat_interval,
    };
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut grpc_stop = stop_rx.clone();
    let mut server = server;
    let grpc = tokio::spawn(
        server
            .add_service(service.into_server())
            .serve_with_incoming_shutdown(grpc_incoming(grpc_listener), async move {
                let _ = grpc_stop.wait_for(|s| *s).await;
            }),
    );
    let draining = Arc::new(AtomicBool::new(false));
    let guard = axum::middleware::from_fn_with_state(draining.clone(), crate::shutdown::guard);
    let mut servers = vec![http(
        api_listener,
        api::router(api.clone()).layer(guard.clone()),
        stop_rx.clone(),
    )];
    if let Some((listener, _)) = metrics_listener {
        servers.push(http(
            listener,
            api::monitoring_router(api.clone()).layer(guard),
            stop_rx.clone(),
        ));
    }
    let reap_registry = registry.clone();
    let (every, timeout) = (cfg.fleet.heartbeat_interval, cfg.fleet.agent_timeout);
    let reaper = tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            reap_registry.reap(timeout);
        }
    });
    let scheduled = crate::schedule::start(&checks, &cfg.checks, cfg.fleet.default_deadline);
    tracing::info!(
        api = %bound.api,
        grpc = %bound.grpc,
        metrics = %bound
            .metrics
            .map_or_else(|| "on the API port".to_string(), |m| m.to_string()),
        regions = ?cfg.regions(),
        agents = cfg.agents.len(),
        checks = cfg.checks.len(),
        "coordinator up"
    );
    if cfg.agents.is_empty() {
        tracing::info!("no [[agents]] configured: only the in-process vantage runs checks; agents need an [[agents]] entry (name, region, token) to attach");
    }
    ready(bound);
    let mut live = Live {
        mtime: config_path.as_deref().and_then(mtime),
        path: config_path,
        api: api.clone(),
        agent_auth,
        registry: registry.clone(),
        generated: generated.as_ref().map(|g| g.token.clone()),
        current: cfg,
        scheduled,
    };
    let mut shutdown = std::pin::pin!(shutdown);
    let mut hup = hangups();
    // A change of the file is noticed too (a cheap mtime poll), as if SIGHUP had been sent.
    let mut poll = tokio::time::interval(Duration::from_secs(2));
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
    draining.store(true, Ordering::SeqCst);
    for h in live.scheduled.drain(..) {
        h.abort();
    }
    crate::shutdown::drain(&api, live.current.server.drain_timeout).await;
    let _ = stop_tx.send(true);
    reaper.abort();
    let mut handles: Vec<JoinHandle<()>> = servers;
    handles.push(tokio::spawn(async move {
        let _ = grpc.await;
    }));
    let aborts: Vec<_> = handles.iter().map(JoinHandle::abort_handle).collect();
    let closing = futures::future::join_all(handles);
    if tokio::time::timeout(crate::shutdown::LISTENER_GRACE, closing)
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the drain were cut");
        for a in aborts {
            a.abort();
        }
    }
    drop(generated);
    tracing::info!("stopped");
    Ok(())
}

#[cfg(test)]
#[path = "serve_tests.rs"]
mod tests;
