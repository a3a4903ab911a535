//! The conversions both ways: every field survives a round trip, and a value from the wire
//! that no domain type holds is an error that names the field and the value.

use super::*;
use crate::catalog::CheckId;
use crate::model::{Cause, Era, Outcome, RegionStatus, Severity};

#[test]
fn a_region_survives_the_wire() {
    let r = RegionResult {
        region: "eu".into(),
        status: RegionStatus::Partial,
        agent: None,
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
            a_rcode: "NOERROR".into(),
            aaaa_rcode: "SERVFAIL".into(),
        }),
        tls: Some(crate::model::TlsObservation {
            leaf_sha256: "ab".repeat(32),
            chain_sha256: vec!["ab".repeat(32), "cd".repeat(32)],
            leaf_not_before: 1_790_000_000,
            leaf_not_after: 1_800_000_000,
            clock: 1_795_000_000,
            verdict: crate::model::TlsVerdict::NotYetValid,
            mixed: true,
            extra_roots: true,
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

/// Red team round 15, defect 3: a job whose token cannot go in a header is refused, naming
/// which token and the kind of character, never the token; the agent never runs it.
#[test]
fn a_job_whose_credential_cannot_be_sent_is_refused() {
    for (part, field, what) in [
        ("token", 0, "a newline"),
        ("other_audience", 1, "a control character"),
        ("missing_scope", 2, "a carriage return"),
    ] {
        let mut p = job_to_pb("j1", &full_job());
        let bad = match what {
            "a newline" => "SeCrEtPiece1234\nSECONDhalf",
            "a carriage return" => "SeCrEtPiece1234\rSECONDhalf",
            _ => "SeCrEtPiece1234\u{1}SECONDhalf",
        };
        *[
            &mut p.credential_secret,
            &mut p.other_audience_secret,
            &mut p.missing_scope_secret,
        ][field] = bad.to_string();
        let e = Job::try_from(p).unwrap_err();
        assert!(
            matches!(e, JobError::Credential { part: p, what: w } if p == part && w == what),
            "{e:?}"
        );
        let text = e.to_string();
        assert!(
            text.starts_with(&format!("the job's credential ({part}) contains {what}, which cannot be sent in an HTTP header")),
            "{text}"
        );
        assert!(
            !text.contains("SeCrEt") && !text.contains("SECOND"),
            "{text}"
        );
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
