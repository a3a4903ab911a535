//! The only place generated gRPC types meet the domain types: region results to and from
//! `vantage.v1`. Enumerations travel by their report names (`pass`, `high`, `cross-host`).

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Serialize;
use vantage_proto::v1 as pb;

use crate::model::{CheckResult, DnsObservation, RegionResult};

/// A message from the other side that does not fit the domain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: unknown value `{value}`")]
pub struct ConvertError {
    pub field: &'static str,
    pub value: String,
}

fn name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn parse<T: DeserializeOwned>(field: &'static str, value: &str) -> Result<T, ConvertError> {
    serde_json::from_value(serde_json::Value::String(value.to_string())).map_err(|_| ConvertError {
        field,
        value: value.to_string(),
    })
}

pub fn region_to_pb(r: &RegionResult) -> pb::RegionResult {
    pb::RegionResult {
        region: r.region.clone(),
        status: name(&r.status),
        duration_ms: r.duration_ms,
        era: name(&r.era),
        protected: r.protected,
        authenticated: r.authenticated,
        dns: r.dns.as_ref().map(|d| pb::DnsObservation {
            rcode: d.rcode.clone(),
            a: d.a.clone(),
            aaaa: d.aaaa.clone(),
            cname: d.cname.clone(),
            has_a: d.has_a,
            all_global: d.all_global,
            min_ttl_s: d.min_ttl_s,
        }),
        phases_ms: r.phases_ms.iter().map(|(k, v)| (k.clone(), *v)).collect(),
        checks: r
            .checks
            .iter()
            .map(|c| pb::CheckResult {
                id: c.id.clone(),
                outcome: name(&c.outcome),
                observed: c.observed.clone(),
                expected: c.expected.clone(),
                duration_ms: c.duration_ms,
                severity: c.severity.as_ref().map(name),
                cause: c.cause.as_ref().map(name),
            })
            .collect(),
    }
}

pub fn region_from_pb(p: pb::RegionResult) -> Result<RegionResult, ConvertError> {
    let checks = p
        .checks
        .into_iter()
        .map(|c| {
            Ok(CheckResult {
                outcome: parse("outcome", &c.outcome)?,
                severity: c
                    .severity
                    .as_deref()
                    .map(|s| parse("severity", s))
                    .transpose()?,
                cause: c.cause.as_deref().map(|s| parse("cause", s)).transpose()?,
                id: c.id,
                observed: c.observed,
                expected: c.expected,
                duration_ms: c.duration_ms,
            })
        })
        .collect::<Result<Vec<_>, ConvertError>>()?;
    Ok(RegionResult {
        status: parse("status", &p.status)?,
        era: parse("era", &p.era)?,
        region: p.region,
        duration_ms: p.duration_ms,
        protected: p.protected,
        authenticated: p.authenticated,
        dns: p.dns.map(|d| DnsObservation {
            rcode: d.rcode,
            a: d.a,
            aaaa: d.aaaa,
            cname: d.cname,
            has_a: d.has_a,
            all_global: d.all_global,
            min_ttl_s: d.min_ttl_s,
        }),
        phases_ms: p.phases_ms.into_iter().collect::<BTreeMap<_, _>>(),
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Cause, Era, Outcome, RegionStatus, Severity};

    #[test]
    fn a_region_survives_the_wire() {
        let r = RegionResult {
            region: "eu".into(),
            status: RegionStatus::Partial,
            duration_ms: 42,
            era: Era::HttpSse,
            protected: true,
            authenticated: true,
            dns: Some(DnsObservation {
                rcode: "NOERROR".into(),
                a: vec!["198.51.100.1".into()],
                aaaa: vec![],
                cname: vec!["edge.example".into()],
                has_a: true,
                all_global: false,
                min_ttl_s: Some(30),
            }),
            phases_ms: [("dns".to_string(), 3u64)].into_iter().collect(),
            checks: vec![CheckResult {
                id: "redirect.none".into(),
                outcome: Outcome::Fail,
                observed: "308".into(),
                expected: "none".into(),
                duration_ms: 1,
                severity: Some(Severity::High),
                cause: Some(Cause::CrossHost),
            }],
        };
        assert_eq!(region_from_pb(region_to_pb(&r)).unwrap(), r);
    }

    #[test]
    fn unknown_names_are_refused() {
        let mut p = region_to_pb(&RegionResult::absent("x", RegionStatus::Timeout));
        p.status = "sideways".into();
        assert_eq!(
            region_from_pb(p).unwrap_err(),
            ConvertError {
                field: "status",
                value: "sideways".into()
            }
        );
    }
}
