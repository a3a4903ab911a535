//! Split horizon (`checks.md` 3): regions that disagree on the class of DNS answer. Only
//! answers are compared: a region whose own resolver failed has no class (that is
//! `probe.resolver-failed`, never a fact about the zone), and "A present or absent" counts
//! only where the A query was answered. Like every comparison finding, the split horizon is
//! never worse than the failures it compares (see [`departure`]).

use std::collections::BTreeSet;

use vantage_agent::catalog::{CheckId, FindingId};
use vantage_agent::model::{Cause, CheckResult, DnsObservation, Outcome, RegionResult, Severity};

use super::evidence::{has_evidence, reading, Reading};
use super::Acc;
use crate::report::Scope;

/// Whether a failed check failed because a name it needed has no address in this region's
/// view of the zone (a metadata or authorization server host that is NXDOMAIN, has no data,
/// or is a CNAME loop there): its cause says so, or its evidence carries the vantage's DNS
/// line for that host (`DNS: HOST: NXDOMAIN ...`, as every engine writes a lookup that gave no
/// address). A difference between regions that DNS explains is not an edge difference
/// (`checks.md` 3, `edge.divergent`; red team round 13, #5). A resolver's failure (SERVFAIL,
/// timeout) is not the zone's answer and explains nothing here.
pub fn failed_at_dns(c: &CheckResult) -> bool {
    if matches!(c.cause, Some(Cause::Nxdomain | Cause::NoAnswer)) {
        return true;
    }
    c.observed.match_indices("DNS: ").any(|(i, m)| {
        let rest = &c.observed[i + m.len()..];
        let Some((host, answer)) = rest.split_once(": ") else {
            return false;
        };
        !host.is_empty()
            && !host.contains(char::is_whitespace)
            && ["NXDOMAIN", "NOERROR but no A or AAAA records", "CNAME loop"]
                .iter()
                .any(|a| answer.starts_with(a))
    })
}

/// The class of a region's DNS answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DnsClass {
    /// Global addresses; whether an A record is among them, when the A query was answered.
    Global {
        has_a: Option<bool>,
    },
    NonGlobal,
    Nxdomain,
    /// NOERROR with no address records.
    NoData,
}

impl DnsClass {
    fn kind(self) -> u8 {
        match self {
            DnsClass::Global { .. } => 0,
            DnsClass::NonGlobal => 1,
            DnsClass::Nxdomain => 2,
            DnsClass::NoData => 3,
        }
    }
}

/// The class of `r`'s answer, or `None` when it has no evidence of one.
pub fn dns_class(r: &RegionResult) -> Option<DnsClass> {
    let dns = r.dns.as_ref()?;
    let resolve = r.check(CheckId::DnsResolve)?;
    // A half-answered name (one query failed, the other gave addresses) has no
    // `dns.resolve` evidence, yet the family that answered is the zone's: its class counts,
    // the failed family's records are left out (below and in `split_horizon`).
    let half_answered = resolve.outcome == Outcome::Unknown
        && dns.addresses().next().is_some()
        && (dns.a_answered() != dns.aaaa_answered());
    if !has_evidence(resolve) && !half_answered {
        return None;
    }
    // A name with addresses whose other family was answered NXDOMAIN fails dns.resolve, but
    // its class is its addresses': the family's NXDOMAIN is compared beside it
    // (`family_split`). As the NXDOMAIN class it made every region of a fleet without a
    // global answer "the odd view" (fresh eyes round 14, item 4).
    if resolve.outcome == Outcome::Fail && dns.addresses().next().is_none() {
        return match (resolve.cause, dns.rcode.as_str()) {
            (Some(Cause::Nxdomain), _) | (None, "NXDOMAIN") => Some(DnsClass::Nxdomain),
            (Some(Cause::NoAnswer), _) | (None, "NOERROR") => Some(DnsClass::NoData),
            _ => None,
        };
    }
    dns.addresses().next()?;
    // Whether the addresses are global is the agent's judgement in `dns.global-addresses`:
    // a non-global answer is one that check failed (or warned about), one it passed is
    // global; where it has no evidence (a cause of the vantage's own), the answer has no
    // class (`checks.md` 4.1: a fault of the vantage is never a finding about the target).
    if !dns.all_global {
        match r.check(CheckId::DnsGlobalAddresses).map(reading) {
            Some(Reading::Problem) => return Some(DnsClass::NonGlobal),
            Some(Reading::Pass) => {}
            _ => return None,
        }
    }
    let has_a = r
        .check(CheckId::DnsARecord)
        .filter(|c| has_evidence(c))
        .map(|c| c.outcome == Outcome::Pass);
    Some(DnsClass::Global { has_a })
}

/// The family whose query was answered NXDOMAIN while the name has addresses, if one was.
fn family_nxdomain(dns: &DnsObservation) -> Option<&'static str> {
    dns.addresses().next()?;
    [("A", &dns.a_rcode), ("AAAA", &dns.aaaa_rcode)]
        .into_iter()
        .find(|(_, rcode)| rcode.as_str() == "NXDOMAIN")
        .map(|(what, _)| what)
}

/// Regions with addresses whose query for one family was answered NXDOMAIN (RFC 4074 section
/// 4.2: a server that says the name does not exist for AAAA) while another region's query for
/// that family was answered NOERROR (records or no data): they disagree on whether the name
/// exists, "answer vs NXDOMAIN" (`checks.md` 3; red team round 13, #2), whatever each
/// region's agent made of it. Compared beside the class of the addresses, never instead of
/// it (a non-global answer stays one). Each named region departs at the severity of its own
/// `dns.resolve` failure, if its agent failed it, else at info: the comparison is never above
/// the failures it compares.
fn family_split(classes: &[(&RegionResult, DnsClass)], acc: &mut Acc) -> bool {
    let with_addresses: Vec<&RegionResult> = classes
        .iter()
        .filter(|(_, c)| matches!(c, DnsClass::Global { .. } | DnsClass::NonGlobal))
        .map(|(r, _)| *r)
        .collect();
    let mut odd: Vec<&RegionResult> = Vec::new();
    for rcode in [
        |d: &DnsObservation| d.a_rcode.clone(),
        |d: &DnsObservation| d.aaaa_rcode.clone(),
    ] {
        let answered: Vec<(&RegionResult, String)> = with_addresses
            .iter()
            .filter_map(|r| r.dns.as_ref().map(|d| (*r, rcode(d))))
            .filter(|(_, c)| matches!(c.as_str(), "NOERROR" | "NXDOMAIN"))
            .collect();
        let (nx, ok): (Vec<_>, Vec<_>) = answered.iter().partition(|(_, c)| c == "NXDOMAIN");
        if !nx.is_empty() && !ok.is_empty() {
            odd.extend(nx.iter().map(|(r, _)| *r));
        }
    }
    if odd.is_empty() {
        return false;
    }
    let severity = odd
        .iter()
        .filter_map(|r| {
            r.check(CheckId::DnsResolve)
                .filter(|c| reading(c) == Reading::Problem)
                .map(|c| c.severity.unwrap_or(Severity::Medium))
        })
        .max()
        .unwrap_or(Severity::Info);
    let regions: Vec<String> = odd.iter().map(|r| r.region.clone()).collect();
    let evidence = with_addresses.iter().map(|r| describe_dns(r)).collect();
    acc.add(
        FindingId::DnsSplitHorizon,
        severity,
        Scope::Regional,
        &regions,
        evidence,
    );
    true
}

fn describe_dns(r: &RegionResult) -> String {
    match &r.dns {
        None => format!("{}: no DNS data", r.region),
        Some(d) => {
            let addrs: Vec<&str> = d.addresses().map(String::as_str).collect();
            let mut line = if addrs.is_empty() {
                format!("{}: {} (no addresses)", r.region, d.rcode)
            } else {
                let class = if d.all_global { "global" } else { "non-global" };
                format!("{}: {} ({class})", r.region, addrs.join(", "))
            };
            if let Some(what) = family_nxdomain(d) {
                line.push_str(&format!(
                    "; its {what} query was answered NXDOMAIN (the name does not exist) although the name has addresses"
                ));
            }
            for (answered, what, rcode) in [
                (d.a_answered(), "A", &d.a_rcode),
                (d.aaaa_answered(), "AAAA", &d.aaaa_rcode),
            ] {
                if !answered {
                    line.push_str(&format!(
                        "; its {what} query failed ({rcode}), so its {what} records are unknown and left out"
                    ));
                }
            }
            line
        }
    }
}

/// Whether `c` agrees with the public answer `reference` (a global answer, with A when any
/// region's A query found one). An unanswered A query is no evidence against it.
fn matches_reference(c: DnsClass, with_a: bool) -> bool {
    match c {
        DnsClass::Global { has_a } => !with_a || has_a != Some(false),
        _ => false,
    }
}

/// How severe a region's departure from the other regions' answers is: the severity its
/// agent gave the failure that puts it in its class (`dns.resolve` for NXDOMAIN or no data,
/// `dns.global-addresses` for a non-global answer, `dns.a-record` for a missing A record),
/// warnings included at their own severity. The comparison never raises an observation
/// (`checks.md` 4.1: a difference is reported at its own severity), so a region failing the
/// same way later, which ends the disagreement, can never lower the decision: the per-check
/// finding of that failure carries at least this severity, whatever the other regions saw.
/// Every class but a global answer rests on such a failure ([`dns_class`]), and a global
/// answer is odd only when its A query found no A record: `None` only for a reference answer.
fn departure(r: &RegionResult, class: DnsClass) -> Option<Severity> {
    let check = match class {
        DnsClass::Nxdomain | DnsClass::NoData => CheckId::DnsResolve,
        DnsClass::NonGlobal => CheckId::DnsGlobalAddresses,
        DnsClass::Global { .. } => CheckId::DnsARecord,
    };
    r.check(check)
        .filter(|c| reading(c) == Reading::Problem)
        .map(|c| c.severity.unwrap_or(Severity::Medium))
}

/// `dns.split-horizon` when regions' answers differ in class, else `dns.answers-differ`
/// (info) when only the global addresses differ.
pub fn split_horizon(effective: &[&RegionResult], acc: &mut Acc) {
    let classes: Vec<(&RegionResult, DnsClass)> = effective
        .iter()
        .filter_map(|r| dns_class(r).map(|c| (*r, c)))
        .collect();
    let kinds: BTreeSet<u8> = classes.iter().map(|(_, c)| c.kind()).collect();
    let a_known: BTreeSet<bool> = classes
        .iter()
        .filter_map(|(_, c)| match c {
            DnsClass::Global { has_a } => *has_a,
            _ => None,
        })
        .collect();
    let evidence = || classes.iter().map(|(r, _)| describe_dns(r)).collect();
    let family = family_split(&classes, acc);
    if kinds.len() > 1 || a_known.len() > 1 {
        let any_global = kinds.contains(&0);
        let (odd, mut ev): (Vec<&(&RegionResult, DnsClass)>, Vec<String>) = if any_global {
            // The public answer is the reference: a global one, with A if any region got A.
            let with_a = a_known.contains(&true);
            let odd = classes
                .iter()
                .filter(|(_, c)| !matches_reference(*c, with_a))
                .collect();
            (odd, evidence())
        } else {
            // No region got a public answer: which view is the odd one cannot be told, so
            // every region that answered is named.
            let mut ev: Vec<String> = evidence();
            ev.push(
                "no region received a global answer, so which view is the odd one cannot be told"
                    .into(),
            );
            (classes.iter().collect(), ev)
        };
        ev.dedup();
        // Never reached with `None`: every odd region departs with a failure (`departure`).
        let severity = odd
            .iter()
            .filter_map(|(r, c)| departure(r, *c))
            .max()
            .unwrap_or(Severity::Info);
        let odd: Vec<String> = odd.iter().map(|(r, _)| r.region.clone()).collect();
        acc.add(
            FindingId::DnsSplitHorizon,
            severity,
            Scope::Regional,
            &odd,
            ev,
        );
    } else if classes.len() > 1 && kinds.contains(&0) && !family {
        // Each family is compared among the regions whose query for it was answered: a
        // failed query says nothing about the records (`checks.md` 4.1).
        let family = |answered: fn(&DnsObservation) -> bool,
                      records: fn(&DnsObservation) -> &Vec<String>| {
            classes
                .iter()
                .filter_map(|(r, _)| r.dns.as_ref())
                .filter(|d| answered(d))
                .map(|d| records(d).iter().collect::<BTreeSet<&String>>())
                .collect::<BTreeSet<_>>()
        };
        let a_sets = family(DnsObservation::a_answered, |d| &d.a);
        let aaaa_sets = family(DnsObservation::aaaa_answered, |d| &d.aaaa);
        if a_sets.len() > 1 || aaaa_sets.len() > 1 {
            let regions: Vec<String> = classes.iter().map(|(r, _)| r.region.clone()).collect();
            acc.add(
                FindingId::DnsAnswersDiffer,
                Severity::Info,
                Scope::Global,
                &regions,
                evidence(),
            );
        }
    }
}
