//! The HTTP client's resolver: every name is resolved once, with the vantage's own resolver
//! (the one `dns.*` used, `--nameserver` included), every address of the answer is
//! classified, and the connector gets exactly the addresses the policy admitted. There is
//! no second lookup between the check and the connect, so an answer that changes (DNS
//! rebinding) cannot slip an address past the policy. The target's name is pinned to the
//! address the engine resolved, checked and connected to.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hickory_resolver::proto::rr::RecordType;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::{EgressError, EgressPolicy};
use crate::model::Cause;
use crate::probe::connect::MAX_ADDRESSES;
use crate::probe::dns::ResolverChoice;
use crate::probe::dns_query::{no_address, Querier};

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

    /// One lookup: A and AAAA, asked explicitly, read by the same rules as `dns.resolve`: a
    /// name that does not exist (or has no address) is the name's fault; a timeout, SERVFAIL
    /// or REFUSED is the vantage's resolver's (`Cause::ResolverError`), never "no records".
    async fn lookup(&self, host: &str) -> Result<Vec<IpAddr>, EgressError> {
        let querier =
            Querier::new(&self.choice, self.timeout).map_err(|reason| EgressError::Lookup {
                host: host.to_string(),
                reason,
                cause: Cause::ResolverError,
            })?;
        let (a, aaaa) = tokio::join!(
            querier.query(host, RecordType::A),
            querier.query(host, RecordType::AAAA)
        );
        let addrs: Vec<IpAddr> = a.addrs.iter().chain(aaaa.addrs.iter()).copied().collect();
        if addrs.is_empty() {
            let (cause, reason) = no_address(host, &a, &aaaa);
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
