//! A probe answered for another reason than the one it tests (`checks.md` 4.1): the valid
//! request without the probe's change (the control) is refused the same way, or the answer's
//! JSON-RPC code names another rule. Such an answer is no evidence about the rule: the
//! check is `unknown` with that reason, never a pass and never a warning under another id.

use super::http::Exchange;
use super::reason::{self, Subject};
use super::transport::{Leg, TransportProbe};
use super::verdict::Verdict;
use crate::model::{Cause, Era};

/// JSON-RPC error codes that name a rule other than the Origin guard, one the Origin probe
/// (the control's request plus `Origin`) could be refused for without the guard ever
/// looking at it: the codes 2026-07-28 gives a fault it found in the request, a header
/// missing or mismatched (-32020, what every request gets behind a gateway that strips
/// `Mcp-Method`), a client capability missing (-32021), a version refused (-32022), invalid
/// params (-32602). JSON-RPC's generic codes (-32600 Invalid Request, -32601, -32700, and
/// the implementation-defined -32000..-32099 other than these) name no such rule: next to
/// a served control, the foreign Origin is what was refused, so the answer is the guard's
/// (not the 403 it MUST be: a warning, like any other non-403 refusal).
pub const OTHER_RULE_CODES: &[i64] = &[-32020, -32021, -32022, -32602];

impl TransportProbe {
    /// What this probe asks about, for [`reason::another_reason`].
    /// The Origin probe and the CORS preflight both carry a foreign `Origin`: a 403 is the
    /// answer about it (the guard refusing it, no grant for it).
    fn subject(self) -> Subject {
        match self {
            TransportProbe::Origin | TransportProbe::Preflight => Subject::Origin,
            _ => Subject::Rule,
        }
    }

    /// Evaluate the probe's exchange against `control`, the answer to the same valid
    /// request without the probe's change, sent alongside it: an answer for another reason
    /// (a rate limit, an unavailable server, the authorization layer, a refusal in front of
    /// the MCP layer: [`reason::another_reason`]), or a refusal the control gets too, says
    /// nothing about the rule the probe tests, so it is `unknown` for this check, with that
    /// reason (`checks.md` 4.1), never a pass and never a warning under another id. `token`:
    /// the probe carried the operator's credential.
    pub fn judge(
        self,
        ex: &Exchange,
        era: Era,
        control: Option<&Exchange>,
        token: bool,
    ) -> Verdict {
        self.judge_on(ex, era, control, token, Leg::Main)
    }

    /// [`judge`](Self::judge) of the answer to the probe's request on `leg`, against that
    /// leg's control (the same valid request without the probe's change).
    pub fn judge_on(
        self,
        ex: &Exchange,
        era: Era,
        control: Option<&Exchange>,
        token: bool,
        leg: Leg,
    ) -> Verdict {
        if let Some(o) = reason::another_reason(ex, self.subject(), token) {
            return Verdict::unknown(o.cause, o.explain(&format!("what {} tests", self.check())));
        }
        if leg == Leg::ToolsCall {
            return self.judge_call(ex, era, control);
        }
        if let Some(v) = self.other_reason(ex, control, token) {
            return v;
        }
        self.evaluate_on(ex, era, leg)
    }

    /// [`judge`](Self::judge) on a server known to speak 2026-07-28 whose 2025-11-25 path was
    /// not observed (initialize was answered for another reason): modern-only or dual-era is
    /// unknown, so a verdict that depends on which is `unknown` too; one that does not
    /// stands.
    pub fn judge_unsure_era(
        self,
        ex: &Exchange,
        control: Option<&Exchange>,
        token: bool,
        why: &str,
    ) -> Verdict {
        let modern = self.judge(ex, Era::Modern, control, token);
        let dual = self.judge(ex, Era::Dual, control, token);
        if (modern.outcome, modern.severity) == (dual.outcome, dual.severity) {
            return modern;
        }
        Verdict::unknown(
            Cause::OtherReason,
            format!(
                "{}: compliant on a dual-era server but not on a modern-only one, and whether this server also speaks 2025-11-25 was not observed ({why})",
                ex.summary()
            ),
        )
    }

    /// The answer to the probe's `tools/call` of the absent tool, against the same call
    /// without the probe's change (`control`). The call is served when the MCP layer
    /// dispatched it: a result, or the unknown tool's -32602, at 200 or at a 4xx as the
    /// server answers its errors (as `auth.boundary` reads it). Only next to a control so
    /// dispatched does the answer say anything; the probe dispatched the same way is the
    /// change not refused (a failure, however the server answers unknown tools), any other
    /// answer is judged by the probe's rule (a 403, a 400 -32020). An answer for another
    /// reason ([`reason::another_reason`]) was made `unknown` before, as on every leg.
    fn judge_call(self, ex: &Exchange, era: Era, control: Option<&Exchange>) -> Verdict {
        let leg = Leg::ToolsCall;
        let s = ex.summary();
        let Some(c) = control.filter(|c| call_dispatched(c)) else {
            let got = control.map_or("no answer".to_string(), |c| c.summary());
            return Verdict::unknown(
                Cause::OtherReason,
                format!("{s}: the same tools/call without this probe's change, sent alongside it, was not dispatched ({got}), so nothing was learnt about the rule on tools/call"),
            );
        };
        if call_dispatched(ex) {
            let change = match self {
                TransportProbe::Origin => "a foreign Origin",
                TransportProbe::MissingMethod => "no Mcp-Method",
                TransportProbe::MethodMismatch => "Mcp-Method: tools/list",
                TransportProbe::MethodCase => "Mcp-Method: TOOLS/CALL",
                _ => "this probe's change",
            };
            let want = match self {
                TransportProbe::Origin => "403",
                TransportProbe::MethodCase => "400",
                _ => "400 with JSON-RPC -32020",
            };
            return Verdict::fail(
                crate::model::Severity::Medium,
                format!("{s}: the tool call with {change} was dispatched like the one without it ({}); expected {want}", c.summary()),
            );
        }
        if let Some(v) = self.origin_refused_for_another_rule(ex, "") {
            return v;
        }
        self.evaluate_on(ex, era, leg)
    }

    /// Past [`reason::another_reason`] (asked in [`judge_on`](Self::judge_on) for every
    /// leg): a 403 to the Origin probe beside a control not served, a refusal the control
    /// gets too, or an Origin refusal whose code names another rule.
    fn other_reason(
        self,
        ex: &Exchange,
        control: Option<&Exchange>,
        token: bool,
    ) -> Option<Verdict> {
        let s = ex.summary();
        // The Origin guard's 403 means something only when the same request without the
        // foreign Origin, sent alongside it, was served: a WAF that blocks this vantage
        // answers both with a 403.
        if let (TransportProbe::Origin, 403, Some(c)) = (self, ex.status, control) {
            if let Some(o) = reason::another_reason(c, Subject::Discover, token) {
                return Some(Verdict::unknown(
                    o.cause,
                    format!("{s}: the same request without the foreign Origin, sent alongside it, was not served either ({}), so the 403 is not known to be the Origin guard's", o.head),
                ));
            }
        }
        if !(400..500).contains(&ex.status) {
            return None;
        }
        if let Some(c) = control {
            if c.status == ex.status && c.rpc_error_code() == ex.rpc_error_code() {
                return Some(Verdict::unknown(
                    Cause::OtherReason,
                    format!("{s}: answered for another reason than the one this check tests: the valid request without this probe's change, sent alongside it, is refused the same way ({}), so nothing was learnt about the rule", c.summary()),
                ));
            }
        }
        self.origin_refused_for_another_rule(
            ex,
            " (a missing or mismatched header, a client capability, the version or the params)",
        )
    }

    /// The Origin probe refused, not with 403, with one of [`OTHER_RULE_CODES`]: nothing was
    /// learnt about the guard, `unknown`. `which` follows "names another rule" in what was
    /// observed (the rules named on the main leg, nothing on tools/call).
    fn origin_refused_for_another_rule(self, ex: &Exchange, which: &str) -> Option<Verdict> {
        if self != TransportProbe::Origin || ex.status == 403 {
            return None;
        }
        let code = ex
            .rpc_error_code()
            .filter(|c| OTHER_RULE_CODES.contains(c))?;
        Some(Verdict::unknown(
            Cause::OtherReason,
            format!("{}: refused with JSON-RPC {code}, which names another rule{which}, so nothing was learnt about the Origin guard", ex.summary()),
        ))
    }
}

/// A `tools/call` the MCP layer dispatched: a JSON-RPC result, or the unknown tool's
/// -32602 (the name was looked up), at 2xx or 4xx.
fn call_dispatched(ex: &Exchange) -> bool {
    use super::http::Rpc;
    (200..500).contains(&ex.status)
        && match ex.rpc() {
            Some(Rpc::Result { .. }) => (200..300).contains(&ex.status),
            Some(Rpc::Error { code, .. }) => code == -32602,
            None => false,
        }
}

#[cfg(test)]
#[path = "transport_reason_tests.rs"]
mod tests;

/// The Origin refusal whose code names another rule, on the main leg and on tools/call (one
/// helper since issue 14's fold): `unknown`, the main leg naming those rules, tools/call
/// not, each to the letter as before the fold.
#[cfg(test)]
mod other_rule_words {
    use serde_json::json;

    use super::*;
    use crate::model::Outcome;
    use crate::probe::http::Body;
    use crate::probe::test_support::answer_with;

    fn rpc(status: u16, code: Option<i64>) -> Exchange {
        let body = match code {
            Some(code) => {
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m"}})
            }
            None => json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}),
        };
        answer_with(status, Some("application/json"), Body::Json(body), &[])
    }

    #[test]
    fn the_origin_refused_with_another_rules_code_is_unknown_on_both_legs() {
        let served = rpc(200, None);
        // The absent tool's -32602: the call without the probe's change was dispatched.
        let dispatched = rpc(200, Some(-32602));
        let named =
            " (a missing or mismatched header, a client capability, the version or the params)";
        for code in [-32020, -32021, -32022] {
            let refusal = rpc(400, Some(code));
            for (leg, control, which) in [
                (Leg::Main, &served, named),
                (Leg::ToolsList, &served, named),
                (Leg::ToolsCall, &dispatched, ""),
            ] {
                let v = TransportProbe::Origin.judge_on(
                    &refusal,
                    Era::Modern,
                    Some(control),
                    false,
                    leg,
                );
                assert_eq!(
                    (v.outcome, v.severity, v.cause),
                    (Outcome::Unknown, None, Some(Cause::OtherReason)),
                    "{leg:?} {code}: {}",
                    v.observed
                );
                assert_eq!(
                    v.observed,
                    format!("{}: refused with JSON-RPC {code}, which names another rule{which}, so nothing was learnt about the Origin guard", refusal.summary()),
                    "{leg:?}"
                );
            }
        }
    }
}
