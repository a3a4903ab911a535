//! The HTTP client's resolver: every name is resolved once, with the vantage's own resolver
//! (the one `dns.*` used, `--nameserver` included), every address of the answer is
//! classified, and the connector gets exactly the addresses the policy admitted. There is
//! no second lookup between the check and the connect, so an answer that changes (DNS
//! rebinding) cannot slip an address past the policy. The target's name is pinned to the
//! address the engine resolved, checked and connected to.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hickory_resolver::proto::rr::{RData, RecordType};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::{EgressError, EgressPolicy};
use crate::model::Cause;
use crate::probe::connect::MAX_ADDRESSES;
use crate::probe::dns::{build_resolver, ResolverChoice};

/// Resolves names for the HTTP client under the egress policy.
#[derive(Debug, Clone)]
pub struct PolicyResolver {
    policy: Arc<EgressPolicy>,
    choice: ResolverChoice,
    timeout: Duration,
    /// `(name, addresses)` resolved and checked before: the target's.
    pinned: Vec<(String, Vec<IpAddr>)>,
}

/// A name as the resolver compares it: lowercase, without the root dot.
pub fn normalise_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

impl PolicyResolver {
    pub fn new(
        policy: Arc<EgressPolicy>,
        choice: ResolverChoice,
        timeout: Duration,
        pinned: Vec<(String, Vec<IpAddr>)>,
    ) -> Self {
        let pinned = pinned
            .into_iter()
            .map(|(n, a)| (normalise_name(&n), a))
            .collect();
        PolicyResolver {
            policy,
            choice,
            timeout,
            pinned,
        }
    }

    /// The addresses `name` may be connected to: the pinned ones, or one lookup's answer,
    /// each admitted by the policy. When none is admitted, the refusal of the first.
    pub async fn admitted(&self, name: &str) -> Result<Vec<IpAddr>, EgressError> {
        let host = normalise_name(name);
        let addrs = match self.pinned.iter().find(|(n, _)| *n == host) {
            Some((_, addrs)) => addrs.clone(),
            None => self.lookup(&host).await?,
        };
        let (admitted, refused) = self.policy.partition(&addrs);
        if admitted.is_empty() {
            // The first refusal speaks for the answer (the report names one address and
            // its class; the rest are alike in being refused).
            return Err(match refused.first() {
                Some(&first) => EgressError::Refused(first),
                None => EgressError::Lookup {
                    host,
                    reason: "no address".into(),
                    cause: Cause::NoAnswer,
                },
            });
        }
        Ok(admitted.into_iter().take(MAX_ADDRESSES).collect())
    }

    /// One lookup: A and AAAA, asked explicitly.
    async fn lookup(&self, host: &str) -> Result<Vec<IpAddr>, EgressError> {
        let resolver =
            build_resolver(&self.choice, self.timeout).map_err(|reason| EgressError::Lookup {
                host: host.to_string(),
                reason,
                cause: Cause::ResolverError,
            })?;
        let fqdn = format!("{host}.");
        let (a, aaaa) = tokio::join!(
            resolver.lookup(fqdn.as_str(), RecordType::A),
            resolver.lookup(fqdn.as_str(), RecordType::AAAA)
        );
        let mut addrs = Vec::new();
        let mut failure = None;
        for answer in [a, aaaa] {
            match answer {
                Ok(lookup) => {
                    addrs.extend(lookup.records().iter().filter_map(|r| match r.data() {
                        RData::A(a) => Some(IpAddr::V4(a.0)),
                        RData::AAAA(a) => Some(IpAddr::V6(a.0)),
                        _ => None,
                    }))
                }
                Err(e) => {
                    let (cause, reason) = if e.is_nx_domain() {
                        (Cause::Nxdomain, "NXDOMAIN".to_string())
                    } else if e.is_no_records_found() {
                        (Cause::NoAnswer, "no A or AAAA records".to_string())
                    } else {
                        (Cause::ResolverError, e.to_string())
                    };
                    failure.get_or_insert((cause, reason));
                }
            }
        }
        if addrs.is_empty() {
            let (cause, reason) =
                failure.unwrap_or((Cause::NoAnswer, "no A or AAAA records".to_string()));
            return Err(EgressError::Lookup {
                host: host.to_string(),
                reason,
                cause,
            });
        }
        Ok(addrs)
    }
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let name = name.as_str().to_string();
        Box::pin(async move {
            let addrs = this.admitted(&name).await?;
            // Port 0: the connector puts the URL's port in.
            let addrs: Addrs = Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}
