//! A resolver failure every region shares (red team round 13, N1). `probe.resolver-failed`
//! names a vantage's own resolver (`checks.md` 4.1), and stays so: nothing about the target
//! was observed, the decision is `unknown`. But when every region's resolver (each region
//! asks its own) answered SERVFAIL the same way for the name, the likely party is the zone (a lame
//! delegation, a broken DNSSEC chain, authoritative servers that do not answer): the title,
//! the evidence and the fix say so, so the `because` line no longer blames the vantages for
//! what is almost surely the zone's.

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::RegionResult;

use super::evidence::{gap_finding, reading, Reading};
use super::Acc;

/// The title when every region's resolver failed the same way.
pub const TITLE: &str = "Every region's resolver failed the same way: likely the zone's authoritative servers (lame delegation, DNSSEC), not the vantages";

const FIX: &str = "Every region's resolver failed the same way for this name (the evidence says how): resolvers in different networks agreeing points at the zone, so check its authoritative servers first: the delegation (NS records that answer for the zone), the DNSSEC chain (a DS without a matching DNSKEY, expired signatures make validating resolvers answer SERVFAIL), and that they answer over UDP and TCP. If the regions share one resolver (--nameserver, the same upstream), check that resolver too.";

/// How `r`'s resolver failed for the target's name, when it did: the rcode of each query
/// that was not answered (the others "answered").
fn failure(r: &RegionResult) -> Option<String> {
    let resolver_failed = r.checks.iter().any(|c| {
        c.id.stage() == vantage_agent::catalog::Stage::Dns
            && reading(c) == Reading::Gap
            && gap_finding(c) == FindingId::ProbeResolverFailed
    }) || r.check(CheckId::NetIpv6).is_some_and(|c| {
        reading(c) == Reading::Gap && gap_finding(c) == FindingId::ProbeResolverFailed
    });
    let d = r.dns.as_ref()?;
    if !resolver_failed {
        return None;
    }
    if d.a_rcode.is_empty() && d.aaaa_rcode.is_empty() {
        // An agent older than the per-family rcodes: the one rcode it has.
        return (!matches!(d.rcode.as_str(), "NOERROR" | "NXDOMAIN" | "LOCAL" | ""))
            .then(|| d.rcode.clone());
    }
    let family = |answered: bool, rcode: &str| {
        if answered {
            "answered".to_string()
        } else {
            rcode.to_string()
        }
    };
    (!d.a_answered() || !d.aaaa_answered()).then(|| {
        format!(
            "A {}, AAAA {}",
            family(d.a_answered(), &d.a_rcode),
            family(d.aaaa_answered(), &d.aaaa_rcode)
        )
    })
}

/// Retitle `probe.resolver-failed` when every effective region (at least two) has it for the
/// target's name, failed the same way.
pub(crate) fn same_everywhere(effective: &[&RegionResult], acc: &mut Acc) {
    if effective.len() < 2 {
        return;
    }
    let failures: Vec<Option<String>> = effective.iter().map(|r| failure(r)).collect();
    let Some(Some(first)) = failures.first() else {
        return;
    };
    // SERVFAIL is the resolvers' answer that they could not get one from the zone; a
    // timeout or REFUSED everywhere may as well be the vantages' own networks.
    if !first.contains("SERVFAIL") || failures.iter().any(|f| f.as_ref() != Some(first)) {
        return;
    }
    let Some(f) = acc.by_id.get_mut(&FindingId::ProbeResolverFailed) else {
        return;
    };
    if f.regions.len() != effective.len() {
        return;
    }
    f.title = TITLE.to_string();
    f.remediation = FIX.to_string();
    let line = format!(
        "every region's resolver failed the same way ({first}): resolvers in {} regions agreeing points at the zone's authoritative servers",
        effective.len()
    );
    if !f.evidence.contains(&line) {
        f.evidence.push(line);
    }
}
