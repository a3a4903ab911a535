//! The protocol stages of a run, once a connection works: shape (no redirect), the
//! authorization boundary, era detection, and the transport checks, run concurrently.

use std::time::Instant;

use http::Method;

use crate::catalog::{CheckId, Stage};
use crate::egress::{self, EgressClient};
use crate::engine::{Engine, State};
use crate::model::{Cause, Era, Outcome, Severity};
use crate::probe::auth;
use crate::probe::auth::boundary::{self, Paths};
use crate::probe::http::{Exchange, ExchangeError, ProbeRequest, SseRead};
use crate::probe::reason::{self, Subject};
use crate::probe::transport::{self, TransportProbe};
use crate::probe::verdict::{Recorder, Verdict};
use crate::probe::{era, redirect, tls};
use crate::progress::ProgressStage;
use crate::target::Target;

/// What every protocol stage works on: the target, the run's HTTP client and deadline, and
/// what the run records and learns as it goes.
pub(crate) struct Run<'a> {
    pub(crate) target: &'a Target,
    pub(crate) client: &'a EgressClient,
    pub(crate) deadline: Instant,
    pub(crate) rec: &'a mut Recorder,
    pub(crate) st: &'a mut State,
}

impl Engine {
    pub(crate) async fn protocol(&self, run: &mut Run<'_>) {
        let token = self.options().credentials.token.as_ref();
        run.st.progress.stage(ProgressStage::Era);
        let t = Instant::now();
        // A valid server/discover without a token (it shows redirects and the challenge),
        // and a legacy initialize alongside it.
        let discover_req =
            ProbeRequest::modern("server/discover", era::DISCOVER_ID, Default::default());
        let init_req = ProbeRequest::legacy_initialize(era::INITIALIZE_ID).with_bearer(token);
        let (unauth, initialize) = tokio::join!(
            self.send(
                run.client,
                run.target,
                &discover_req,
                run.deadline,
                SseRead::UntilResponse
            ),
            self.send(
                run.client,
                run.target,
                &init_req,
                run.deadline,
                SseRead::UntilResponse
            ),
        );
        // A server that requires a client certificate refuses it after a TLS 1.3 handshake
        // that looked complete: the handshake failed, and no MCP answer was observed (4.1).
        if [unauth.as_ref().err(), initialize.as_ref().err()]
            .into_iter()
            .flatten()
            .any(|e| e.message.contains(tls::CLIENT_CERT_REQUIRED))
        {
            run.rec.record(
                CheckId::TlsHandshake,
                Verdict::fail(
                    Severity::High,
                    format!(
                        "{} (the handshake itself completed; the alert came on the first request)",
                        tls::CLIENT_CERT_REQUIRED
                    ),
                )
                .cause(Cause::Tls),
                t,
            );
            run.rec.skip_rest("the TLS handshake failed");
            return;
        }
        // A discover answer the vantage's own read cap cut is no answer to judge (4.1).
        // Nor, beside a working initialize, is a 2xx with no response to it (an event stream
        // that ended without one, an empty body, another id's response: red team round 18,
        // D9). Without a working initialize the era rules judge it ("not MCP").
        let unread = |ex: &Exchange| {
            initialize
                .as_ref()
                .is_ok_and(era::initialize_works)
                .then(|| era::discover_unread(ex))
                .flatten()
        };
        let unauth = unauth.and_then(|ex| {
            match era::cut_by_cap(&ex, Subject::Discover).or_else(|| unread(&ex)) {
                Some(cut) => Err(cut),
                None => Ok(ex),
            }
        });
        let unauth = match unauth {
            Ok(ex) => ex,
            Err(e) => {
                discover_unanswered(run.rec, &e, initialize.as_ref(), t);
                return;
            }
        };
        run.st
            .phases
            .insert("first_byte".into(), unauth.first_byte_ms);
        if record_redirect(run.rec, &unauth, run.target, run.client, "", t) {
            run.rec
                .skip_rest("the endpoint redirects, and redirects are never followed");
            return;
        }

        // The authorization boundary: a 401 (or a 403 with a Bearer challenge) to
        // server/discover; behind a public discovery, tools/list may show it later.
        run.st.protected = boundary::asks_for_authorization(&unauth);
        let auth_stage = self.auth_stage(run);
        if run.st.protected || self.options().expect_auth {
            run.st.progress.stage(ProgressStage::Auth);
            auth_stage.run(&unauth, run.rec).await;
        } else {
            auth::skip_all(
                run.rec,
                "the endpoint did not ask for authorization: its answer was not a 401",
            );
        }
        if run.st.protected {
            run.st.paths = Paths::from_discover(&unauth);
        }
        let discover = match (run.st.protected, token) {
            (true, None) => {
                // No era can be learnt behind the boundary. The initialize beside discovery
                // went without a token: served, it is the legacy path without a boundary (and
                // says nothing about a legacy-only server), so the token probes ask with
                // server/discover, tools/list and initialize, and any answer but 401/403 on
                // a request that asked for authorization means "accepted".
                self.boundary_beside_discover(
                    &auth_stage,
                    &unauth,
                    initialize.as_ref().ok(),
                    Era::Unknown,
                    // No capabilities are known behind the boundary: no listen filter.
                    None,
                    run,
                )
                .await;
                auth_stage
                    .tokens(Era::Unknown, &run.st.paths, run.rec)
                    .await;
                run.rec.skip_rest(&format!(
                    "the endpoint requires authorization (server/discover without a token answered {}) and no credential was given; name one with --token-env",
                    unauth.status
                ));
                return;
            }
            (true, Some(_)) => {
                // The checks run with the credential from here on, whatever comes back (a
                // redirect or no answer is not "no credential given").
                run.st.authenticated = true;
                let t = Instant::now();
                match self
                    .send(
                        run.client,
                        run.target,
                        &discover_req.clone().with_bearer(token),
                        run.deadline,
                        SseRead::UntilResponse,
                    )
                    .await
                {
                    Ok(ex) if matches!(ex.status, 401 | 403) => {
                        // A credential was given and refused: nothing past the boundary
                        // can be observed (`auth.credential-refused`, checks.md 4.1).
                        run.rec.record(
                            CheckId::EraDetect,
                            Verdict::unknown(
                                Cause::CredentialRefused,
                                format!(
                                    "the credential that was given was refused ({}), so the era and the protocol checks could not be observed",
                                    ex.summary()
                                ),
                            ),
                            t,
                        );
                        auth_stage
                            .tokens(Era::Unknown, &run.st.paths, run.rec)
                            .await;
                        run.rec.skip_rest("the given credential was refused (401/403); check the token named by --token-env");
                        return;
                    }
                    // Only the authenticated request is redirected (a slash redirect
                    // behind an auth middleware, a gateway sending logged-in traffic
                    // elsewhere): redirect.none judges that answer, never "not MCP", and
                    // nothing past it was observed (redirects are never followed).
                    Ok(ex) if (300..400).contains(&ex.status) => {
                        record_redirect(
                            run.rec,
                            &ex,
                            run.target,
                            run.client,
                            "with the credential: ",
                            t,
                        );
                        run.rec.skip_rest(
                            "the endpoint redirects authenticated requests, and redirects are never followed",
                        );
                        return;
                    }
                    Ok(ex) => match era::cut_by_cap(&ex, Subject::Discover).or_else(|| unread(&ex))
                    {
                        Some(cut) => {
                            discover_unanswered(run.rec, &cut, initialize.as_ref(), t);
                            return;
                        }
                        None => ex,
                    },
                    Err(e) => {
                        discover_unanswered(run.rec, &e, initialize.as_ref(), t);
                        return;
                    }
                }
            }
            (false, _) => unauth.clone(),
        };
        run.st.authenticated = token.is_some();
        // The capabilities the (authenticated) discover answered: the listen filter of the
        // boundary looked for beside a protected discovery.
        let caps = if era::discover_works(&discover) {
            era::capabilities(&discover)
        } else {
            None
        };
        self.era_and_transport(run, discover, initialize, t).await;
        if run.st.protected {
            let era = run.st.era.unwrap_or(Era::Unknown);
            if run.st.paths.discover {
                // Sent with the credential, initialize said nothing about the legacy path's
                // boundary: ask it without one.
                self.boundary_beside_discover(&auth_stage, &unauth, None, era, caps.as_ref(), run)
                    .await;
            }
            // The token probes ask with a request the era accepts (checks.md 2.5).
            auth_stage.tokens(era, &run.st.paths, run.rec).await;
        }
    }

    async fn era_and_transport(
        &self,
        run: &mut Run<'_>,
        discover: Exchange,
        initialize: Result<Exchange, ExchangeError>,
        t: Instant,
    ) {
        let token = self.options().credentials.token.as_ref();
        let works = |ex: &Exchange| era::discover_works(ex) || era::modern_signal(ex);
        if let Some(reason) = era::other_reason(&discover).filter(|_| !works(&discover)) {
            // A rate limit, an unavailable gateway or a refusal in front of the MCP layer:
            // nothing about the era was observed, and nothing past it can be (4.1).
            run.st.era = Some(Era::Unknown);
            run.rec.record(
                CheckId::EraDetect,
                Verdict::unknown(Cause::OtherReason, format!("server/discover was {reason}")),
                t,
            );
            run.rec.unknown_rest(
                Cause::OtherReason,
                &format!("not run: server/discover was {}", reason_head(&reason)),
            );
            return;
        }
        // An initialize answered for another reason (a rate limit, an unavailable gateway, a
        // bare 500), not read whole (the vantage's own read cap stopped it, an event stream
        // that ended without its response), answered 2xx with no response to it beside a
        // modern discover, or not answered at all (the vantage's own timeout, a closed or
        // reset connection) says nothing about the 2025-11-25 path: it never makes a
        // dual-era server "modern only" nor a legacy one "not MCP" (4.1).
        let init_other = match &initialize {
            Ok(i) if !era::initialize_works(i) => {
                reason::another_reason(i, Subject::Initialize, token.is_some())
                    .or_else(|| {
                        era::cut_by_cap(i, Subject::Initialize).map(|e| reason::unanswered(&e))
                    })
                    .or_else(|| era::initialize_unread(i, works(&discover)))
            }
            Ok(_) => None,
            Err(e) => Some(reason::unanswered(e)),
        };
        let initialize = initialize.ok();
        let mut get_fallback = None;
        if !era::discover_works(&discover)
            && !era::modern_signal(&discover)
            && !initialize.as_ref().is_some_and(era::initialize_works)
            && init_other.is_none()
        {
            let req = ProbeRequest::bare(Method::GET, &[("Accept", "text/event-stream")])
                .with_bearer(token);
            get_fallback = self
                .send(
                    run.client,
                    run.target,
                    &req,
                    run.deadline,
                    SseRead::FirstEvent,
                )
                .await
                .ok();
        }
        let mut unsure = None;
        let era = match &init_other {
            Some(o) if works(&discover) => {
                // Modern for certain; dual-era or not is unknown.
                let why = format!("initialize: {}", o.head);
                // A refused discover with a 2026 code is a failure whatever the other era.
                let verdict = if era::discover_works(&discover) {
                    Verdict::unknown(
                        o.cause,
                        format!(
                            "the server speaks 2026-07-28 (server/discover: {}), but whether it also speaks 2025-11-25 was not observed: {}; {}",
                            discover.summary(),
                            why,
                            o.advice
                        ),
                    )
                } else {
                    era::era_verdict(Era::Modern, Some(&discover), initialize.as_ref())
                };
                run.rec.record(CheckId::EraDetect, verdict, t);
                run.st.era = Some(Era::Unknown);
                unsure = Some(why);
                Era::Modern
            }
            Some(o) => {
                run.st.era = Some(Era::Unknown);
                run.rec.record(
                    CheckId::EraDetect,
                    Verdict::unknown(
                        o.cause,
                        format!(
                            "server/discover: {}; initialize: {}: whether the endpoint speaks MCP was not observed; {}",
                            discover.summary(),
                            o.head,
                            o.advice
                        ),
                    ),
                    t,
                );
                run.rec
                    .unknown_rest(o.cause, &format!("not run: initialize was {}", o.head));
                return;
            }
            None => {
                let era =
                    era::classify(Some(&discover), initialize.as_ref(), get_fallback.as_ref());
                run.st.era = Some(era);
                run.rec.record(
                    CheckId::EraDetect,
                    era::era_verdict(era, Some(&discover), initialize.as_ref()),
                    t,
                );
                era
            }
        };

        let mut seen: Vec<Exchange> = vec![discover.clone()];
        if let Some(i) = &initialize {
            seen.push(i.clone());
        }
        let probes: Vec<TransportProbe> = if era.speaks_2026() {
            run.rec.record(
                CheckId::DiscoverShape,
                era::discover_shape(&discover, &serde_json::json!(era::DISCOVER_ID)),
                t,
            );
            TransportProbe::MODERN.to_vec()
        } else {
            let reason = "the server does not speak 2026-07-28";
            let still_run = [
                CheckId::SecurityOrigin,
                CheckId::CorsPreflight,
                CheckId::TransportSseBuffering,
            ];
            for id in CheckId::ALL.iter().copied().filter(|c| {
                (c.stage() == Stage::Transport || *c == CheckId::DiscoverShape)
                    && !still_run.contains(c)
            }) {
                run.rec.record_ms(id, Verdict::skip(reason), 0);
            }
            if era == Era::NotMcp {
                vec![TransportProbe::Preflight]
            } else {
                vec![TransportProbe::Origin, TransportProbe::Preflight]
            }
        };

        let caps = era::capabilities(&discover).unwrap_or_default();
        if !run.st.protected
            && self
                .boundary_behind_discover(run, era, &caps, initialize.as_ref())
                .await
        {
            return;
        }

        // Independent checks run concurrently.
        run.st.progress.stage(ProgressStage::Transport);
        let judging = crate::transport_stage::Judging {
            era,
            unsure: unsure.as_deref(),
            token,
            legacy_control: initialize.as_ref().filter(|i| era::initialize_works(i)),
        };
        let results = self
            .transport_probes(
                run.target,
                run.client,
                run.deadline,
                &probes,
                &caps,
                &judging,
            )
            .await;
        let mut answered: Vec<(CheckId, Outcome, Exchange)> = Vec::new();
        let mut unanswered: Vec<(CheckId, Outcome)> = Vec::new();
        // The outcome jsonrpc.error-body reads of each main answer (`ProbeRun`).
        let mut body_seen: Vec<Outcome> = Vec::new();
        for (probe, verdict, ex, started, seen) in results {
            let outcome = verdict.outcome;
            run.rec.record(probe.check(), verdict, started);
            match ex {
                Some(ex) => {
                    answered.push((probe.check(), outcome, ex));
                    body_seen.push(seen);
                }
                None => unanswered.push((probe.check(), outcome)),
            }
        }
        let exchanges: Vec<&Exchange> = seen
            .iter()
            .chain(answered.iter().map(|(_, _, ex)| ex))
            .collect();
        run.rec.record_ms(
            CheckId::TransportSseBuffering,
            transport::sse_buffering(&exchanges),
            0,
        );
        if era.speaks_2026() {
            let triples: Vec<(CheckId, Outcome, Option<&Exchange>)> = answered
                .iter()
                .zip(&body_seen)
                .map(|((id, _, ex), seen)| (*id, *seen, Some(ex)))
                .chain(unanswered.iter().map(|(id, outcome)| (*id, *outcome, None)))
                .collect();
            run.rec.record_ms(
                CheckId::JsonrpcErrorBody,
                transport::error_body(&triples),
                0,
            );
        }
        let problem = |id: CheckId| run.rec.get(id).is_some_and(|c| c.outcome.is_problem());
        let judged: Vec<(CheckId, bool, &Exchange)> = [CheckId::EraDetect, CheckId::DiscoverShape]
            .into_iter()
            .map(|id| (id, problem(id), &discover))
            .chain(answered.iter().map(|(id, o, ex)| (*id, o.is_problem(), ex)))
            .collect();
        run.st.stacks = crate::stack::sightings(judged);

        // The capability lists (probe/listing), after the transport checks.
        self.listing_stage(run, era, era::capabilities(&discover))
            .await;
    }
}

/// `era.detect` (and what follows) when `server/discover` got no HTTP answer
/// ([`era::discover_unanswered`]). redirect.none is left to the rest: `unknown` with the
/// exchange's cause when the era is not known, a skip when the target broke discover with
/// nothing working beside it, `unknown` for cause `deadline` when the run's own deadline
/// ended the exchange.
fn discover_unanswered(
    rec: &mut Recorder,
    err: &ExchangeError,
    initialize: Result<&Exchange, &ExchangeError>,
    t: Instant,
) {
    let seen = era::discover_unanswered(err, initialize);
    rec.record(CheckId::EraDetect, seen.era, t);
    if let Some(shape) = seen.shape {
        rec.record(CheckId::DiscoverShape, shape, t);
    }
    match seen.rest {
        Some((cause, why)) if !rec.deadline_hit() => rec.unknown_rest(cause, &why),
        _ => rec.skip_rest("server/discover got no response"),
    }
}

/// The first clause of an other-reason explanation (what happened, without the advice).
fn reason_head(reason: &str) -> &str {
    reason.split(". ").next().unwrap_or(reason)
}

/// Record `redirect.none` on `ex` (its observation after `prefix`), with where the Location
/// leads under the egress policy; whether it redirected (then nothing past it is observed).
fn record_redirect(
    rec: &mut Recorder,
    ex: &Exchange,
    target: &Target,
    client: &EgressClient,
    prefix: &str,
    t: Instant,
) -> bool {
    let mut shape = redirect::verdict(ex, target);
    let redirected = shape.outcome == Outcome::Fail;
    shape.observed = format!("{prefix}{}", shape.observed);
    if let (true, Some(location)) = (redirected, ex.header("location")) {
        shape.observed += &egress::location_note(client.policy(), &target.url, location);
    }
    rec.record(CheckId::RedirectNone, shape, t);
    redirected
}

/// `redirect.none` judged on every answer the run's client noted as a redirect (any request
/// to the endpoint, not only the first: notifications, GET and DELETE, the lists, the token
/// probes; checks.md 2.3), at the end of the run: it replaces the verdict on the first
/// exchange unless that one is already as bad (a redirect there stopped the run, and it is
/// kept as recorded).
pub(crate) fn redirects_seen(rec: &mut Recorder, target: &Target, log: &egress::RedirectLog) {
    let seen = log.lock().map(|l| l.clone()).unwrap_or_default();
    let Some(all) = redirect::verdict_all(&seen, target) else {
        return;
    };
    let as_bad = rec
        .get(CheckId::RedirectNone)
        .is_some_and(|c| c.outcome == Outcome::Fail && c.severity >= all.severity);
    if !as_bad {
        rec.record_ms(CheckId::RedirectNone, all, 0);
    }
}
