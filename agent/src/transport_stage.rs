//! The transport probes of a run, sent concurrently, with their control alongside: the same
//! valid request without any probe's change (`server/discover`, or `initialize` on a server
//! that does not speak 2026-07-28), sent at the same time. A refusal the control gets too
//! was answered for another reason than the rule a probe tests (a WAF that starts blocking
//! mid-run refuses both), so the probe is `unknown`, not a pass (`checks.md` 4.1). The era
//! stage's discover answer is no control: it was captured before such a block began.
//!
//! Some probes send a second request ([`TransportProbe::second_request`]): the `Mcp-Method`
//! probes and the foreign Origin also on `tools/list` when tools are advertised, judged
//! against a valid `tools/list` sent alongside as that leg's control, and
//! `version.unsupported` also with a version from the future, judged against the discover
//! control, and on `tools/call` of the absent tool beside the same call without the change.
//! The check is the worse of its requests ([`crate::probe::origin_paths::with_second`]): a
//! failure seen on any request fails it; otherwise a request not answered, or answered for
//! another reason (or beside a control that was not), leaves it `unknown` with that
//! request's cause, never a pass on the others alone (red team round 18, D2). So does the
//! 2025-11-25 path of the Origin guard when whether the server speaks 2025-11-25 was not
//! observed.

use std::time::Instant;

use serde_json::Value;

use crate::egress::EgressClient;
use crate::engine::Engine;
use crate::model::{Era, Outcome};
use crate::probe::http::{Exchange, ExchangeError, ProbeRequest, SseRead};
use crate::probe::transport::{self, Leg, TransportProbe};
use crate::probe::verdict::Verdict;
use crate::target::Target;

/// The JSON-RPC id of the control request.
const CONTROL_ID: i64 = 99;
/// The JSON-RPC id of the Origin probe sent as `initialize` on a dual-era server (after the
/// ids of [`TransportProbe::MODERN`], 100-113).
const LEGACY_ORIGIN_ID: i64 = 114;
/// The JSON-RPC id of the `tools/list` control (before the second requests' ids, 120-133).
const TOOLS_CONTROL_ID: i64 = 119;
/// The JSON-RPC id of the `tools/call` control (before the tools/call requests' ids, 140-153).
const CALL_CONTROL_ID: i64 = 139;

/// One probe's result: its verdict (over every request it asked), its main request's answer
/// (if any), when it started, and what `jsonrpc.error-body` reads of that answer
/// ([`transport::seen_outcome`] of the main request's own verdict: a request beside it not
/// observed says nothing about the body of this one).
pub(crate) type ProbeRun = (TransportProbe, Verdict, Option<Exchange>, Instant, Outcome);

/// How the probes of a run are judged.
pub(crate) struct Judging<'a> {
    pub era: Era,
    /// Why modern-only vs dual-era is unknown, when it is.
    pub unsure: Option<&'a str>,
    pub token: Option<&'a secrecy::SecretString>,
    /// The plain `initialize` era detection sent (served, on a dual-era server): the
    /// control of the Origin probe sent as `initialize`.
    pub legacy_control: Option<&'a Exchange>,
}

impl Engine {
    /// Send `probes` and the control concurrently; judge each probe against the control.
    pub(crate) async fn transport_probes(
        &self,
        target: &Target,
        client: &EgressClient,
        deadline: Instant,
        probes: &[TransportProbe],
        caps: &Value,
        j: &Judging<'_>,
    ) -> Vec<ProbeRun> {
        let (era, token) = (j.era, j.token);
        let control_req = if era.speaks_2026() {
            Some(ProbeRequest::modern(
                "server/discover",
                CONTROL_ID,
                Default::default(),
            ))
        } else if era == Era::NotMcp {
            None
        } else {
            Some(ProbeRequest::legacy_initialize(CONTROL_ID))
        };
        let control = async {
            match &control_req {
                Some(req) => Some(
                    self.send(
                        client,
                        target,
                        &req.clone().with_bearer(token),
                        deadline,
                        SseRead::UntilResponse,
                    )
                    .await,
                ),
                None => None,
            }
        };
        // The second requests, only on a server that speaks 2026-07-28 (each is a 2026-07-28
        // request): the change on tools/list and on tools/call of the absent tool, and each
        // leg's control (one for all its probes) when any probe is asked on it.
        let seconds: Vec<Vec<(Leg, ProbeRequest)>> = probes
            .iter()
            .map(|p| {
                [p.second_request(caps), p.call_request(caps)]
                    .into_iter()
                    .flatten()
                    .filter(|_| era.speaks_2026())
                    .map(|(leg, r)| (leg, r.with_bearer(token)))
                    .collect()
            })
            .collect();
        let leg_control = |leg: Leg| {
            let wanted = seconds.iter().flatten().any(|(l, _)| *l == leg);
            async move {
                if !wanted {
                    return None;
                }
                let req = match leg {
                    Leg::ToolsCall => transport::tools_call_absent(CALL_CONTROL_ID),
                    _ => ProbeRequest::modern("tools/list", TOOLS_CONTROL_ID, Default::default()),
                }
                .with_bearer(token);
                Some(
                    self.send(client, target, &req, deadline, SseRead::UntilResponse)
                        .await,
                )
            }
        };
        let tools_control = leg_control(Leg::ToolsList);
        let call_control = leg_control(Leg::ToolsCall);
        let second_runs = seconds.iter().map(|legs| async move {
            let sends = legs.iter().map(|(leg, req)| async move {
                (
                    *leg,
                    self.send(client, target, req, deadline, SseRead::UntilResponse)
                        .await,
                )
            });
            futures::future::join_all(sends).await
        });
        let runs = probes.iter().map(|&probe| async move {
            let started = Instant::now();
            let rpc_id = probe.rpc_id();
            let req = if probe == TransportProbe::Origin && !era.speaks_2026() {
                Ok(ProbeRequest::legacy_initialize(rpc_id)
                    .with_header("Origin", transport::FOREIGN_ORIGIN))
            } else {
                probe.request(rpc_id, caps)
            };
            let req = match req {
                // A browser's CORS preflight never carries credentials.
                Ok(r) if probe == TransportProbe::Preflight => r,
                Ok(r) => r.with_bearer(token),
                Err(reason) => return (probe, Err(Verdict::skip(reason)), started),
            };
            let mode = if probe == TransportProbe::Get {
                SseRead::HeadersOnly
            } else {
                SseRead::UntilResponse
            };
            let sent = self.send(client, target, &req, deadline, mode).await;
            (probe, Ok(sent), started)
        });
        // On a dual-era server the Origin guard is asked on the 2025-11-25 path too: the
        // request that opens a legacy session is `initialize` (spec 5, legacy.origin), judged
        // against the plain `initialize` era detection had served.
        let legacy_origin = async {
            match (j.legacy_control, j.unsure) {
                (Some(_), None) if era == Era::Dual && probes.contains(&TransportProbe::Origin) => {
                    let req = ProbeRequest::legacy_initialize(LEGACY_ORIGIN_ID)
                        .with_header("Origin", transport::FOREIGN_ORIGIN)
                        .with_bearer(token);
                    Some(
                        self.send(client, target, &req, deadline, SseRead::UntilResponse)
                            .await,
                    )
                }
                _ => None,
            }
        };
        let (control, results, legacy_origin, (tools_control, call_control), second_results) = tokio::join!(
            control,
            futures::future::join_all(runs),
            legacy_origin,
            futures::future::join(tools_control, call_control),
            futures::future::join_all(second_runs)
        );
        results
            .into_iter()
            .zip(second_results)
            .map(|((probe, sent, started), second)| {
                let (mut v, ex) = match sent {
                    Err(skip) => (skip, None),
                    Ok(Ok(ex)) => (judge(probe, &ex, control.as_ref(), j), Some(ex)),
                    Ok(Err(e)) => (no_response(probe, &e), None),
                };
                let body_seen = transport::seen_outcome(&v, ex.as_ref());
                if let (TransportProbe::Origin, Some(legacy)) = (probe, &legacy_origin) {
                    let lv = match legacy {
                        Ok(ex) => TransportProbe::Origin.judge(
                            ex,
                            Era::Legacy,
                            j.legacy_control,
                            j.token.is_some(),
                        ),
                        Err(e) => no_response(probe, e),
                    };
                    v = crate::probe::origin_paths::both(v, lv);
                } else if let (TransportProbe::Origin, Some(why), true) =
                    (probe, j.unsure, era.speaks_2026())
                {
                    // The 2025-11-25 path is asked on a dual-era server; whether this is one
                    // was not observed, so neither was that path's guard.
                    let lv = Verdict::unknown(
                        crate::model::Cause::OtherReason,
                        format!("not observed: whether this server also speaks 2025-11-25 (and opens a legacy session for a foreign Origin) is not known ({why})"),
                    );
                    v = crate::probe::origin_paths::both(v, lv);
                }
                for (i, (leg, sent)) in second.into_iter().enumerate() {
                    let ctrl = match leg {
                        Leg::ToolsList => tools_control.as_ref(),
                        Leg::ToolsCall => call_control.as_ref(),
                        _ => control.as_ref(),
                    };
                    let sv = match &sent {
                        Ok(sex) => judge_on(probe, sex, ctrl, j, leg),
                        Err(e) => no_response(probe, e),
                    };
                    let main_label = match (probe, leg) {
                        // The first leg named the main request already, or `both` did.
                        _ if i > 0 => None,
                        (TransportProbe::Origin, _) if legacy_origin.is_some() => None,
                        (_, Leg::FutureVersion) => Some(transport::BAD_VERSION),
                        _ => Some(Leg::Main.label()),
                    };
                    v = crate::probe::origin_paths::with_second(v, main_label, sv, leg.label());
                }
                (probe, v, ex, started, body_seen)
            })
            .collect()
    }
}

/// A probe's answer judged against the control sent alongside it.
fn judge(
    probe: TransportProbe,
    ex: &Exchange,
    control: Option<&Result<Exchange, ExchangeError>>,
    j: &Judging<'_>,
) -> Verdict {
    judge_on(probe, ex, control, j, Leg::Main)
}

/// The answer to a probe's request on `leg` judged against that leg's control.
fn judge_on(
    probe: TransportProbe,
    ex: &Exchange,
    control: Option<&Result<Exchange, ExchangeError>>,
    j: &Judging<'_>,
    leg: Leg,
) -> Verdict {
    if let Some(v) = redirected(probe, ex) {
        return v;
    }
    let ctrl = match control {
        Some(Ok(c)) => Some(c),
        // The Origin guard's 403 means something only next to a request without the
        // foreign Origin that was answered.
        Some(Err(e)) if probe == TransportProbe::Origin => {
            return Verdict::unknown(
                e.cause,
                format!(
                    "{}: the same request without the foreign Origin, sent alongside it, got no answer ({}), so whether the Origin guard refused it is not known",
                    ex.summary(),
                    e.message
                ),
            )
        }
        _ => None,
    };
    let token = j.token.is_some();
    match (j.unsure, leg) {
        (Some(why), Leg::Main) => probe.judge_unsure_era(ex, ctrl, token, why),
        // The second requests' rules do not depend on the era.
        _ => probe.judge_on(ex, j.era, ctrl, token, leg),
    }
}

/// A probe redirected learnt nothing about its rule (redirects are never followed): `unknown`,
/// the redirect itself is `redirect.none`'s. GET and DELETE keep their own rule (a 3xx is not
/// the 405 a SHOULD asks for: low), and so do the Origin guard and the CORS preflight (a
/// redirect is their answer to a foreign Origin).
fn redirected(probe: TransportProbe, ex: &Exchange) -> Option<Verdict> {
    use TransportProbe::{Delete, Get, Origin, Preflight};
    if matches!(probe, Get | Delete | Origin | Preflight) {
        return None;
    }
    let o = crate::probe::reason::redirected(ex)?;
    Some(Verdict::unknown(
        o.cause,
        o.explain(&format!("what {} tests", probe.check())),
    ))
}

/// No answer at all (the connection closed or reset, no first byte in time, a body cut
/// short): nothing was served, so nothing is known about the rule. `unknown` with the
/// exchange's cause (`reset`, `timeout`), which the merge names `probe.incomplete`, as the
/// listing does; never a failure such as `security.origin-not-validated`.
fn no_response(probe: TransportProbe, e: &ExchangeError) -> Verdict {
    Verdict::unknown(
        e.cause,
        format!(
            "no response, so what {} tests was not observed: {}",
            probe.check(),
            e.message
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cause, Outcome};
    use crate::probe::test_support::answer_with;

    /// Red-team defect 6 (front.py drop): the connection closed without a response raised
    /// security.origin-not-validated (a failure of security.origin).
    #[test]
    fn no_response_is_unknown_with_its_cause_for_every_probe() {
        for probe in TransportProbe::MODERN {
            for cause in [Cause::Reset, Cause::Timeout] {
                let e = ExchangeError {
                    cause,
                    message: "the connection was closed before a response".into(),
                };
                let v = no_response(*probe, &e);
                assert_eq!(
                    (v.outcome, v.severity, v.cause),
                    (Outcome::Unknown, None, Some(cause)),
                    "{probe:?}"
                );
                assert!(v.observed.contains(&probe.check().to_string()));
            }
        }
    }

    /// The Origin probe answered 403 while the control sent alongside got no answer: no
    /// pass.
    #[test]
    fn an_unanswered_control_leaves_the_origin_403_unknown() {
        let ex = answer_with(403, None, crate::probe::http::Body::Empty, &[]);
        let j = Judging {
            era: Era::Modern,
            unsure: None,
            token: None,
            legacy_control: None,
        };
        let lost = Err(ExchangeError {
            cause: Cause::Reset,
            message: "closed".into(),
        });
        let v = judge(TransportProbe::Origin, &ex, Some(&lost), &j);
        assert_eq!((v.outcome, v.cause), (Outcome::Unknown, Some(Cause::Reset)));
        let served = Ok(Exchange {
            status: 200,
            ..ex.clone()
        });
        assert_eq!(
            judge(TransportProbe::Origin, &ex, Some(&served), &j).outcome,
            Outcome::Pass
        );
    }
}

#[cfg(test)]
#[path = "transport_stage_redirect_tests.rs"]
mod redirect_tests;
