//! Where generated gRPC types meet the domain types: jobs and region results to and from
//! `vantage.v1`. Enumerations and check ids travel by their report names (`pass`, `high`,
//! `cross-host`, `transport.get`); a name or prefix that does not parse is an error, never
//! dropped.

use std::collections::BTreeMap;
use std::time::Duration;

use ipnet::IpNet;
use secrecy::{ExposeSecret, SecretString};
use serde::de::DeserializeOwned;
use serde::Serialize;
use vantage_proto::v1 as pb;

use crate::credentials::Credentials;
use crate::job::{Job, Policy};
use crate::model::{CheckResult, DnsObservation, RegionResult};
use crate::stack::StackSighting;
use crate::surface::{ListSurface, ListingBounds, Surface, SurfaceItem};
use crate::target::{Target, TargetError};

/// A message from the other side that does not fit the domain.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: unknown value `{value}`")]
pub struct ConvertError {
    pub field: &'static str,
    pub value: String,
}

/// Why a job from the coordinator cannot run. The agent refuses it and says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    #[error("target `{target}`: {source}")]
    Target {
        target: String,
        #[source]
        source: TargetError,
    },
    #[error("{field}: `{value}` is not a CIDR prefix (e.g. 198.51.100.0/24); fix probe.{field} in the coordinator's configuration")]
    Prefix { field: &'static str, value: String },
    /// The job's policy is wider than the agent's own ceiling.
    #[error(transparent)]
    Wider(#[from] crate::egress::Wider),
}

fn prefixes(field: &'static str, values: &[String]) -> Result<Vec<IpNet>, JobError> {
    values
        .iter()
        .map(|v| {
            v.parse::<IpNet>().map_err(|_| JobError::Prefix {
                field,
                value: v.clone(),
            })
        })
        .collect()
}

fn secret(value: &str) -> Option<SecretString> {
    (!value.is_empty()).then(|| SecretString::from(value.to_string()))
}

fn expose(value: &Option<SecretString>) -> String {
    value
        .as_ref()
        .map(|s| s.expose_secret().to_string())
        .unwrap_or_default()
}

impl TryFrom<pb::Job> for Job {
    type Error = JobError;

    fn try_from(p: pb::Job) -> Result<Self, JobError> {
        let target = Target::parse(&p.target).map_err(|source| JobError::Target {
            target: crate::target::redacted(&p.target),
            source,
        })?;
        Ok(Job {
            target,
            deadline: Duration::from_millis(p.deadline_ms),
            expect_auth: p.expect_auth,
            policy: Policy {
                assume_global: prefixes("assume_global", &p.assume_global)?,
                allow_non_global: prefixes("allow_non_global", &p.allow_non_global)?,
            },
            credentials: Credentials {
                token: secret(&p.credential_secret),
                other_audience: secret(&p.other_audience_secret),
                missing_scope: secret(&p.missing_scope_secret),
            },
        })
    }
}

/// The wire form of `job`, under the coordinator's `job_id`.
pub fn job_to_pb(job_id: &str, job: &Job) -> pb::Job {
    pb::Job {
        job_id: job_id.to_string(),
        target: job.target.to_string(),
        deadline_ms: job.deadline.as_millis() as u64,
        expect_auth: job.expect_auth,
        assume_global: job
            .policy
            .assume_global
            .iter()
            .map(ToString::to_string)
            .collect(),
        allow_non_global: job
            .policy
            .allow_non_global
            .iter()
            .map(ToString::to_string)
            .collect(),
        credential_secret: expose(&job.credentials.token),
        other_audience_secret: expose(&job.credentials.other_audience),
        missing_scope_secret: expose(&job.credentials.missing_scope),
        ..Default::default()
    }
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
                id: c.id.as_str().to_string(),
                outcome: name(&c.outcome),
                observed: c.observed.clone(),
                expected: c.expected.clone(),
                duration_ms: c.duration_ms,
                severity: c.severity.as_ref().map(name),
                cause: c.cause.as_ref().map(name),
            })
            .collect(),
        surface: r.surface.as_ref().map(surface_to_pb),
        stacks: r
            .stacks
            .iter()
            .map(|s| pb::StackSighting {
                check: s.check.as_str().to_string(),
                stack: name(&s.stack),
                evidence: s.evidence.clone(),
            })
            .collect(),
    }
}

fn surface_to_pb(s: &Surface) -> pb::Surface {
    pb::Surface {
        era: name(&s.era),
        bounds: Some(pb::ListingBounds {
            max_pages: s.bounds.max_pages,
            max_page_bytes: s.bounds.max_page_bytes,
            max_total_bytes: s.bounds.max_total_bytes,
            max_items_reported: s.bounds.max_items_reported,
        }),
        lists: s
            .lists
            .iter()
            .map(|l| pb::ListSurface {
                kind: name(&l.kind),
                digest: l.digest.clone(),
                set_digest: l.set_digest.clone(),
                count: l.count,
                pages: l.pages,
                bytes: l.bytes,
                complete: l.complete,
                stopped: l.stopped.clone(),
                items: l
                    .items
                    .iter()
                    .map(|i| pb::SurfaceItem {
                        name: i.name.clone(),
                        digest: i.digest.clone(),
                    })
                    .collect(),
                items_truncated: l.items_truncated,
            })
            .collect(),
    }
}

fn surface_from_pb(p: pb::Surface) -> Result<Surface, ConvertError> {
    let b = p.bounds.unwrap_or_default();
    Ok(Surface {
        era: parse("surface era", &p.era)?,
        bounds: ListingBounds {
            max_pages: b.max_pages,
            max_page_bytes: b.max_page_bytes,
            max_total_bytes: b.max_total_bytes,
            max_items_reported: b.max_items_reported,
        },
        lists: p
            .lists
            .into_iter()
            .map(|l| {
                Ok(ListSurface {
                    kind: parse("list kind", &l.kind)?,
                    digest: l.digest,
                    set_digest: l.set_digest,
                    count: l.count,
                    pages: l.pages,
                    bytes: l.bytes,
                    complete: l.complete,
                    stopped: l.stopped,
                    items: l
                        .items
                        .into_iter()
                        .map(|i| SurfaceItem {
                            name: i.name,
                            digest: i.digest,
                        })
                        .collect(),
                    items_truncated: l.items_truncated,
                })
            })
            .collect::<Result<Vec<_>, ConvertError>>()?,
    })
}

pub fn region_from_pb(p: pb::RegionResult) -> Result<RegionResult, ConvertError> {
    let checks = p
        .checks
        .into_iter()
        .map(|c| {
            Ok(CheckResult {
                id: c.id.parse().map_err(|_| ConvertError {
                    field: "check id",
                    value: c.id.clone(),
                })?,
                outcome: parse("outcome", &c.outcome)?,
                severity: c
                    .severity
                    .as_deref()
                    .map(|s| parse("severity", s))
                    .transpose()?,
                cause: c.cause.as_deref().map(|s| parse("cause", s)).transpose()?,
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
        surface: p.surface.map(surface_from_pb).transpose()?,
        stacks: p
            .stacks
            .into_iter()
            .map(|s| {
                Ok(StackSighting {
                    check: s.check.parse().map_err(|_| ConvertError {
                        field: "stack check id",
                        value: s.check.clone(),
                    })?,
                    stack: parse("stack", &s.stack)?,
                    evidence: s.evidence,
                })
            })
            .collect::<Result<Vec<_>, ConvertError>>()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CheckId;
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
                id: CheckId::RedirectNone,
                outcome: Outcome::Fail,
                observed: "308".into(),
                expected: "none".into(),
                duration_ms: 1,
                severity: Some(Severity::High),
                cause: Some(Cause::CrossHost),
            }],
            surface: Some(Surface {
                era: Era::Legacy,
                bounds: ListingBounds::default(),
                lists: vec![ListSurface {
                    kind: crate::surface::ListKind::ResourceTemplates,
                    digest: "d".repeat(64),
                    set_digest: "e".repeat(64),
                    count: 2,
                    pages: 1,
                    bytes: 120,
                    complete: false,
                    stopped: Some("stopped at the page cap (100 pages)".into()),
                    items: vec![SurfaceItem {
                        name: "file:///{path}".into(),
                        digest: "0123456789abcdef".into(),
                    }],
                    items_truncated: true,
                }],
            }),
            stacks: vec![StackSighting {
                check: CheckId::MethodUnknown,
                stack: crate::stack::Stack::Nginx,
                evidence: "Server: nginx".into(),
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

    #[test]
    fn an_unknown_check_id_is_refused() {
        let mut p = region_to_pb(&RegionResult::absent("x", RegionStatus::Complete));
        p.checks.push(pb::CheckResult {
            id: "transport.gett".into(),
            outcome: "pass".into(),
            ..Default::default()
        });
        assert_eq!(
            region_from_pb(p).unwrap_err(),
            ConvertError {
                field: "check id",
                value: "transport.gett".into()
            }
        );
    }

    fn full_job() -> Job {
        Job {
            target: Target::parse("https://mcp.example.com/mcp").unwrap(),
            deadline: Duration::from_millis(2500),
            expect_auth: true,
            policy: Policy {
                assume_global: vec!["198.51.100.0/24".parse().unwrap()],
                allow_non_global: vec![
                    "100.64.0.0/10".parse().unwrap(),
                    "2001:db8:a::/64".parse().unwrap(),
                ],
            },
            credentials: Credentials {
                token: Some("main-secret".to_string().into()),
                other_audience: Some("other-secret".to_string().into()),
                missing_scope: Some("scope-secret".to_string().into()),
            },
        }
    }

    #[test]
    fn a_job_survives_the_wire_with_every_credential() {
        let p = job_to_pb("j1", &full_job());
        assert_eq!(p.job_id, "j1");
        assert_eq!(
            (
                p.credential_secret.as_str(),
                p.other_audience_secret.as_str(),
                p.missing_scope_secret.as_str()
            ),
            ("main-secret", "other-secret", "scope-secret")
        );
        let back = Job::try_from(p).unwrap();
        let want = full_job();
        assert_eq!(back.target, want.target);
        assert_eq!(back.deadline, want.deadline);
        assert!(back.expect_auth);
        assert_eq!(back.policy, want.policy);
        let shown = |s: &Option<SecretString>| s.as_ref().map(|s| s.expose_secret().to_string());
        assert_eq!(shown(&back.credentials.token), Some("main-secret".into()));
        assert_eq!(
            shown(&back.credentials.other_audience),
            Some("other-secret".into())
        );
        assert_eq!(
            shown(&back.credentials.missing_scope),
            Some("scope-secret".into())
        );
        // Absent secrets travel as empty strings and come back as none.
        let mut bare = full_job();
        bare.credentials = Credentials::default();
        let back = Job::try_from(job_to_pb("j2", &bare)).unwrap();
        assert!(
            back.credentials.token.is_none()
                && back.credentials.other_audience.is_none()
                && back.credentials.missing_scope.is_none()
        );
    }

    #[test]
    fn a_job_with_a_bad_prefix_or_target_is_an_error_that_names_it() {
        let mut p = job_to_pb("j", &full_job());
        p.allow_non_global.push("198.51.100.0/33".into());
        let err = Job::try_from(p).unwrap_err();
        assert_eq!(
            err,
            JobError::Prefix {
                field: "allow_non_global",
                value: "198.51.100.0/33".into()
            }
        );
        assert!(err.to_string().contains("probe.allow_non_global"), "{err}");
        let mut p = job_to_pb("j", &full_job());
        p.assume_global = vec!["lab".into()];
        assert!(matches!(
            Job::try_from(p),
            Err(JobError::Prefix {
                field: "assume_global",
                ..
            })
        ));
        let mut p = job_to_pb("j", &full_job());
        p.target = "ftp://mcp.example.com/".into();
        assert!(matches!(
            Job::try_from(p),
            Err(JobError::Target {
                source: TargetError::Scheme(_),
                ..
            })
        ));
    }
}
