//! An agent's own ceiling on the policy its jobs carry (`vantage-agent
//! --allow-non-global-max`): a coordinator, or whoever took it over, cannot turn the agent
//! into a way into its region's internal network. A job whose `allow_non_global` or
//! `assume_global` (an assumed-global address is connected to as well) names a prefix the
//! ceiling does not contain is refused, and nothing of it runs.

use ipnet::IpNet;

use crate::job::Policy;

/// The widest policy an agent accepts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ceiling {
    prefixes: Vec<IpNet>,
}

/// A job wider than the agent's ceiling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("probe.{field} names {prefix}, wider than this agent's --allow-non-global-max ({ceiling}); narrow probe.{field} in the coordinator's configuration or widen the agent's ceiling")]
pub struct Wider {
    pub field: &'static str,
    pub prefix: IpNet,
    pub ceiling: String,
}

/// `netclass::in_prefixes` for a whole prefix: inside `outer` as written, or through the
/// IPv4-mapped form either way.
fn within(inner: &IpNet, outer: &IpNet) -> bool {
    if outer.contains(inner) {
        return true;
    }
    match (inner, outer) {
        (IpNet::V4(v4), IpNet::V6(_)) => {
            ipnet::Ipv6Net::new(v4.network().to_ipv6_mapped(), v4.prefix_len() + 96)
                .is_ok_and(|m| outer.contains(&IpNet::V6(m)))
        }
        (IpNet::V6(v6), IpNet::V4(_)) if v6.prefix_len() >= 96 => {
            match crate::netclass::embedded_v4(v6.network()) {
                Some((v4, crate::netclass::Embedding::Mapped)) => {
                    ipnet::Ipv4Net::new(v4, v6.prefix_len() - 96)
                        .is_ok_and(|n| outer.contains(&IpNet::V4(n)))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

impl Ceiling {
    pub fn new(prefixes: Vec<IpNet>) -> Self {
        Ceiling { prefixes }
    }

    /// Accept `policy` when every prefix it names lies inside the ceiling.
    pub fn admits(&self, policy: &Policy) -> Result<(), Wider> {
        for (field, list) in [
            ("allow_non_global", &policy.allow_non_global),
            ("assume_global", &policy.assume_global),
        ] {
            if let Some(&prefix) = list
                .iter()
                .find(|p| !self.prefixes.iter().any(|c| within(p, c)))
            {
                return Err(Wider {
                    field,
                    prefix,
                    ceiling: self.describe(),
                });
            }
        }
        Ok(())
    }

    fn describe(&self) -> String {
        if self.prefixes.is_empty() {
            "none".to_string()
        } else {
            self.prefixes
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}
