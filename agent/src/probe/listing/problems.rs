//! A bounded list of problems: the first few in full, then a count. A list of 10,000 tools
//! with the same fault costs a few lines of evidence, not 10,000.

use crate::model::Severity;

/// How many problems are quoted in full.
const SHOWN: usize = 6;

/// Problems of one rule, each with the severity of the rule it breaks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Problems {
    shown: Vec<String>,
    total: usize,
    worst: Option<Severity>,
}

impl Problems {
    pub(crate) fn push(&mut self, severity: Severity, message: impl Into<String>) {
        self.total += 1;
        self.worst = self.worst.max(Some(severity));
        if self.shown.len() < SHOWN {
            self.shown.push(message.into());
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub(crate) fn worst(&self) -> Option<Severity> {
        self.worst
    }

    /// `a; b; c (and 4 more)`.
    pub(crate) fn summary(&self) -> String {
        let mut s = self.shown.join("; ");
        if self.total > self.shown.len() {
            s.push_str(&format!(" (and {} more)", self.total - self.shown.len()));
        }
        s
    }

    /// Merge another list in (its quoted problems first come first).
    pub(crate) fn extend(&mut self, other: &Problems) {
        for m in &other.shown {
            if self.shown.len() < SHOWN {
                self.shown.push(m.clone());
            }
        }
        self.total += other.total;
        self.worst = self.worst.max(other.worst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flood_of_problems_costs_a_few_lines() {
        let mut p = Problems::default();
        assert!(p.is_empty());
        for i in 0..10_000 {
            p.push(Severity::Low, format!("tool {i}"));
        }
        p.push(Severity::Medium, "worse");
        assert_eq!(p.worst(), Some(Severity::Medium));
        assert!(p.summary().ends_with("(and 9995 more)"), "{}", p.summary());
        assert!(p.summary().len() < 100);
    }
}
