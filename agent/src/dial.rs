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
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// Over the network: TCP to the endpoint's address, TLS when it is `https://`. A plain
    /// `http://` connection watches the coordinator's first bytes: a TLS record there (the
    /// alert a TLS server sends for the HTTP/2 preface) ends it with [`AnsweredInTls`]
    /// instead of an HTTP/2 framing error.
    pub fn network() -> Self {
        Dialer(Arc::new(|endpoint: Endpoint| {
            Box::pin(async move {
                if endpoint.uri().scheme_str() == Some("http") {
                    TLS_ANSWER.store(false, Ordering::Relaxed);
                    endpoint.connect_with_connector(plain_connector()).await
                } else {
                    endpoint.connect().await
                }
            })
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

/// TCP to the URI's host and port (TCP_NODELAY, as tonic's own connector), its reads
/// watched by [`TlsSniff`].
fn plain_connector() -> impl tower::Service<
    http::Uri,
    Response = hyper_util::rt::TokioIo<TlsSniff<tokio::net::TcpStream>>,
    Error = std::io::Error,
    Future = impl Future<
        Output = std::io::Result<hyper_util::rt::TokioIo<TlsSniff<tokio::net::TcpStream>>>,
    > + Send,
> + Clone {
    tower::service_fn(|uri: http::Uri| async move {
        let host = uri
            .host()
            .map(|h| h.trim_start_matches('[').trim_end_matches(']').to_string())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no host"))?;
        let port = uri.port_u16().unwrap_or(80);
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
        tcp.set_nodelay(true)?;
        Ok(hyper_util::rt::TokioIo::new(TlsSniff {
            inner: tcp,
            first: true,
        }))
    })
}

/// Whether the last plain `http://` connection the network dialer opened was answered with
/// a TLS record. HTTP/2 may end the request in flight as "operation was canceled" rather
/// than with [`AnsweredInTls`] itself, depending on which it notices first; a session error
/// of the connection it dialed reads this to name the cause either way. Cleared at the next
/// plain dial (an agent holds one coordinator connection at a time).
static TLS_ANSWER: AtomicBool = AtomicBool::new(false);

/// See [`TLS_ANSWER`].
pub fn plain_dial_answered_in_tls() -> bool {
    TLS_ANSWER.load(Ordering::Relaxed)
}

/// The coordinator answered a plain-HTTP/2 connection with a TLS record: it serves TLS
/// (`[server.tls]`), and the agent dialed `http://`.
#[derive(Debug, thiserror::Error)]
#[error("the coordinator answered in TLS (it serves [server.tls]): write --coordinator https://… (with --ca-file when its certificate is not from a public CA)")]
pub struct AnsweredInTls;

/// A connection whose first bytes from the peer are checked: a TLS record header (content
/// type alert 21 or handshake 22, then version major 3) is no HTTP/2 frame a coordinator
/// would send, so the read fails with [`AnsweredInTls`].
#[derive(Debug)]
pub struct TlsSniff<T> {
    inner: T,
    /// No byte read yet.
    first: bool,
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for TlsSniff<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if self.first && buf.filled().len() > before {
            self.first = false;
            let got = &buf.filled()[before..];
            // An HTTP/2 frame starts with a 24-bit length: 0x15 0x03 or 0x16 0x03 would be a
            // frame of over 1.3 MB, larger than any coordinator's (16 KiB).
            if matches!(got, [0x15 | 0x16, 0x03, ..]) || got == [0x15] || got == [0x16] {
                TLS_ANSWER.store(true, Ordering::Relaxed);
                return std::task::Poll::Ready(Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    AnsweredInTls,
                )));
            }
        }
        polled
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for TlsSniff<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// Whether `error` or anything behind it is [`AnsweredInTls`] (kept inside an I/O error, or
/// only said in a message that carried it).
pub fn answered_in_tls(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        if e.is::<AnsweredInTls>()
            || e.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .is_some_and(|inner| inner.is::<AnsweredInTls>())
            || e.to_string().contains("the coordinator answered in TLS")
        {
            return true;
        }
        next = e.source();
    }
    false
}

/// The innermost cause of `error` and whether it is a TLS failure (a rustls error, or an I/O
/// error carrying one), when there is a cause behind it.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> Option<(String, bool)> {
    let mut tls = false;
    let mut root = None;
    let mut next = error.source();
    while let Some(e) = next {
        let inner = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref());
        tls |= e.is::<rustls::Error>() || inner.is_some_and(|i| i.is::<rustls::Error>());
        let text = e.to_string();
        tls |= text.contains("tls handshake eof");
        root = Some(text);
        next = e.source();
    }
    root.map(|r| (r, tls))
}

/// What a failed connection says after `connecting to URL: transport error`: its root cause
/// and, for a TLS handshake that failed, the likely mistake: a coordinator that serves plain
/// HTTP/2 (no `[server.tls]`) answers a ClientHello with HTTP/2 bytes, which TLS reads as a
/// corrupt record; a certificate the agent does not trust needs `--ca-file`.
fn connect_detail(url: &str, source: &tonic::transport::Error) -> String {
    let Some((root, tls)) = root_cause(source) else {
        return String::new();
    };
    if !tls || !url.starts_with("https://") {
        return format!(" ({root})");
    }
    let plain = root.contains("InvalidContentType")
        || root.contains("corrupt message")
        || root.contains("tls handshake eof")
        || root.contains("close_notify");
    if plain {
        format!(
            " (TLS handshake failed: {root}); does the coordinator serve TLS? Without [server.tls] it speaks plain HTTP/2: write --coordinator http://… or enable [server.tls] on the coordinator"
        )
    } else if root.contains("certificate") || root.contains("UnknownIssuer") {
        format!(
            " (TLS handshake failed: {root}); give the CA of the coordinator's certificate with --ca-file, and dial a name its certificate holds"
        )
    } else {
        format!(" (TLS handshake failed: {root})")
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
    #[error("connecting to {coordinator}: {source}{}", connect_detail(.coordinator, .source))]
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
