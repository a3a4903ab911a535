//! The region's TLS evidence: the chain the handshake was presented and how the vantage
//! judged it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a vantage judged the chain a server presented (`tls.handshake`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TlsVerdict {
    /// The chain verified.
    Accepted,
    /// A certificate of the chain is past its notAfter by this vantage's clock.
    Expired,
    /// A certificate of the chain is before its notBefore by this vantage's clock.
    NotYetValid,
    /// The chain does not lead to an authority this vantage trusts.
    UnknownIssuer,
    /// Refused for another reason (a name mismatch, a bad signature, an alert, a timeout).
    Refused,
}

/// What one region's TLS handshake was presented and how its vantage judged it: the same
/// certificate judged differently by two regions is a vantage's clock or trust store, a
/// different certificate is the target's edge (the merge tells them apart).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TlsObservation {
    /// SHA-256 of the leaf certificate's DER, lowercase hex (read even when it was refused).
    pub leaf_sha256: String,
    /// SHA-256 of every presented certificate, leaf first.
    pub chain_sha256: Vec<String>,
    /// The leaf's notBefore, Unix seconds.
    pub leaf_not_before: i64,
    /// The leaf's notAfter, Unix seconds.
    pub leaf_not_after: i64,
    /// This vantage's own clock when it judged the chain, Unix seconds.
    pub clock: i64,
    /// How this vantage judged the chain.
    pub verdict: TlsVerdict,
    /// The target's addresses presented different chains (the first one is shown): no
    /// comparison with other regions is made on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mixed: bool,
    /// This vantage trusts certificate authorities it was given (vantage-agent
    /// --target-ca-file, probe.ca_file, --ca-file) besides the public roots every client
    /// ships: its `accepted` may rest on one of them, which a public client does not have.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub extra_roots: bool,
}
