//! The protocol stages of a run, once a connection works: shape (no redirect), the
//! authorization boundary, era detection, and the transport checks, run concurrently.

use std::time::Instant;

use http::Method;

use crate::catalog::{self, Stage};
use crate::engine::{Engine, State};
use crate::model::{Era, Outcome, Severity};
use crate::probe::auth::{self, AuthStage};
use crate::probe::http::{Exchange, ProbeRequest, SseRead};
use crate::probe::verdict::{Recorder, Verdict};
use crate::probe::{era, redirect, transport};
use crate::progress::ProgressStage;
use crate::target::Target;

/// The transport checks of a server that speaks 2026-07-28.
const MODERN_CHECKS: &[&str] = &[
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
];

impl Engine {
    pub(crate) async fn protocol(
        &self,
        target: &Target,
        client: &reqwest::Client,
        deadline: Instant,
        rec: &mut Recorder,
        st: &mut State,
    ) {
        let token = self.options().credentials.token.as_ref();
        st.progress.stage(ProgressStage::Era);
        let t = Instant::now();
        // A valid server/discover without a token (it shows redirects and the challenge),
        // and a legacy initialize alongside it.
        let discover_req = ProbeRequest::modern("server/discover", 1, Default::default());
        let init_req = ProbeRequest::legacy_initialize(2).with_bearer(token);
        let (unauth, initialize) = tokio::join!(
            self.send(
                client,
                target,
                &discover_req,
                deadline,
                SseRead::UntilResponse
            ),
            self.send(client, target, &init_req, deadline, SseRead::UntilResponse),
        );
        let unauth = match unauth {
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
        st.phases.insert("first_byte".into(), unauth.first_byte_ms);
        let shape = redirect::verdict(&unauth, target);
        let redirected = shape.outcome == Outcome::Fail;
        rec.record("redirect.none", shape, t);
        if redirected {
            rec.skip_rest("the endpoint redirects, and redirects are never followed");
            return;
        }

        // The authorization boundary.
        st.protected = unauth.status == 401;
        if st.protected || self.options().expect_auth {
            st.progress.stage(ProgressStage::Auth);
            let stage = AuthStage {
                target,
                client,
                limits: &self.options().limits,
                budget: self.budget(deadline),
                credentials: &self.options().credentials,
                expect_auth: self.options().expect_auth,
            };
            stage.run(&unauth, rec).await;
        } else {
            auth::skip_all(rec, "the endpoint did not ask for authorization (no 401)");
        }
        let discover = match (st.protected, token) {
            (true, None) => {
                rec.skip_rest(
                    "the endpoint requires authorization (401) and no credential was given; name one with --token-env",
                );
                return;
            }
            (true, Some(_)) => {
                let t = Instant::now();
                match self
                    .send(
                        client,
                        target,
                        &discover_req.clone().with_bearer(token),
                        deadline,
                        SseRead::UntilResponse,
                    )
                    .await
                {
                    Ok(ex) if ex.status == 401 => {
                        rec.record_ms(
                            "era.detect",
                            Verdict::skip("the credential was refused (401)"),
                            0,
                        );
                        rec.skip_rest("the given credential was refused (401); check the token named by --token-env");
                        return;
                    }
                    Ok(ex) => ex,
                    Err(e) => {
                        rec.record(
                            "era.detect",
                            Verdict::fail(
                                Severity::High,
                                format!("server/discover: {}", e.message),
                            )
                            .cause(e.cause),
                            t,
                        );
                        rec.skip_rest("server/discover got no response");
                        return;
                    }
                }
            }
            (false, _) => unauth,
        };
        st.authenticated = token.is_some();
        self.era_and_transport(
            target,
            client,
            deadline,
            rec,
            st,
            discover,
            initialize.ok(),
            t,
        )
        .await;
    }

    #[allow(clippy::too_many_arguments)]
    async fn era_and_transport(
        &self,
        target: &Target,
        client: &reqwest::Client,
        deadline: Instant,
        rec: &mut Recorder,
        st: &mut State,
        discover: Exchange,
        initialize: Option<Exchange>,
        t: Instant,
    ) {
        let token = self.options().credentials.token.as_ref();
        let mut get_fallback = None;
        if !era::discover_works(&discover)
            && !era::modern_signal(&discover)
            && !initialize.as_ref().is_some_and(era::initialize_works)
        {
            let req = ProbeRequest::bare(Method::GET, &[("Accept", "text/event-stream")])
                .with_bearer(token);
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
        let ids: Vec<&str> = if era.speaks_2026() {
            rec.record(
                "discover.shape",
                era::discover_shape(&discover, &serde_json::json!(1)),
                t,
            );
            MODERN_CHECKS.to_vec()
        } else {
            let reason = "the server does not speak 2026-07-28";
            for spec in catalog::CHECKS
                .iter()
                .filter(|c| c.stage == Stage::Transport || c.id == "discover.shape")
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

        // Independent checks run concurrently.
        st.progress.stage(ProgressStage::Transport);
        let caps = era::capabilities(&discover).unwrap_or_default();
        let runs = ids.iter().enumerate().map(|(i, &id)| {
            let caps = &caps;
            async move {
                let started = Instant::now();
                let rpc_id = 100 + i as i64;
                let req = if id == "security.origin" && !era.speaks_2026() {
                    Ok(ProbeRequest::legacy_initialize(rpc_id)
                        .with_header("Origin", transport::FOREIGN_ORIGIN))
                } else {
                    transport::request(id, rpc_id, caps)
                };
                let req = match req {
                    // A browser's CORS preflight never carries credentials.
                    Ok(r) if id == "cors.preflight" => r,
                    Ok(r) => r.with_bearer(token),
                    Err(reason) => return (id, Verdict::skip(reason), None, started),
                };
                let mode = if id == "transport.get" {
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
        let mut outcomes = Vec::new();
        for (id, verdict, ex, started) in results {
            outcomes.push((id, verdict.outcome));
            rec.record(id, verdict, started);
            if let Some(ex) = ex {
                seen.push((id.to_string(), ex));
            }
        }
        let exchanges: Vec<&Exchange> = seen.iter().map(|(_, e)| e).collect();
        rec.record_ms(
            "transport.sse-buffering",
            transport::sse_buffering(&exchanges),
            0,
        );
        if era.speaks_2026() {
            let triples: Vec<(&str, Outcome, &Exchange)> = outcomes
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
