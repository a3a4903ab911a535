//! One egress policy for every connection a vantage makes (a probe fleet must not be a
//! server-side request forgery service).
//!
//! Every address the vantage would connect to is classified with the IANA special-purpose
//! table of [`crate::netclass`]; a non-global one is refused unless `allow_non_global` names
//! it (an `assume_global` prefix makes its addresses global). IPv4-mapped (`::ffff:a.b.c.d`)
//! and NAT64 (`64:ff9b::a.b.c.d`) addresses are judged as the IPv4 address they carry, and an
//! IPv4 prefix covers those forms, so writing an address another way changes nothing.
//!
//! The policy is enforced where connections are made, and nowhere else:
//! - the raw connect and TLS probes ([`crate::probe::connect`], [`crate::probe::tls`]) ask
//!   [`EgressPolicy::check`] before each `connect`;
//! - every HTTP request goes through [`EgressClient`], the probe engine's only HTTP client:
//!   an address literal in a URL is checked before the request is built, and a name is
//!   resolved by [`resolve::PolicyResolver`], which classifies every address of the answer
//!   and hands the connector exactly the addresses it admitted (no second lookup that DNS
//!   rebinding could change); the target's name is pinned to the address the engine already
//!   resolved, checked and connected to;
//! - the peer of every response is checked again before a byte of it is read (defence in
//!   depth: nothing fetched from a refused address reaches a report, a log or a metric);
//! - redirects are never followed; a recorded `Location` is judged, not fetched
//!   ([`location_note`]).

mod ceiling;
mod client;
pub mod resolve;

#[cfg(test)]
mod tests;

use std::net::IpAddr;

use ipnet::IpNet;
use url::{Host, Url};

pub use ceiling::{Ceiling, Wider};
#[cfg(test)]
pub(crate) use client::{loopback_test_client, test_client};
pub use client::{ClientSettings, Connection, EgressClient, RedirectLog, Redirected};

use crate::job::Policy;
use crate::model::{Cause, Outcome};
use crate::netclass::{self, AddrClass};
use crate::probe::verdict::Verdict;

/// The hint every refusal ends with: the configuration key that allows a prefix (the
/// `--allow-non-global` flag of `vantage check` sets the same key).
pub const ALLOW_HINT: &str = "allow it with probe.allow_non_global";

/// Which addresses a vantage may connect to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EgressPolicy {
    assume_global: Vec<IpNet>,
    allow_non_global: Vec<IpNet>,
    /// Addresses allowed whatever their class: the target the operator named on their own
    /// machine (`vantage check`), never a URL the target names.
    named_target: Vec<IpAddr>,
}

/// An address the policy refuses: it is not global and no allowed prefix names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("refused by egress policy: {}; {ALLOW_HINT}", netclass::describe(*.addr, *.class))]
pub struct Refused {
    pub addr: IpAddr,
    pub class: AddrClass,
}

/// Why a URL is not fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    /// Its address (a literal, or every address its name resolved to) is refused.
    #[error(transparent)]
    Refused(#[from] Refused),
    /// Only `http` and `https` are fetched.
    #[error("refused by egress policy: {url} is not an http or https URL")]
    Scheme { url: String },
    /// User information in a URL would be sent as credentials to whoever the target names.
    #[error("refused by egress policy: {url} carries user information")]
    Userinfo { url: String },
    #[error("refused by egress policy: {url} has no host")]
    NoHost { url: String },
    /// The vantage's resolver gave no address for a name (NXDOMAIN, no data, a failure).
    #[error("DNS: {host}: {reason}")]
    Lookup {
        host: String,
        reason: String,
        cause: Cause,
    },
}

impl EgressError {
    /// The machine-readable cause of a check that ends here.
    pub fn cause(&self) -> Cause {
        match self {
            EgressError::Refused(_) => Cause::PolicyRefused,
            EgressError::Scheme { .. }
            | EgressError::Userinfo { .. }
            | EgressError::NoHost { .. } => Cause::Malformed,
            EgressError::Lookup { cause, .. } => *cause,
        }
    }

    /// Whether the policy refused an address (as opposed to a URL it does not fetch).
    pub fn is_refusal(&self) -> bool {
        matches!(self, EgressError::Refused(_))
    }
}

/// An IPv6 prefix written in the IPv4-mapped form (`::ffff:127.0.0.0/104`) is the IPv4
/// prefix it stands for; any other prefix is kept as written.
fn normalise(net: IpNet) -> IpNet {
    match net {
        IpNet::V6(v6) if v6.prefix_len() >= 96 => match netclass::embedded_v4(v6.network()) {
            Some((v4, netclass::Embedding::Mapped)) => {
                ipnet::Ipv4Net::new(v4, v6.prefix_len() - 96)
                    .map(|n| IpNet::V4(n.trunc()))
                    .unwrap_or(net)
            }
            _ => net,
        },
        other => other.trunc(),
    }
}

impl EgressPolicy {
    /// The policy a job carries.
    pub fn new(policy: &Policy) -> Self {
        EgressPolicy {
            assume_global: policy
                .assume_global
                .iter()
                .copied()
                .map(normalise)
                .collect(),
            allow_non_global: policy
                .allow_non_global
                .iter()
                .copied()
                .map(normalise)
                .collect(),
            named_target: Vec::new(),
        }
    }

    /// The same policy, also allowing `addrs` whatever their class: the addresses of the
    /// target the operator named on their own machine. URLs the target names (metadata,
    /// authorization servers, Location) get no such allowance unless they lead back to
    /// one of these addresses.
    pub fn allowing_named_target(mut self, addrs: &[IpAddr]) -> Self {
        self.named_target.extend(addrs.iter().copied());
        self
    }

    /// The class of `addr` under this policy's `assume_global` prefixes.
    pub fn class(&self, addr: IpAddr) -> AddrClass {
        netclass::classify(addr, &self.assume_global)
    }

    /// Admit or refuse one address.
    pub fn check(&self, addr: IpAddr) -> Result<(), Refused> {
        let class = self.class(addr);
        if class.global
            || netclass::in_prefixes(addr, &self.allow_non_global)
            || self.named_target.iter().any(|&t| same_host(t, addr))
        {
            Ok(())
        } else {
            Err(Refused { addr, class })
        }
    }

    /// Check a URL before anything is sent to it: the scheme, user information, and the
    /// host when it is an address literal. A name is checked when it is resolved.
    pub fn check_url(&self, url: &Url) -> Result<(), EgressError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(EgressError::Scheme {
                url: url.to_string(),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(EgressError::Userinfo {
                url: url.to_string(),
            });
        }
        match url.host() {
            None => Err(EgressError::NoHost {
                url: url.to_string(),
            }),
            Some(Host::Ipv4(a)) => Ok(self.check(IpAddr::V4(a))?),
            Some(Host::Ipv6(a)) => Ok(self.check(IpAddr::V6(a))?),
            Some(Host::Domain(_)) => Ok(()),
        }
    }

    /// Split `addrs` into those admitted, in order, and those refused.
    pub fn partition(&self, addrs: &[IpAddr]) -> (Vec<IpAddr>, Vec<Refused>) {
        let mut admitted = Vec::new();
        let mut refused = Vec::new();
        for &a in addrs {
            match self.check(a) {
                Ok(()) => admitted.push(a),
                Err(r) => refused.push(r),
            }
        }
        (admitted, refused)
    }
}

/// The same host whichever way it is written (`127.0.0.1` and `::ffff:127.0.0.1`).
fn same_host(a: IpAddr, b: IpAddr) -> bool {
    a == b || netclass::in_prefixes(b, &[IpNet::from(a)])
}

/// What the policy says of a `Location` the engine records (and never follows): for an
/// address literal, whether the policy would refuse it; for a name, only that it was not
/// followed (a name the target chose is not even resolved).
pub fn location_note(policy: &EgressPolicy, base: &Url, location: &str) -> String {
    let Ok(url) = base.join(location) else {
        return " (not followed: redirects never are)".to_string();
    };
    match policy.check_url(&url) {
        Err(e) => format!(" (not followed: redirects never are; {e})"),
        Ok(()) => " (not followed: redirects never are)".to_string(),
    }
}

/// The verdict of a check the policy kept from its evidence: `unknown` (no evidence either
/// way, never a pass), cause `policy-refused`, the refusal as what was observed.
pub fn refused_verdict(observed: String) -> Verdict {
    Verdict {
        outcome: Outcome::Unknown,
        observed,
        severity: None,
        cause: Some(Cause::PolicyRefused),
    }
}

/// A summary of refusals for a report line: the first few in full, then a count.
pub fn summarise(refused: &[Refused]) -> String {
    const SHOWN: usize = 4;
    let mut parts: Vec<String> = refused
        .iter()
        .take(SHOWN)
        .map(ToString::to_string)
        .collect();
    if refused.len() > SHOWN {
        parts.push(format!("+{} more addresses refused", refused.len() - SHOWN));
    }
    parts.join("; ")
}
