//! The transport probes of a run, sent concurrently, with their control alongside: the same
//! valid request without any probe's change (`server/discover`, or `initialize` on a server
//! that does not speak 2026-07-28), sent at the same time. A refusal the control gets too
//! was answered for another reason than the rule a probe tests (a WAF that starts blocking
//! mid-run refuses both), so the probe is `unknown`, not a pass (`checks.md` 4.1). The era
//! stage's discover answer is no control: it was captured before such a block began.

use std::time::Instant;

use serde_json::Value;

use crate::egress::EgressClient;
use crate::engine::Engine;
use crate::model::Era;
use crate::probe::http::{Exchange, ExchangeError, ProbeRequest, SseRead};
use crate::probe::transport::{self, TransportProbe};
use crate::probe::verdict::Verdict;
use crate::target::Target;

/// The JSON-RPC id of the control request.
const CONTROL_ID: i64 = 99;
/// The JSON-RPC id of the Origin probe sent as `initialize` on a dual-era server (after the
/// ids of [`TransportProbe::MODERN`], 100-111).
const LEGACY_ORIGIN_ID: i64 = 112;

/// One probe's result: its verdict, its answer (if any) and when it started.
pub(crate) type ProbeRun = (TransportProbe, Verdict, Option<Exchange>, Instant);

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
        let (control, results, legacy_origin) =
            tokio::join!(control, futures::future::join_all(runs), legacy_origin);
        results
            .into_iter()
            .map(|(probe, sent, started)| {
                let (mut v, ex) = match sent {
                    Err(skip) => (skip, None),
                    Ok(Ok(ex)) => (judge(probe, &ex, control.as_ref(), j), Some(ex)),
                    Ok(Err(e)) => (no_response(probe, &e), None),
                };
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
                }
                (probe, v, ex, started)
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
    match j.unsure {
        Some(why) => probe.judge_unsure_era(ex, ctrl, token, why),
        None => probe.judge(ex, j.era, ctrl, token),
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
