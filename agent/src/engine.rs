//! The probe engine: one vantage's checks of one target, in client order, under an overall
//! deadline, each exchange under its own timeout and byte caps.

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http::Method;
use ipnet::IpNet;

use crate::model::{Era, Outcome, RegionResult, RegionStatus, Severity};
use crate::netclass;
use crate::probe::dns::{self, ResolverChoice};
use crate::probe::http::{exchange, Exchange, ExchangeError, Limits, ProbeRequest, SseRead};
use crate::probe::verdict::{Recorder, Verdict};
use crate::probe::{connect, era, redirect, tls, transport};
use crate::target::Target;

/// Everything that shapes one vantage's run. Defaults live here, once.
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// The region label this vantage reports as.
    pub region: String,
    /// The whole run must finish within this.
    pub deadline: Duration,
    /// One exchange (or one connect, handshake, query) must finish within this.
    pub check_timeout: Duration,
    /// Extra prefixes treated as globally routable (laboratories).
    pub assume_global: Vec<IpNet>,
    /// Extra trust anchors (PEM) besides the web PKI roots.
    pub extra_ca_pem: Option<Vec<u8>>,
    /// Whether to connect to non-global addresses. True for the operator's own
    /// single-machine `vantage check`; false for a fleet agent (SSRF guard).
    pub connect_non_global: bool,
    pub resolver: ResolverChoice,
    pub limits: Limits,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            region: "local".into(),
            deadline: Duration::from_secs(30),
            check_timeout: Duration::from_secs(5),
            assume_global: Vec::new(),
            extra_ca_pem: None,
            connect_non_global: true,
            resolver: ResolverChoice::default(),
            limits: Limits::default(),
        }
    }
}

/// Why an engine could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Trust(#[from] tls::TrustError),
    #[error("building the HTTP client: {0}")]
    Client(String),
}

/// A reusable probe engine (its TLS configuration is built once).
#[derive(Debug, Clone)]
pub struct Engine {
    opts: ProbeOptions,
    tls: Arc<rustls::ClientConfig>,
}

/// What the stages learn as they go.
#[derive(Debug, Default)]
struct State {
    era: Option<Era>,
    protected: bool,
    phases: BTreeMap<String, u64>,
    dns: Option<crate::model::DnsObservation>,
}

const SKIP_ORDER_NOTE: &str = "an earlier stage failed";

impl Engine {
    pub fn new(opts: ProbeOptions) -> Result<Self, EngineError> {
        let tls = tls::client_config(opts.extra_ca_pem.as_deref())?;
        Ok(Engine { opts, tls })
    }

    pub fn options(&self) -> &ProbeOptions {
        &self.opts
    }

    /// Run every check against `target` and return this vantage's region section.
    pub async fn run(&self, target: &Target) -> RegionResult {
        let started = Instant::now();
        let deadline = started + self.opts.deadline;
        let mut rec = Recorder::default();
        let mut state = State::default();
        let finished = tokio::time::timeout(
            self.opts.deadline,
            self.stages(target, deadline, &mut rec, &mut state),
        )
        .await;
        let status = match finished {
            Ok(()) => RegionStatus::Complete,
            Err(_) => {
                rec.skip_rest(&format!(
                    "the overall deadline ({} s) ran out before this check",
                    self.opts.deadline.as_secs_f64()
                ));
                RegionStatus::Partial
            }
        };
        rec.skip_rest(SKIP_ORDER_NOTE);
        let total = started.elapsed().as_millis() as u64;
        state.phases.insert("total".into(), total);
        RegionResult {
            region: self.opts.region.clone(),
            status,
            duration_ms: total,
            era: state.era.unwrap_or(Era::Unknown),
            protected: state.protected,
            authenticated: false,
            dns: state.dns,
            phases_ms: state.phases,
            checks: rec.finish(),
        }
    }

    fn budget(&self, deadline: Instant) -> Duration {
        self.opts
            .check_timeout
            .min(deadline.saturating_duration_since(Instant::now()))
    }

    async fn stages(&self, target: &Target, deadline: Instant, rec: &mut Recorder, st: &mut State) {
        // 1. DNS
        let t = Instant::now();
        let addrs: Vec<IpAddr> = if target.is_local() {
            for id in ["dns.resolve", "dns.a-record", "dns.global-addresses"] {
                rec.record_ms(id, Verdict::skip("local target"), 0);
            }
            target.local_addresses()
        } else {
            let (obs, addrs) = dns::resolve(
                &target.host,
                &self.opts.resolver,
                &self.opts.assume_global,
                self.budget(deadline),
                rec,
            )
            .await;
            st.dns = Some(obs);
            addrs
        };
        st.phases
            .insert("dns".into(), t.elapsed().as_millis() as u64);
        if addrs.is_empty() {
            rec.skip_rest("the name did not resolve");
            return;
        }
        let allowed: Vec<IpAddr> = if self.opts.connect_non_global {
            addrs
        } else {
            addrs
                .into_iter()
                .filter(|&ip| netclass::classify(ip, &self.opts.assume_global).global)
                .collect()
        };
        if allowed.is_empty() {
            rec.skip_rest("every address is non-global and this vantage does not connect to non-global addresses");
            return;
        }

        // 2. Connect
        let t = Instant::now();
        let connected =
            connect::connect_all(&allowed, target.port, self.budget(deadline), rec).await;
        st.phases
            .insert("connect".into(), t.elapsed().as_millis() as u64);
        let Some(&pinned) = connected.first() else {
            rec.skip_rest("no address accepted a connection");
            return;
        };

        // 3. TLS
        let t = Instant::now();
        if target.https {
            let now = time::OffsetDateTime::now_utc().unix_timestamp();
            let ok = tls::check(
                &connected,
                &target.host,
                self.tls.clone(),
                self.budget(deadline),
                now,
                rec,
            )
            .await;
            st.phases
                .insert("tls".into(), t.elapsed().as_millis() as u64);
            rec.record_ms("tls.plain-http", Verdict::pass("https"), 0);
            if !ok {
                rec.skip_rest("the TLS handshake failed");
                return;
            }
        } else {
            rec.record_ms("tls.handshake", Verdict::skip("plain http"), 0);
            rec.record_ms("tls.expiry", Verdict::skip("plain http"), 0);
            let v = if target.is_local() {
                Verdict::skip("local target")
            } else {
                Verdict::fail(
                    Severity::High,
                    "http:// on a non-local endpoint: requests and tokens travel unencrypted",
                )
            };
            rec.record_ms("tls.plain-http", v, 0);
        }

        let client = match self.client(target, pinned) {
            Ok(c) => c,
            Err(e) => {
                rec.record_ms("redirect.none", Verdict::error(e), 0);
                rec.skip_rest("the HTTP client could not be built");
                return;
            }
        };
        self.protocol(target, &client, deadline, rec, st).await;
    }

    fn client(&self, target: &Target, pinned: SocketAddr) -> Result<reqwest::Client, String> {
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .use_preconfigured_tls((*self.tls).clone())
            .connect_timeout(self.opts.check_timeout)
            .pool_max_idle_per_host(8)
            .user_agent(concat!("vantage/", env!("CARGO_PKG_VERSION")));
        if target.ip.is_none() {
            // The address connected to is the one resolved and classified above: no second
            // lookup that DNS rebinding could change.
            builder = builder.resolve(&target.host, pinned);
        }
        builder.build().map_err(|e| e.to_string())
    }

    async fn send(
        &self,
        client: &reqwest::Client,
        target: &Target,
        req: &ProbeRequest,
        deadline: Instant,
        sse: SseRead,
    ) -> Result<Exchange, ExchangeError> {
        exchange(
            client,
            &target.url,
            req,
            &self.opts.limits,
            self.budget(deadline),
            sse,
        )
        .await
    }

    async fn protocol(
        &self,
        target: &Target,
        client: &reqwest::Client,
        deadline: Instant,
        rec: &mut Recorder,
        st: &mut State,
    ) {
        // 4. Shape and era: server/discover and initialize, side by side.
        let t = Instant::now();
        let discover_req = ProbeRequest::modern("server/discover", 1, Default::default());
        let init_req = ProbeRequest::legacy_initialize(2);
        let (discover, initialize) = tokio::join!(
            self.send(
                client,
                target,
                &discover_req,
                deadline,
                SseRead::UntilResponse
            ),
            self.send(client, target, &init_req, deadline, SseRead::UntilResponse),
        );
        let discover = match discover {
            Ok(ex) => ex,
            Err(e) => {
                rec.record(
                    "redirect.none",
                    Verdict::skip("server/discover got no response"),
                    t,
                );
                rec.record(
                    "era.detect",
                    Verdict::fail(Severity::High, format!("server/discover: {}", e.message))
                        .cause(e.cause),
                    t,
                );
                rec.skip_rest("server/discover got no response");
                return;
            }
        };
        st.phases
            .insert("first_byte".into(), discover.first_byte_ms);
        if let Some(v) = redirect::verdict(&discover, target) {
            let failed = v.outcome == Outcome::Fail;
            rec.record("redirect.none", v, t);
            if failed {
                rec.skip_rest("the endpoint redirects, and redirects are never followed");
                return;
            }
        }
        if discover.status == 401 {
            st.protected = true;
            rec.skip_rest("the endpoint requires authorization (401) and no credential was given; name one with --token-env");
            return;
        }
        let initialize = initialize.ok();
        let mut get_fallback = None;
        if !era::discover_works(&discover)
            && !era::modern_signal(&discover)
            && !initialize.as_ref().is_some_and(era::initialize_works)
        {
            let req = ProbeRequest::bare(Method::GET, &[("Accept", "text/event-stream")]);
            get_fallback = self
                .send(client, target, &req, deadline, SseRead::FirstEvent)
                .await
                .ok();
        }
        let era = era::classify(Some(&discover), initialize.as_ref(), get_fallback.as_ref());
        st.era = Some(era);
        rec.record(
            "era.detect",
            era::era_verdict(era, Some(&discover), initialize.as_ref()),
            t,
        );

        let mut seen: Vec<(String, Exchange)> = vec![("discover".into(), discover.clone())];
        if let Some(i) = &initialize {
            seen.push(("initialize".into(), i.clone()));
        }
        let transport_ids: Vec<&str> = if era.speaks_2026() {
            rec.record(
                "discover.shape",
                era::discover_shape(&discover, &serde_json::json!(1)),
                t,
            );
            vec![
                "transport.notification",
                "transport.get",
                "transport.delete",
                "headers.missing-method",
                "headers.method-mismatch",
                "headers.name-mismatch",
                "headers.missing-version",
                "version.unsupported",
                "meta.missing",
                "method.unknown",
                "security.origin",
                "cors.preflight",
            ]
        } else {
            let reason = "the server does not speak 2026-07-28";
            for spec in crate::catalog::CHECKS
                .iter()
                .filter(|c| c.stage == crate::catalog::Stage::Transport || c.id == "discover.shape")
            {
                if !matches!(
                    spec.id,
                    "security.origin" | "cors.preflight" | "transport.sse-buffering"
                ) {
                    rec.record_ms(spec.id, Verdict::skip(reason), 0);
                }
            }
            if era == Era::NotMcp {
                vec!["cors.preflight"]
            } else {
                vec!["security.origin", "cors.preflight"]
            }
        };

        // 5. Transport checks, concurrently: each is independent of the others.
        let caps = era::capabilities(&discover).unwrap_or_default();
        let runs = transport_ids.iter().enumerate().map(|(i, &id)| {
            let caps = &caps;
            async move {
                let started = Instant::now();
                let req = if id == "security.origin" && !era.speaks_2026() {
                    Ok(ProbeRequest::legacy_initialize(100 + i as i64)
                        .with_header("Origin", transport::FOREIGN_ORIGIN))
                } else {
                    transport::request(id, 100 + i as i64, caps)
                };
                let req = match req {
                    Ok(r) => r,
                    Err(reason) => return (id, Verdict::skip(reason), None, started),
                };
                let mode = if matches!(id, "transport.get") {
                    SseRead::HeadersOnly
                } else {
                    SseRead::UntilResponse
                };
                match self.send(client, target, &req, deadline, mode).await {
                    Ok(ex) => (id, transport::evaluate(id, &ex, era), Some(ex), started),
                    Err(e) => (
                        id,
                        Verdict::fail(Severity::Medium, format!("no response: {}", e.message))
                            .cause(e.cause),
                        None,
                        started,
                    ),
                }
            }
        });
        let results = futures::future::join_all(runs).await;
        let mut for_body_check = Vec::new();
        for (id, verdict, ex, started) in results {
            let outcome = verdict.outcome;
            rec.record(id, verdict, started);
            if let Some(ex) = ex {
                seen.push((id.to_string(), ex));
                for_body_check.push((id, outcome));
            }
        }
        let exchanges: Vec<&Exchange> = seen.iter().map(|(_, e)| e).collect();
        rec.record_ms(
            "transport.sse-buffering",
            transport::sse_buffering(&exchanges),
            0,
        );
        if era.speaks_2026() {
            let triples: Vec<(&str, Outcome, &Exchange)> = for_body_check
                .iter()
                .filter_map(|(id, outcome)| {
                    seen.iter()
                        .find(|(k, _)| k == id)
                        .map(|(_, ex)| (*id, *outcome, ex))
                })
                .collect();
            rec.record_ms("jsonrpc.error-body", transport::error_body(&triples), 0);
        }
    }
}
