//! A probe answered for another reason than the one it tests (`checks.md` 4.1): the valid
//! request without the probe's change (the control) is refused the same way, or the answer's
//! JSON-RPC code names another rule. Such an answer is no evidence about the rule: the
//! check is `unknown` with that reason, never a pass and never a warning under another id.

use super::http::Exchange;
use super::transport::TransportProbe;
use super::verdict::Verdict;
use crate::model::{Cause, Era};

/// JSON-RPC error codes that name a rule other than the Origin guard: a header missing or
/// mismatched (-32020), a version refused (-32021, -32022), invalid params (-32602), an
/// unknown method (-32601), an invalid request or unparsable body (-32600, -32700).
pub const OTHER_RULE_CODES: &[i64] = &[-32020, -32021, -32022, -32602, -32601, -32600, -32700];

impl TransportProbe {
    /// Evaluate the probe's exchange against `control`, the answer to the same valid
    /// request without the probe's change: a refusal the control gets too was answered for
    /// another reason than the one the probe tests, so it is `unknown` for this check, with
    /// that reason (`checks.md` 4.1), never a pass and never a warning under another id.
    pub fn judge(self, ex: &Exchange, era: Era, control: Option<&Exchange>) -> Verdict {
        if let Some(v) = self.other_reason(ex, control) {
            return v;
        }
        self.evaluate(ex, era)
    }

    fn other_reason(self, ex: &Exchange, control: Option<&Exchange>) -> Option<Verdict> {
        let changes_one_thing = matches!(
            self,
            TransportProbe::MissingMethod
                | TransportProbe::MethodMismatch
                | TransportProbe::NameMismatch
                | TransportProbe::MissingVersion
                | TransportProbe::VersionUnsupported
                | TransportProbe::MetaMissing
                | TransportProbe::UnknownMethod
                | TransportProbe::Origin
        );
        if !changes_one_thing || !(400..500).contains(&ex.status) {
            return None;
        }
        let s = ex.summary();
        if let Some(c) = control {
            if c.status == ex.status && c.rpc_error_code() == ex.rpc_error_code() {
                return Some(Verdict::unknown(
                    Cause::OtherReason,
                    format!("{s}: answered for another reason than the one this check tests: the valid request without this probe's change is refused the same way ({}), so nothing was learnt about the rule", c.summary()),
                ));
            }
        }
        if self == TransportProbe::Origin && ex.status != 403 {
            if ex.status == 401 {
                return Some(Verdict::unknown(
                    Cause::OtherReason,
                    format!("{s}: the authorization layer answered, so nothing was learnt about the Origin guard"),
                ));
            }
            if let Some(code) = ex.rpc_error_code().filter(|c| OTHER_RULE_CODES.contains(c)) {
                return Some(Verdict::unknown(
                    Cause::OtherReason,
                    format!("{s}: refused with JSON-RPC {code}, which names another rule (a missing or mismatched header, the version, the params or the method), so nothing was learnt about the Origin guard"),
                ));
            }
        }
        None
    }
}
