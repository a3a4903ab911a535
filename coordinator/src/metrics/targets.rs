//! The per-target series, written only for scheduled targets: what a finished report sets,
//! what a target that leaves the schedule removes, and the schedule's own series.

use std::collections::BTreeMap;

use prometheus::{GaugeVec, Opts};
use vantage_agent::model::Outcome;

use super::*;
use crate::report::{Report, Scope};

impl Metrics {
    fn vec(&self, family: &'static str) -> &GaugeVec {
        match family {
            CHECK_SUCCESS => &self.check_success,
            FINDING_ACTIVE => &self.finding_active,
            REGION_REACHABLE => &self.region_reachable,
            DNS_ALL_GLOBAL => &self.dns_all_global,
            DNS_HAS_A => &self.dns_has_a,
            _ => &self.probe_duration,
        }
    }

    fn is_scheduled(&self, target: &str) -> bool {
        self.scheduled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(target)
    }

    /// Record a finished report of a scheduled target (others have no per-target series).
    pub fn observe(&self, report: &Report) {
        let target = report.target.as_str();
        if !self.is_scheduled(target) {
            return;
        }
        let mut now: Vec<(&'static str, Vec<String>, f64)> = Vec::new();
        for r in &report.regions {
            for c in &r.checks {
                let v = match c.outcome {
                    Outcome::Pass => 1.0,
                    Outcome::Fail | Outcome::Warn => 0.0,
                    Outcome::Skip | Outcome::Error | Outcome::Unknown => continue,
                };
                now.push((
                    CHECK_SUCCESS,
                    vec![target.into(), r.region.clone(), c.id.to_string()],
                    v,
                ));
                if c.id == vantage_agent::catalog::CheckId::NetConnect {
                    now.push((REGION_REACHABLE, vec![target.into(), r.region.clone()], v));
                }
            }
            if let Some(d) = &r.dns {
                now.push((
                    DNS_ALL_GLOBAL,
                    vec![target.into(), r.region.clone()],
                    f64::from(u8::from(d.all_global)),
                ));
                now.push((
                    DNS_HAS_A,
                    vec![target.into(), r.region.clone()],
                    f64::from(u8::from(d.has_a)),
                ));
            }
            for (phase, ms) in &r.phases_ms {
                now.push((
                    PROBE_DURATION,
                    vec![target.into(), r.region.clone(), phase.clone()],
                    *ms as f64 / 1000.0,
                ));
            }
        }
        for f in &report.findings {
            let scope = match f.scope {
                Scope::Global => "global",
                Scope::Regional => "regional",
            };
            now.push((
                FINDING_ACTIVE,
                vec![
                    target.into(),
                    f.id.to_string(),
                    f.severity.as_str().into(),
                    scope.into(),
                    if f.is_accepted() { "true" } else { "false" }.into(),
                ],
                1.0,
            ));
        }
        let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
        let previous = written.remove(target).unwrap_or_default();
        for (family, labels) in &previous {
            if !now.iter().any(|(f, l, _)| f == family && l == labels) {
                let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
                let _ = self.vec(family).remove_label_values(&refs);
            }
        }
        for (family, labels, v) in &now {
            let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
            self.vec(family).with_label_values(&refs).set(*v);
        }
        written.insert(
            target.to_string(),
            now.into_iter().map(|(f, l, _)| (f, l)).collect(),
        );
        for d in DECISIONS {
            self.decision
                .with_label_values(&[target, d.as_str()])
                .set(f64::from(u8::from(d == report.decision)));
        }
        self.runs_total
            .with_label_values(&[target, report.decision.as_str()])
            .inc();
        let now_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        self.last_run.with_label_values(&[target]).set(now_s);
    }

    /// Remove every series of a target that left the configuration.
    pub fn forget_target(&self, target: &str) {
        let mut written = self.written.lock().unwrap_or_else(|p| p.into_inner());
        for (family, labels) in written.remove(target).unwrap_or_default() {
            let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
            let _ = self.vec(family).remove_label_values(&refs);
        }
        for d in DECISIONS {
            let _ = self.decision.remove_label_values(&[target, d.as_str()]);
            let _ = self.runs_total.remove_label_values(&[target, d.as_str()]);
        }
        let _ = self.last_run.remove_label_values(&[target]);
        let _ = self.check_interval.remove_label_values(&[target]);
        let _ = self.scheduled_skipped.remove_label_values(&[target]);
    }

    /// Export the scheduled targets: their interval and `vantage_target_info` with their labels,
    /// and their counters at 0 (a counter with no sample cannot be rated or alerted on).
    pub fn set_schedule(&self, checks: &[(String, f64, BTreeMap<String, String>)]) {
        *self.scheduled.lock().unwrap_or_else(|p| p.into_inner()) =
            checks.iter().map(|(t, _, _)| t.clone()).collect();
        for (target, _, _) in checks {
            self.scheduled_skipped
                .with_label_values(&[target])
                .inc_by(0);
            for d in DECISIONS {
                self.runs_total
                    .with_label_values(&[target, d.as_str()])
                    .inc_by(0);
            }
        }
        let keys: std::collections::BTreeSet<&String> =
            checks.iter().flat_map(|(_, _, l)| l.keys()).collect();
        let mut names: Vec<&str> = vec!["target"];
        names.extend(keys.iter().map(|k| k.as_str()));
        let mut slot = self.target_info.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = slot.take() {
            let _ = self.registry.unregister(Box::new(old));
        }
        if let Ok(info) = GaugeVec::new(
            Opts::new(
                TARGET_INFO,
                "Scheduled targets and their labels (always 1).",
            ),
            &names,
        ) {
            if self.registry.register(Box::new(info.clone())).is_ok() {
                for (target, _, labels) in checks {
                    let values: Vec<&str> = names
                        .iter()
                        .map(|n| {
                            if *n == "target" {
                                target.as_str()
                            } else {
                                labels.get(*n).map(String::as_str).unwrap_or("")
                            }
                        })
                        .collect();
                    info.with_label_values(&values).set(1.0);
                }
                *slot = Some(info);
            }
        }
        for (target, interval, _) in checks {
            self.check_interval
                .with_label_values(&[target])
                .set(*interval);
        }
    }

    pub fn scheduled_skipped(&self, target: &str) {
        self.scheduled_skipped.with_label_values(&[target]).inc();
    }
}
