//! Fixes that follow the evidence: for some findings the right fix depends on how the check
//! failed (its cause), so the catalogue's general fix is replaced by one for that cause. The
//! finding id never changes.

use vantage_agent::catalog::FindingId::{self, *};
use vantage_agent::model::Cause;

/// The fix for `finding` when every failing region saw `cause`; `None` keeps the catalogue's.
pub fn for_cause(finding: FindingId, cause: Cause) -> Option<&'static str> {
    Some(match (finding, cause) {
        (EraDetect, Cause::Timeout) => {
            "The server accepted the connection but did not answer in time: check that the MCP server process is running and not stuck, and that a proxy or load balancer in front of it forwards POST to a live backend (an upstream timeout longer than clients wait looks like this). The evidence says whether any byte arrived."
        }
        (EraDetect, Cause::Reset) => {
            "The connection was cut before the answer was complete: check the server's logs for crashes or restarts, and any proxy in front of it for connection or size limits."
        }
        (EraDetect, Cause::SizeCap) => {
            "The answer to one MCP request is larger than any MCP response should be, or never ends: make sure POST on this URL reaches the MCP server, not a stream or a download."
        }
        (EraDetect | NetConnect, Cause::Tls) | (TlsHandshake, Cause::Tls) => {
            "Serve a chain the clients trust (a public CA; for a laboratory, the CA given to --ca-file or --target-ca-file): a leaf certificate (not a CA certificate), valid for the host name, with its intermediates; and serve TLS on this port. The evidence says what the handshake refused."
        }
        (NetConnect | EgressBlocked, Cause::Timeout) => {
            "The connection attempts got no answer at all (a silent drop): a firewall, security group or network ACL discards the packets. Allow the port from the internet, or from the regions named."
        }
        (NetConnect | EgressBlocked, Cause::Refused) => {
            "The address actively refused the connection: nothing listens on that port there, or a firewall rejects it. Start the server on the published address and port, or fix the DNS records."
        }
        (NetConnect | EgressBlocked, Cause::Unreachable) => {
            "There is no route to the address: check the published addresses and the routing to them."
        }
        (TlsHandshake, Cause::Timeout) => {
            "The port accepted TCP but never completed a TLS handshake: check that it serves TLS (not plain HTTP) and that the TLS terminator in front of the server is healthy."
        }
        _ => return None,
    })
}

/// The fix for a finding seen with these causes: a cause-specific one only when every
/// failing region agrees on the cause.
pub fn for_causes(finding: FindingId, causes: &[Option<Cause>]) -> Option<&'static str> {
    let first = (*causes.first()?)?;
    if causes.iter().all(|c| *c == Some(first)) {
        for_cause(finding, first)
    } else {
        None
    }
}

/// The fix for a DNS failure whose evidence names a CNAME fault of the zone (the agent's
/// own words open the evidence: `CNAME loop a -> b -> a`, `NXDOMAIN: the name is a CNAME
/// (…)`), when every failing region saw the same kind; `None` keeps the cause's fix.
pub fn for_observed(finding: FindingId, observed: &[&str]) -> Option<&'static str> {
    if finding != DnsResolve || observed.is_empty() {
        return None;
    }
    if observed.iter().all(|o| o.starts_with("CNAME loop ")) {
        return Some("The name's CNAME chain loops back on itself (the evidence names it): break the loop, so that the last name of the chain holds the A (and AAAA) records.");
    }
    if observed.iter().all(|o| {
        (o.starts_with("A answered NXDOMAIN while AAAA")
            || o.starts_with("AAAA answered NXDOMAIN while A"))
            && o.contains(" with records (")
    }) {
        return Some("The zone answers NXDOMAIN for one address type of a name that has records of the other (the evidence names which): a resolver that caches that NXDOMAIN then denies the other type too (RFC 2308, RFC 8020). Answer NOERROR without data for the type the name has no records of (in dnsmasq, give the name with --host-record or an explicit record of each type rather than --address; in a DNS load balancer, its empty-answer setting).");
    }
    if observed
        .iter()
        .all(|o| o.starts_with("NXDOMAIN: the name is a CNAME ("))
    {
        return Some("The name is a CNAME to a name that does not exist (a dangling CNAME, the evidence names both): point the CNAME at a name that has A (and AAAA) records, or replace it with those records.");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Red team round 13, item 2: one family answered NXDOMAIN beside the other's records
    /// gets its own fix, not "publish A records".
    #[test]
    fn a_family_nxdomain_beside_records_has_its_own_fix() {
        let o = "AAAA answered NXDOMAIN while A answered NOERROR with records (A 198.51.100.1): the zone says the name does not exist";
        let fix = for_observed(DnsResolve, &[o]).unwrap();
        assert!(
            fix.contains("NOERROR without data") && fix.contains("--host-record"),
            "{fix}"
        );
        assert_eq!(for_observed(DnsResolve, &[o, "NXDOMAIN"]), None);
    }

    #[test]
    fn a_fix_follows_the_cause_only_when_every_region_agrees() {
        assert!(for_causes(EraDetect, &[Some(Cause::Timeout)])
            .unwrap()
            .contains("accepted the connection"));
        assert_eq!(
            for_causes(EraDetect, &[Some(Cause::Timeout), Some(Cause::Reset)]),
            None
        );
        assert_eq!(for_causes(EraDetect, &[None]), None);
        assert_eq!(for_causes(MethodUnknown, &[Some(Cause::Timeout)]), None);
    }
}
