//! `--timeout` and `--check-timeout`: their defaults, and the one rule between them (a
//! wait for one exchange shorter than the whole check), as the configuration applies it to
//! probe.check_timeout and a check's deadline.

use std::time::Duration;

use crate::args::Probe;

/// `--timeout` when not given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// `--check-timeout` when not given.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(5);

impl Probe {
    /// The overall deadline of one endpoint's check (`--timeout`).
    pub fn deadline(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT)
    }

    /// One exchange's wait (`--check-timeout`).
    pub fn exchange_timeout(&self) -> Duration {
        self.check_timeout.unwrap_or(DEFAULT_CHECK_TIMEOUT)
    }

    /// One exchange's wait against the whole check's deadline. A wait as long as the
    /// deadline or longer can never run out inside it: a target that never answers could not
    /// be told from the run's own deadline, and every slow answer would end `unknown`. Both
    /// given so: refused (`Err`), saying which to lower or raise. One of them a default: the
    /// default is not changed (a per-exchange wait shortened to fit the deadline would blame
    /// the target for this vantage's own budget); the deadline bounds the wait, and the note
    /// (`Ok(Some)`) says so. The same pair in the configuration (probe.check_timeout against
    /// a check's deadline) follows the same rule; an agent's job deadline, set by whoever
    /// asks, is never refused and bounds the agent's own wait the same way.
    pub fn wait_within_deadline(&self) -> Result<Option<String>, String> {
        let (t, c) = (self.deadline(), self.exchange_timeout());
        if c < t {
            return Ok(None);
        }
        let f = |d: Duration| humantime::format_duration(d).to_string();
        let why = "one exchange would wait as long as the whole check or longer, so a target that never answers could not be told from the run's own deadline (what the deadline ends is unknown, exit 4)";
        match (self.timeout, self.check_timeout) {
            (Some(_), Some(_)) => Err(format!(
                "--check-timeout {} is not shorter than --timeout {}: {why}; lower --check-timeout below {} or raise --timeout above {}",
                f(c), f(t), f(t), f(c)
            )),
            (None, _) => Ok(Some(format!(
                "note: --check-timeout {} is not shorter than --timeout ({} by default): {why}; give --timeout above {} to let the wait run out",
                f(c), f(t), f(c)
            ))),
            (Some(_), None) => Ok(Some(format!(
                "note: --timeout {} is not longer than --check-timeout ({} by default): {why}; give --check-timeout below {} to have a silent target judged",
                f(t), f(c), f(t)
            ))),
        }
    }
}
