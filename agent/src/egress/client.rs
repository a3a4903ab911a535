//! The probe engine's only HTTP client. Its `reqwest::Client` is private: a request can
//! only be made through [`EgressClient::request`], which checks the URL (an address literal
//! never reaches the connector unchecked), and every name is resolved by the policy's
//! resolver. Redirects are never followed, proxies never used.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use url::Url;

use super::resolve::PolicyResolver;
use super::{EgressError, EgressPolicy};
use crate::credentials::Credentials;
use crate::probe::dns::ResolverChoice;

/// What shapes the client besides the policy.
#[derive(Debug, Clone)]
pub struct ClientSettings {
    pub tls: Arc<rustls::ClientConfig>,
    /// TCP (and TLS) connect timeout; also the resolver's per-query timeout.
    pub connect_timeout: Duration,
    pub resolver: ResolverChoice,
    /// Names already resolved and checked (the target's), used without a new lookup.
    pub pinned: Vec<(String, Vec<IpAddr>)>,
    /// Idle connections kept per host (0: every request connects afresh).
    pub idle_per_host: usize,
}

/// Which connection a request rides on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// One the pool keeps idle between requests (or a new one it then keeps).
    Pooled,
    /// One of its own: never one another request left idle in the pool, and closed after
    /// its answer.
    Own,
}

/// A 3xx answer a request got (redirects are never followed): which URL was asked, by
/// which request, the status and the Location as sent (already scrubbed of the run's
/// tokens), and what the egress policy says of that Location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirected {
    pub url: Url,
    /// The request, e.g. `POST tools/list (with the credential)`, `GET`.
    pub request: String,
    pub status: u16,
    pub location: Option<String>,
    /// [`super::location_note`] of the Location (empty without one).
    pub note: String,
}

/// Every 3xx the run's client saw, in the order the answers came (at most
/// [`REDIRECTS_KEPT`]): `redirect.none` judges all of them, not only the first exchange.
pub type RedirectLog = Arc<std::sync::Mutex<Vec<Redirected>>>;

/// How many redirects a run keeps (one per request at most; a run sends about a hundred).
pub const REDIRECTS_KEPT: usize = 256;

/// An HTTP client that connects only where the egress policy admits.
#[derive(Debug, Clone)]
pub struct EgressClient {
    http: reqwest::Client,
    /// The same client with no idle pool: every request on it opens a connection of its
    /// own and closes it after the answer (the second reading of a list must never ride
    /// on a connection the first one left open).
    fresh: reqwest::Client,
    policy: Arc<EgressPolicy>,
    /// The run's tokens: every answer that comes through this client is scrubbed of them
    /// at capture, before anything clips it (`crate::probe::observed`).
    credentials: Credentials,
    /// The secret values of the target URL's query, scrubbed the same way (never sent as
    /// a token).
    also: Vec<SecretString>,
    /// The target's own text ([`crate::credentials::public_text`]): a piece of a secret
    /// inside it is left in the answers ([`crate::credentials::Pieces::beside`]).
    public: String,
    /// Every 3xx answer (shared by the clones of this client).
    redirects: RedirectLog,
}

impl EgressClient {
    pub fn new(policy: EgressPolicy, settings: ClientSettings) -> Result<Self, reqwest::Error> {
        let policy = Arc::new(policy);
        let resolver = PolicyResolver::new(
            policy.clone(),
            settings.resolver,
            settings.connect_timeout,
            settings.pinned,
        );
        let resolver = Arc::new(resolver);
        let build = |idle_per_host: usize| {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .use_preconfigured_tls((*settings.tls).clone())
                .connect_timeout(settings.connect_timeout)
                .dns_resolver(resolver.clone())
                .pool_max_idle_per_host(idle_per_host)
                .user_agent(concat!("vantage/", env!("CARGO_PKG_VERSION")))
                // Every answer is observed as sent: only identity is asked for, and nothing
                // is decoded behind the checks' back (whatever reqwest features another
                // crate of the build enables). An encoded answer is not an observation of
                // its body (`probe::reason`).
                .default_headers(http::HeaderMap::from_iter([(
                    http::header::ACCEPT_ENCODING,
                    http::HeaderValue::from_static("identity"),
                )]))
                .no_gzip()
                .no_brotli()
                .no_deflate()
                .no_zstd()
                .build()
        };
        let http = build(settings.idle_per_host)?;
        let fresh = build(0)?;
        Ok(EgressClient {
            http,
            fresh,
            policy,
            credentials: Credentials::default(),
            also: Vec::new(),
            public: String::new(),
            redirects: RedirectLog::default(),
        })
    }

    /// The log of every 3xx answer this client (and its clones) saw.
    pub fn redirect_log(&self) -> RedirectLog {
        self.redirects.clone()
    }

    /// Note the answer to `request` (its label) at `url` when it is a redirect (3xx).
    pub fn note_redirect(
        &self,
        url: &Url,
        request: String,
        status: u16,
        headers: &http::HeaderMap,
    ) {
        if !(300..400).contains(&status) {
            return;
        }
        let location = headers
            .get(http::header::LOCATION)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        let note = location
            .as_deref()
            .map(|l| super::location_note(&self.policy, url, l))
            .unwrap_or_default();
        if let Ok(mut log) = self.redirects.lock() {
            if log.len() < REDIRECTS_KEPT {
                log.push(Redirected {
                    url: url.clone(),
                    request,
                    status,
                    location,
                    note,
                });
            }
        }
    }

    /// The same client, scrubbing `credentials` and `also` (the secret values of the
    /// target URL's query: [`crate::target::Target::query_secrets`]) out of every answer it
    /// captures, except their pieces inside `public`, the target URL's own text
    /// ([`crate::credentials::public_text`]: its host and path, which the report shows).
    pub fn with_secrets(
        mut self,
        credentials: Credentials,
        also: Vec<SecretString>,
        public: String,
    ) -> Self {
        self.credentials = credentials;
        self.also = also;
        self.public = public;
        self
    }

    /// The secrets every captured answer is scrubbed of.
    pub fn secrets(&self) -> Vec<&str> {
        let mut all = self.credentials.secrets();
        all.extend(self.also.iter().map(|s| s.expose_secret()));
        all
    }

    /// The pieces of [`EgressClient::secrets`] every captured answer is scrubbed of: all but
    /// those inside the target's own text ([`crate::credentials::Pieces::beside`]).
    pub fn pieces(&self) -> crate::credentials::Pieces<'_> {
        crate::credentials::Pieces::beside(&self.secrets(), &[self.public.as_str()])
    }

    pub fn policy(&self) -> &EgressPolicy {
        &self.policy
    }

    /// A request to `url` on the pooled client or on a connection of its own, or why it is
    /// not made (the policy checks the URL first).
    pub fn request(
        &self,
        method: http::Method,
        url: &Url,
        connection: Connection,
    ) -> Result<reqwest::RequestBuilder, EgressError> {
        self.policy.check_url(url)?;
        let client = match connection {
            Connection::Pooled => &self.http,
            Connection::Own => &self.fresh,
        };
        Ok(client.request(method, url.clone()))
    }

    /// Check the address a response came from. The policy already admitted it before the
    /// connect; this second look keeps any answer from a refused address out of the report
    /// should a future code path connect some other way.
    pub fn admit_peer(&self, peer: Option<SocketAddr>) -> Result<(), EgressError> {
        match peer {
            Some(p) => Ok(self.policy.check(p.ip())?),
            None => Ok(()),
        }
    }
}

/// A client for the crate's own tests: `policy`, `pinned` names, no resolver that answers
/// (127.0.0.1:9: a test that reaches its listener did no lookup), no idle pool.
#[cfg(test)]
pub(crate) fn test_client(
    policy: EgressPolicy,
    pinned: Vec<(String, Vec<std::net::IpAddr>)>,
) -> EgressClient {
    EgressClient::new(
        policy,
        ClientSettings {
            tls: crate::probe::tls::client_config(None).unwrap(),
            connect_timeout: std::time::Duration::from_secs(2),
            resolver: crate::probe::dns::ResolverChoice {
                nameservers: vec!["127.0.0.1:9".parse().unwrap()],
            },
            pinned,
            idle_per_host: 0,
        },
    )
    .unwrap()
}

/// [`test_client`] with loopback allowed (127.0.0.0/8), nothing pinned.
#[cfg(test)]
pub(crate) fn loopback_test_client() -> EgressClient {
    test_client(
        EgressPolicy::new(&crate::job::Policy {
            assume_global: Vec::new(),
            allow_non_global: vec!["127.0.0.0/8".parse().unwrap()],
        }),
        Vec::new(),
    )
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;
