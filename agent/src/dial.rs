//! How the agent reaches its coordinator: the endpoint (address, connect timeout, HTTP/2
//! keepalive, TLS and a client certificate) and the dialer that opens it. In production the
//! dialer is the network ([`Dialer::network`]); the client's tests hand in an in-memory
//! transport instead ([`Dialer::custom`]), with everything above the socket unchanged.
//!
//! The HTTP/2 keepalive is what notices a coordinator that went silent without closing the
//! connection (a frozen process, a path that drops packets): a ping unanswered for
//! [`KEEPALIVE_TIMEOUT`] ends the stream, and the agent reconnects.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Identity};

/// How long a connection attempt may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the connection may be quiet before the agent pings the coordinator.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
/// How long an unanswered ping is given before the connection counts as dead.
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(5);

/// What a dialer returns: a channel to the coordinator, or why not.
pub type DialFuture =
    Pin<Box<dyn Future<Output = Result<Channel, tonic::transport::Error>> + Send>>;

/// Opens a configured endpoint.
#[derive(Clone)]
pub struct Dialer(Arc<dyn Fn(Endpoint) -> DialFuture + Send + Sync>);

impl Dialer {
    /// Over the network: TCP to the endpoint's address, TLS when it is `https://`.
    pub fn network() -> Self {
        Dialer(Arc::new(|endpoint: Endpoint| {
            Box::pin(async move { endpoint.connect().await })
        }))
    }

    /// Through `dial`, given the endpoint with every setting applied (e.g.
    /// `Endpoint::connect_with_connector` over an in-memory transport, in tests).
    pub fn custom(dial: impl Fn(Endpoint) -> DialFuture + Send + Sync + 'static) -> Self {
        Dialer(Arc::new(dial))
    }
}

impl Default for Dialer {
    fn default() -> Self {
        Dialer::network()
    }
}

impl fmt::Debug for Dialer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Dialer")
    }
}

/// Why the coordinator could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum DialError {
    #[error("--coordinator {coordinator}: {source}")]
    Address {
        coordinator: String,
        source: tonic::transport::Error,
    },
    #[error("TLS: {source}")]
    Tls { source: tonic::transport::Error },
    #[error("connecting to {coordinator}: {source}")]
    Connect {
        coordinator: String,
        source: tonic::transport::Error,
    },
}

/// Where the coordinator is and how to trust it.
#[derive(Debug, Clone, Copy)]
pub struct Coordinator<'a> {
    /// `http://host:port` or `https://host:port` of its gRPC listener.
    pub url: &'a str,
    /// Trust anchors for a TLS coordinator.
    pub ca_pem: Option<&'a [u8]>,
    /// A client certificate and key (PEM) for mutual TLS.
    pub identity: Option<(&'a [u8], &'a [u8])>,
}

/// Open a channel to `to` through `dialer`.
pub async fn channel(to: Coordinator<'_>, dialer: &Dialer) -> Result<Channel, DialError> {
    let mut endpoint = Endpoint::from_shared(to.url.to_string())
        .map_err(|source| DialError::Address {
            coordinator: to.url.to_string(),
            source,
        })?
        .connect_timeout(CONNECT_TIMEOUT)
        .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
        .keep_alive_timeout(KEEPALIVE_TIMEOUT)
        .keep_alive_while_idle(true);
    if to.url.starts_with("https://") {
        let mut tls = ClientTlsConfig::new().with_webpki_roots();
        if let Some(pem) = to.ca_pem {
            tls = tls.ca_certificate(Certificate::from_pem(pem));
        }
        if let Some((cert, key)) = to.identity {
            tls = tls.identity(Identity::from_pem(cert, key));
        }
        endpoint = endpoint
            .tls_config(tls)
            .map_err(|source| DialError::Tls { source })?;
    }
    (dialer.0)(endpoint)
        .await
        .map_err(|source| DialError::Connect {
            coordinator: to.url.to_string(),
            source,
        })
}

/// A hint for an answer that is not the coordinator's gRPC service (an HTTP/1 server, the
/// API port, a proxy): name the likely mistake.
pub fn not_grpc_hint(message: &str) -> Option<&'static str> {
    let markers = [
        "invalid compression flag",
        "content-type",
        "status: 404",
        "h2 protocol error",
        "frame with invalid size",
        "http2 error",
    ];
    markers.iter().any(|m| message.contains(m)).then_some(
        "this does not look like the coordinator's gRPC port: is --coordinator the API port \
         (server.api_listen, default 8080)? Agents dial server.grpc_listen (default 50051)",
    )
}
