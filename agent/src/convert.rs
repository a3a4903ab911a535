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
use crate::model::{CheckResult, DnsObservation, RegionResult, TlsObservation};
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
    /// A token of the job cannot be sent in an HTTP header: every request made with it
    /// would fail on the agent, which is no observation of the target. Names the token and
    /// the kind of character, never the token.
    #[error("the job's credential ({part}) contains {what}, which cannot be sent in an HTTP header (Authorization: Bearer …); fix the token of the coordinator's [[credentials]] entry (one line, no control characters)")]
    Credential {
        part: &'static str,
        what: &'static str,
    },
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

/// The job's tokens, refused when one cannot be sent in a header.
fn credentials(p: &pb::Job) -> Result<Credentials, JobError> {
    let c = Credentials {
        token: secret(&p.credential_secret),
        other_audience: secret(&p.other_audience_secret),
        missing_scope: secret(&p.missing_scope_secret),
    };
    match c.unusable() {
        Some((part, what)) => Err(JobError::Credential { part, what }),
        None => Ok(c),
    }
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
            credentials: credentials(&p)?,
        })
    }
}

/// The wire form of `job`, under the coordinator's `job_id`.
pub fn job_to_pb(job_id: &str, job: &Job) -> pb::Job {
    pb::Job {
        job_id: job_id.to_string(),
        target: job.target.as_str().to_string(),
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
            a_rcode: d.a_rcode.clone(),
            aaaa_rcode: d.aaaa_rcode.clone(),
        }),
        tls: r.tls.as_ref().map(|t| pb::TlsObservation {
            leaf_sha256: t.leaf_sha256.clone(),
            chain_sha256: t.chain_sha256.clone(),
            leaf_not_before: t.leaf_not_before,
            leaf_not_after: t.leaf_not_after,
            clock: t.clock,
            verdict: name(&t.verdict),
            mixed: t.mixed,
            extra_roots: t.extra_roots,
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
        // The coordinator names the agent from its session, not from what the agent says.
        agent: None,
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
            a_rcode: d.a_rcode,
            aaaa_rcode: d.aaaa_rcode,
        }),
        tls: p
            .tls
            .map(|t| {
                Ok::<_, ConvertError>(TlsObservation {
                    verdict: parse("tls verdict", &t.verdict)?,
                    leaf_sha256: t.leaf_sha256,
                    chain_sha256: t.chain_sha256,
                    leaf_not_before: t.leaf_not_before,
                    leaf_not_after: t.leaf_not_after,
                    clock: t.clock,
                    mixed: t.mixed,
                    extra_roots: t.extra_roots,
                })
            })
            .transpose()?,
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
#[path = "convert_tests.rs"]
mod tests;
