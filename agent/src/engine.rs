//! The probe engine: one vantage's checks of one target, in client order, under an overall
//! deadline, each exchange under its own timeout and byte caps.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ipnet::IpNet;

use crate::catalog::CheckId;
use crate::credentials::{Credentials, Pieces};
use crate::egress::{ClientSettings, EgressClient, EgressPolicy};
use crate::job::{Job, Policy};
use crate::model::{Cause, Era, Outcome, RegionResult, RegionStatus, Severity};
use crate::probe::dns::{self, ResolverChoice};
use crate::probe::http::{exchange, Exchange, ExchangeError, Limits, ProbeRequest, SseRead};
use crate::probe::verdict::{Recorder, Verdict};
use crate::probe::{connect, tls};
use crate::progress::{Progress, ProgressSink, ProgressStage};
use crate::target::Target;

mod deadline;
use deadline::deadline_note;

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
    /// The operator's own single-machine check (`vantage check`): the addresses of the
    /// target the operator named are allowed whatever their class. Every other address
    /// (metadata, authorization servers) obeys the egress policy all the same. False for a
    /// fleet vantage (the coordinator's in-process vantage and agents): there the target
    /// obeys the policy too.
    pub allow_named_target: bool,
    /// Non-global prefixes the vantage may still connect to (`probe.allow_non_global`;
    /// `--allow-non-global` for `vantage check`). See [`crate::egress`].
    pub allow_non_global: Vec<IpNet>,
    pub resolver: ResolverChoice,
    pub limits: Limits,
    /// Tokens for the authenticated and negative authorization checks.
    pub credentials: Credentials,
    /// The endpoint must be protected: an unauthenticated answer is a finding.
    pub expect_auth: bool,
    /// Read the capability lists (tools, resources, templates, prompts) under these bounds
    /// after the transport checks; `None` stops after the transport checks.
    pub listing: Option<crate::surface::ListingBounds>,
    /// Whether this vantage has IPv6. False (`--no-ipv6`, `probe.ipv6 = false`) declares a
    /// vantage without an IPv6 route: IPv6 addresses are not tried and `net.ipv6` is left
    /// out (skipped with that reason) instead of `unknown` (no route) on every dual-stack name.
    pub ipv6: bool,
    /// How long the `subscriptions/listen` stream is watched after its acknowledgement
    /// (`--listen-window`; `listen.sse`), beside the rest of the listing, within the run's
    /// deadline.
    pub listen_window: Duration,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            region: "local".into(),
            deadline: Duration::from_secs(30),
            check_timeout: Duration::from_secs(5),
            assume_global: Vec::new(),
            extra_ca_pem: None,
            allow_named_target: true,
            allow_non_global: Vec::new(),
            resolver: ResolverChoice::default(),
            limits: Limits::default(),
            credentials: Credentials::default(),
            expect_auth: false,
            listing: Some(crate::surface::ListingBounds::default()),
            ipv6: true,
            listen_window: crate::probe::http::LISTEN_WINDOW,
        }
    }
}

/// Why an engine could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Trust(#[from] tls::TrustError),
}

/// A reusable probe engine (its TLS configuration is built once).
#[derive(Debug, Clone)]
pub struct Engine {
    opts: ProbeOptions,
    tls: Arc<rustls::ClientConfig>,
    /// The secret values of the target URL's query during a run
    /// ([`Target::query_secrets`]): scrubbed like the tokens, never sent as one.
    url_secrets: Vec<secrecy::SecretString>,
    /// The target URL's own text during a run ([`crate::credentials::public_text`]): a
    /// piece of a secret inside it (a token carrying the endpoint's host name) is not
    /// scrubbed, the whole secret still is ([`Pieces::beside`]).
    url_public: String,
}

/// What the stages learn as they go.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) era: Option<Era>,
    pub(crate) protected: bool,
    pub(crate) authenticated: bool,
    /// The requests that asked for authorization without a token (the token probes').
    pub(crate) paths: crate::probe::auth::boundary::Paths,
    pub(crate) phases: BTreeMap<String, u64>,
    pub(crate) dns: Option<crate::model::DnsObservation>,
    pub(crate) tls: Option<crate::model::TlsObservation>,
    pub(crate) progress: ProgressSink,
    pub(crate) surface: Option<crate::surface::Surface>,
    pub(crate) stacks: Vec<crate::stack::StackSighting>,
    /// Every 3xx the run's client saw (`redirect.none` judges them all at the end).
    pub(crate) redirects: crate::egress::RedirectLog,
}

const SKIP_ORDER_NOTE: &str = "an earlier stage failed";

impl Engine {
    pub fn new(opts: ProbeOptions) -> Result<Self, EngineError> {
        let tls = tls::client_config(opts.extra_ca_pem.as_deref())?;
        Ok(Engine {
            opts,
            tls,
            url_secrets: Vec::new(),
            url_public: String::new(),
        })
    }

    /// The same engine with other options for one run, sharing this engine's TLS
    /// configuration instead of building the trust store again. The trust anchors stay this
    /// engine's: `opts.extra_ca_pem` is replaced by the one it was built with.
    pub fn with_options(&self, mut opts: ProbeOptions) -> Engine {
        opts.extra_ca_pem.clone_from(&self.opts.extra_ca_pem);
        Engine {
            opts,
            tls: self.tls.clone(),
            url_secrets: Vec::new(),
            url_public: String::new(),
        }
    }

    pub fn options(&self) -> &ProbeOptions {
        &self.opts
    }

    /// Run `job` on this vantage: its options come from [`Job::options`] over this engine's
    /// own (the TLS configuration is shared, not rebuilt).
    pub async fn run_job(&self, job: &Job) -> RegionResult {
        self.for_job(job).run(&job.target).await
    }

    /// Run `job` after it waited `queued` for a slot (an agent's `--concurrency`): it runs
    /// with what is left of its deadline, and checks the deadline cut say how long it waited.
    pub async fn run_job_queued(&self, job: &Job, queued: Duration) -> RegionResult {
        self.for_job(&job.after(queued))
            .run_inner(&job.target, ProgressSink::default(), queued)
            .await
    }

    /// Like [`Engine::run_job`], telling `progress` when each stage starts.
    pub async fn run_job_with_progress(
        &self,
        job: &Job,
        progress: std::sync::Arc<dyn Progress>,
    ) -> RegionResult {
        self.for_job(job)
            .run_with_progress(&job.target, progress)
            .await
    }

    fn for_job(&self, job: &Job) -> Engine {
        self.with_options(job.options(&self.opts))
    }

    /// Run every check against `target` with this engine's options as they are, and return
    /// this vantage's region section.
    pub async fn run(&self, target: &Target) -> RegionResult {
        self.run_inner(target, ProgressSink::default(), Duration::ZERO)
            .await
    }

    /// Like [`Engine::run`], telling `progress` when each stage starts.
    pub async fn run_with_progress(
        &self,
        target: &Target,
        progress: std::sync::Arc<dyn Progress>,
    ) -> RegionResult {
        self.run_inner(target, ProgressSink::new(progress), Duration::ZERO)
            .await
    }

    /// `queued`: how long the job waited for a slot before this run (0 outside an agent).
    /// The run scrubs the secret values of the target URL's query as it scrubs the tokens
    /// (the CLI, `vantage serve`'s vantage and an agent all run here, and each has the URL).
    async fn run_inner(
        &self,
        target: &Target,
        progress: ProgressSink,
        queued: Duration,
    ) -> RegionResult {
        let engine = Engine {
            url_secrets: target
                .query_secrets()
                .into_iter()
                .map(secrecy::SecretString::from)
                .collect(),
            url_public: crate::credentials::public_text(&target.url).to_string(),
            ..self.clone()
        };
        engine.run_scrubbing(target, progress, queued).await
    }

    async fn run_scrubbing(
        &self,
        target: &Target,
        progress: ProgressSink,
        queued: Duration,
    ) -> RegionResult {
        let started = Instant::now();
        let deadline = started + self.opts.deadline;
        let mut rec = Recorder::with_deadline(deadline, self.opts.deadline);
        let mut state = State {
            progress,
            ..State::default()
        };
        let finished = tokio::time::timeout(
            self.opts.deadline,
            self.stages(target, deadline, &mut rec, &mut state),
        )
        .await;
        let status = match finished {
            Ok(()) if rec.deadline_hit() => RegionStatus::Partial,
            Ok(()) => RegionStatus::Complete,
            Err(_) => {
                // Checks still due when the deadline ran out have no evidence either way:
                // `unknown`, never `skip` (a skip would read as "did not apply").
                rec.unknown_rest(Cause::Deadline, &deadline_note(self.opts.deadline, queued));
                RegionStatus::Partial
            }
        };
        // A redirect on any request, not only the first, is seen (checks.md 2.3), even in a
        // run the deadline cut: it was observed.
        crate::protocol::redirects_seen(&mut rec, target, &state.redirects);
        rec.skip_rest(SKIP_ORDER_NOTE);
        self.scrub_extra(&mut state);
        let total = started.elapsed().as_millis() as u64;
        state.phases.insert("total".into(), total);
        RegionResult {
            region: self.opts.region.clone(),
            status,
            agent: None,
            duration_ms: total,
            era: state.era.unwrap_or(Era::Unknown),
            protected: state.protected,
            authenticated: state.authenticated,
            dns: state.dns,
            tls: state.tls,
            phases_ms: state.phases,
            checks: self.scrubbed(rec),
            surface: state.surface,
            stacks: state.stacks,
        }
    }

    /// Every secret of the run: the tokens, and the secret values of the target URL's query.
    fn secrets(&self) -> Vec<&str> {
        let mut all = self.opts.credentials.secrets();
        all.extend(
            self.url_secrets
                .iter()
                .map(secrecy::ExposeSecret::expose_secret)
                .filter(|s| !s.is_empty()),
        );
        all
    }

    /// The pieces of `secrets` to scrub: all but those inside the target's own text.
    fn pieces<'a>(&self, secrets: &[&'a str]) -> Pieces<'a> {
        Pieces::beside(secrets, &[self.url_public.as_str()])
    }

    /// The results, with every piece of a secret (8 characters or more, the whole of a
    /// shorter one) replaced by `[redacted]`: a hostile server may echo a token back, whole
    /// or in pieces, in a body or a header that ends up in the evidence. Answers are scrubbed
    /// when captured; this is the last line of defence for text built from them.
    fn scrubbed(&self, rec: Recorder) -> Vec<crate::model::CheckResult> {
        let secrets = self.secrets();
        let mut checks = rec.finish();
        if !secrets.is_empty() {
            let pieces = self.pieces(&secrets);
            for c in &mut checks {
                c.observed = pieces.scrub(&c.observed);
                c.expected = pieces.scrub(&c.expected);
            }
        }
        checks
    }

    /// Every other string of the region's result the target chose, scrubbed like the checks:
    /// stack evidence (headers, error strings), the surface's item names and what stopped a
    /// listing, and the CNAMEs of its DNS answers.
    fn scrub_extra(&self, st: &mut State) {
        let secrets = self.secrets();
        if secrets.is_empty() {
            return;
        }
        let pieces = self.pieces(&secrets);
        let fix = |s: &mut String| *s = pieces.scrub(s);
        for s in &mut st.stacks {
            fix(&mut s.evidence);
        }
        if let Some(surface) = &mut st.surface {
            for list in &mut surface.lists {
                list.items.iter_mut().for_each(|item| fix(&mut item.name));
                list.stopped.iter_mut().for_each(fix);
            }
        }
        if let Some(dns) = &mut st.dns {
            dns.cname.iter_mut().for_each(fix);
        }
    }

    /// The time one exchange (connect, handshake, query) may take: `--check-timeout`. It is
    /// deliberately not shortened to what is left of the overall deadline: a timeout cut
    /// short by our own deadline would read as the target's silence. The overall deadline
    /// cancels the run instead, and whatever was in flight is `unknown` (`checks.md` 4.1).
    pub(crate) fn budget(&self, _deadline: Instant) -> Duration {
        self.opts.check_timeout
    }

    async fn stages(&self, target: &Target, deadline: Instant, rec: &mut Recorder, st: &mut State) {
        // A token that cannot go in a header (the loaders and an agent's job refuse it
        // first): every check is the vantage's own `unknown`, nothing is sent, never a
        // finding about the target.
        if let Some((part, what)) = self.opts.credentials.unusable() {
            rec.unknown_rest(
                Cause::Unsendable,
                &format!("not run: this vantage's credential ({part}) contains {what}, which cannot be sent in an HTTP header; nothing was sent"),
            );
            return;
        }
        // 1. DNS
        st.progress.stage(ProgressStage::Dns);
        let t = Instant::now();
        // A failed AAAA query beside a good A answer: "no IPv6 address" was never seen.
        let mut aaaa_failed: Option<String> = None;
        let addrs: Vec<IpAddr> = if target.is_local() {
            for id in [
                CheckId::DnsResolve,
                CheckId::DnsARecord,
                CheckId::DnsGlobalAddresses,
            ] {
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
            if !obs.aaaa_answered() {
                aaaa_failed = Some(format!("the AAAA query failed ({})", obs.aaaa_rcode));
            }
            st.dns = Some(obs);
            addrs
        };
        st.phases
            .insert("dns".into(), t.elapsed().as_millis() as u64);
        if addrs.is_empty() {
            let resolver_failed = rec
                .get(CheckId::DnsResolve)
                .is_some_and(|c| c.outcome == crate::model::Outcome::Unknown);
            rec.skip_rest(if resolver_failed {
                "this vantage's resolver failed, so there is no address to connect to"
            } else {
                "the name did not resolve"
            });
            return;
        }
        // Every connection from here on obeys one egress policy (`egress`).
        let policy = self.egress_policy(&addrs);

        // 2. Connect
        st.progress.stage(ProgressStage::Connect);
        let t = Instant::now();
        let connected = connect::connect_all(
            &policy,
            &addrs,
            aaaa_failed.as_deref(),
            self.opts.ipv6,
            target.is_localhost(),
            target.port,
            self.budget(deadline),
            rec,
        )
        .await;
        st.phases
            .insert("connect".into(), t.elapsed().as_millis() as u64);
        let Some(&pinned) = connected.first() else {
            let unknown_for = |cause| {
                rec.get(CheckId::NetConnect)
                    .is_some_and(|c| c.outcome == Outcome::Unknown && c.cause == Some(cause))
            };
            rec.skip_rest(if unknown_for(Cause::PolicyRefused) {
                "the egress policy refused every address of the target"
            } else if unknown_for(Cause::NoRoute) {
                "this vantage has no route to any address of the target (or is set to have no IPv6 and the target has only IPv6 addresses)"
            } else {
                "no address accepted a connection"
            });
            return;
        };

        // 3. TLS
        let t = Instant::now();
        if target.https {
            st.progress.stage(ProgressStage::Tls);
            let now = crate::probe::tls_chain::vantage_now();
            let (ok, seen) = tls::check(
                &policy,
                &connected,
                &target.host,
                self.tls.clone(),
                self.budget(deadline),
                now,
                rec,
            )
            .await;
            st.tls = seen.map(|mut t| {
                t.extra_roots = self.opts.extra_ca_pem.is_some();
                t
            });
            st.phases
                .insert("tls".into(), t.elapsed().as_millis() as u64);
            rec.record_ms(CheckId::TlsPlainHttp, Verdict::pass("https"), 0);
            if !ok {
                // A handshake this vantage's own timeout cut leaves the rest unknown, not
                // skipped: it was due and nothing was observed (4.1).
                match rec.get(CheckId::TlsHandshake).map(|c| (c.outcome, c.cause)) {
                    Some((Outcome::Unknown, Some(cause))) if !rec.deadline_hit() => rec
                        .unknown_rest(
                            cause,
                            "not run: the TLS handshake did not complete within this vantage's per-exchange timeout (--check-timeout)",
                        ),
                    _ => rec.skip_rest("the TLS handshake failed"),
                }
                return;
            }
        } else {
            rec.record_ms(CheckId::TlsHandshake, Verdict::skip("plain http"), 0);
            rec.record_ms(CheckId::TlsExpiry, Verdict::skip("plain http"), 0);
            let v = if target.is_local() {
                Verdict::skip("local target")
            } else {
                Verdict::fail(
                    Severity::High,
                    "http:// on a non-local endpoint: requests and tokens travel unencrypted",
                )
            };
            rec.record_ms(CheckId::TlsPlainHttp, v, 0);
        }

        let client = match self.client(target, policy, pinned.ip()) {
            Ok(c) => {
                st.redirects = c.redirect_log();
                c
            }
            Err(e) => {
                rec.record_ms(CheckId::RedirectNone, Verdict::error(e), 0);
                rec.skip_rest("the HTTP client could not be built");
                return;
            }
        };
        self.protocol(&mut crate::protocol::Run {
            target,
            client: &client,
            deadline,
            rec,
            st,
        })
        .await;
    }

    /// The egress policy of this run: the job's prefixes, and on the operator's own machine
    /// the addresses of the target they named.
    fn egress_policy(&self, target_addrs: &[IpAddr]) -> EgressPolicy {
        let policy = EgressPolicy::new(&Policy {
            assume_global: self.opts.assume_global.clone(),
            allow_non_global: self.opts.allow_non_global.clone(),
        });
        if self.opts.allow_named_target {
            policy.allowing_named_target(target_addrs)
        } else {
            policy
        }
    }

    /// The run's HTTP client: the target's name pinned to the address resolved, checked and
    /// connected to above (no second lookup that DNS rebinding could change), every other
    /// name resolved once under the policy.
    fn client(
        &self,
        target: &Target,
        policy: EgressPolicy,
        pinned: IpAddr,
    ) -> Result<EgressClient, String> {
        let settings = ClientSettings {
            tls: self.tls.clone(),
            connect_timeout: self.opts.check_timeout,
            resolver: self.opts.resolver.clone(),
            pinned: match target.ip {
                None => vec![(target.host.clone(), vec![pinned])],
                Some(_) => Vec::new(),
            },
            idle_per_host: 8,
        };
        EgressClient::new(policy, settings)
            .map(|c| {
                c.with_secrets(
                    self.opts.credentials.clone(),
                    self.url_secrets.clone(),
                    self.url_public.clone(),
                )
            })
            .map_err(|e| e.to_string())
    }

    pub(crate) async fn send(
        &self,
        client: &EgressClient,
        target: &Target,
        req: &ProbeRequest,
        deadline: Instant,
        sse: SseRead,
    ) -> Result<Exchange, ExchangeError> {
        let limits = &self.opts.limits;
        exchange(client, &target.url, req, limits, self.budget(deadline), sse)
            .await
            .map(|(ex, _)| ex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Red team round 15, defect 3, defence in depth: an engine handed a token that cannot
    /// go in a header (the loaders refuse it first) reports every check `unknown` with the
    /// vantage's own cause and sends nothing: never a finding about the target.
    #[tokio::test]
    async fn an_unusable_token_leaves_every_check_unknown_and_sends_nothing() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let engine = Engine::new(ProbeOptions {
            credentials: Credentials {
                token: Some("SeCrEtPiece1234\nSECONDhalf98765".to_string().into()),
                ..Credentials::default()
            },
            ..ProbeOptions::default()
        })
        .unwrap();
        let r = engine
            .run(&Target::parse(&format!("http://{addr}/mcp")).unwrap())
            .await;
        assert!(!r.checks.is_empty());
        for c in &r.checks {
            assert_eq!(
                (c.outcome, c.severity, c.cause),
                (Outcome::Unknown, None, Some(Cause::Unsendable)),
                "{:?}",
                c
            );
            assert!(
                c.observed.contains("credential (token) contains a newline"),
                "{}",
                c.observed
            );
        }
        assert!(
            matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "nothing connected"
        );
    }

    #[test]
    fn an_engine_for_one_run_shares_the_trust_store_and_keeps_its_anchors() {
        let base = Engine::new(ProbeOptions::default()).unwrap();
        let run = base.with_options(ProbeOptions {
            region: "eu".into(),
            extra_ca_pem: Some(b"not a PEM".to_vec()),
            ..ProbeOptions::default()
        });
        assert!(
            Arc::ptr_eq(&base.tls, &run.tls),
            "the TLS configuration is shared"
        );
        assert_eq!(run.options().region, "eu");
        assert_eq!(
            run.options().extra_ca_pem,
            None,
            "the anchors stay the base's"
        );
        // Every job's run (agents, the coordinator's in-process vantage) goes this way.
        let job = Job::new(Target::parse("https://mcp.example.com/mcp").unwrap());
        let for_job = run.for_job(&job);
        assert!(
            Arc::ptr_eq(&base.tls, &for_job.tls),
            "a job's run shares it too"
        );
        assert_eq!(for_job.options().region, "eu", "the vantage stays");
        assert_eq!(
            for_job.options().deadline,
            job.deadline.max(crate::job::MIN_DEADLINE)
        );
    }
}

#[cfg(test)]
mod scrub_tests;
