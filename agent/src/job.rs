//! One job: what a vantage is asked to check, whoever asks (`vantage check`, the
//! coordinator's in-process vantage, or a remote agent). The probe options of a run are
//! built here, once, from the vantage's own settings and the job.

use std::time::Duration;

use ipnet::IpNet;

use crate::credentials::Credentials;
use crate::engine::ProbeOptions;
use crate::target::Target;

/// Which addresses a vantage treats as global, and which non-global ones it may still
/// connect to: the egress policy's exceptions (`crate::egress`), for every connection of
/// the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Extra prefixes treated as globally routable (laboratories).
    pub assume_global: Vec<IpNet>,
    /// Non-global prefixes the vantage may still connect to.
    pub allow_non_global: Vec<IpNet>,
}

/// One check of one target by one vantage.
#[derive(Debug, Clone)]
pub struct Job {
    pub target: Target,
    /// The whole run must finish within this, from the moment the vantage starts it.
    pub deadline: Duration,
    /// The endpoint must be protected: an unauthenticated answer is a finding.
    pub expect_auth: bool,
    pub policy: Policy,
    /// The main token and the negative authorization tokens (other audience, missing scope).
    pub credentials: Credentials,
}

/// The shortest deadline a job runs with (a zero deadline would skip everything unseen).
pub const MIN_DEADLINE: Duration = Duration::from_millis(1);

impl Job {
    /// A job with the default deadline, no policy exceptions and no credentials.
    pub fn new(target: Target) -> Self {
        Job {
            target,
            deadline: ProbeOptions::default().deadline,
            expect_auth: false,
            policy: Policy::default(),
            credentials: Credentials::default(),
        }
    }

    /// The same job with `spent` already gone from its deadline (time queued on an agent).
    pub fn after(&self, spent: Duration) -> Job {
        Job {
            deadline: self.deadline.saturating_sub(spent),
            ..self.clone()
        }
    }

    /// The options of this job on a vantage whose own settings are `base` (its region,
    /// per-exchange timeout, trust anchors, resolver, limits, and whether the target the
    /// operator named is allowed whatever its address). The per-exchange timeout stays the
    /// vantage's: clamped to the deadline, it would fire with the deadline and read as the
    /// target's silence (the deadline ends the run instead, and what it cut is `unknown`).
    pub fn options(&self, base: &ProbeOptions) -> ProbeOptions {
        let deadline = self.deadline.max(MIN_DEADLINE);
        ProbeOptions {
            deadline,
            assume_global: self.policy.assume_global.clone(),
            allow_non_global: self.policy.allow_non_global.clone(),
            credentials: self.credentials.clone(),
            expect_auth: self.expect_auth,
            ..base.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        let mut j = Job::new(Target::parse("https://mcp.example.com/mcp").unwrap());
        j.deadline = Duration::from_secs(2);
        j.expect_auth = true;
        j.policy.assume_global = vec!["198.51.100.0/24".parse().unwrap()];
        j.policy.allow_non_global = vec!["100.64.0.0/10".parse().unwrap()];
        j.credentials.token = Some("t".to_string().into());
        j
    }

    #[test]
    fn options_take_the_job_and_keep_the_vantage() {
        let base = ProbeOptions {
            region: "eu".into(),
            check_timeout: Duration::from_secs(5),
            allow_named_target: false,
            assume_global: vec!["203.0.113.0/24".parse().unwrap()],
            ..ProbeOptions::default()
        };
        let o = job().options(&base);
        assert_eq!(o.region, "eu");
        assert!(!o.allow_named_target);
        assert_eq!(o.deadline, Duration::from_secs(2));
        // The per-exchange timeout is the vantage's, never clamped to the deadline (a
        // clamped timeout fires with the deadline and blames the target).
        assert_eq!(o.check_timeout, Duration::from_secs(5));
        assert!(o.expect_auth);
        // The job's policy replaces the base's: one source of prefixes per run.
        assert_eq!(o.assume_global, job().policy.assume_global);
        assert_eq!(o.allow_non_global, job().policy.allow_non_global);
        assert!(o.credentials.token.is_some());
        assert!(o.credentials.other_audience.is_none());
    }

    #[test]
    fn time_spent_queued_comes_off_the_deadline_and_never_below_the_minimum() {
        let j = job();
        assert_eq!(
            j.after(Duration::from_millis(500)).deadline,
            Duration::from_millis(1500)
        );
        let late = j.after(Duration::from_secs(10));
        assert_eq!(late.deadline, Duration::ZERO);
        let o = late.options(&ProbeOptions::default());
        assert_eq!(
            (o.deadline, o.check_timeout),
            (MIN_DEADLINE, ProbeOptions::default().check_timeout)
        );
    }
}
