//! What checks the deadline cut say: the time left, and the time the job waited for a slot
//! on a busy agent when that is a notable share of its deadline (red team round 12, N2).

use std::time::Duration;

/// Why checks the deadline cut were not run. Durations in seconds to the millisecond. A
/// notable wait for a slot (a tenth of the job's deadline or more) is named: the vantage's
/// own capacity, not a short deadline or a slow target.
pub(super) fn deadline_note(left: Duration, queued: Duration) -> String {
    let total = left + queued;
    if !queued.is_zero() && queued.as_nanos() * 10 >= total.as_nanos() {
        format!(
            "not run: the overall deadline ran out first ({} s were left of the job's {} s after it waited {} s for a slot behind this agent's --concurrency, every slot busy: raise the agent's --concurrency or add agents to the region)",
            secs(left),
            secs(total),
            secs(queued)
        )
    } else {
        format!(
            "not run: the overall deadline ({} s) ran out first",
            secs(left)
        )
    }
}

/// Seconds to the millisecond, without trailing zeros (`2.149`, `5`).
fn secs(d: Duration) -> String {
    let s = format!("{:.3}", d.as_secs_f64());
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The red team's job: 5 s, of which 2.850741095 s were spent queued behind a busy
    /// agent's --concurrency. The note named neither the wait nor the agent, in 9 decimals.
    #[test]
    fn a_notable_wait_for_a_slot_is_named_and_durations_are_in_milliseconds() {
        let left = Duration::from_nanos(2_149_258_905);
        let queued = Duration::from_nanos(2_850_741_095);
        let note = deadline_note(left, queued);
        assert_eq!(
            note,
            "not run: the overall deadline ran out first (2.149 s were left of the job's 5 s after it waited 2.851 s for a slot behind this agent's --concurrency, every slot busy: raise the agent's --concurrency or add agents to the region)"
        );
        // No wait, or a wait under a tenth of the deadline: the deadline alone, to the ms.
        assert_eq!(
            deadline_note(left, Duration::ZERO),
            "not run: the overall deadline (2.149 s) ran out first"
        );
        assert_eq!(
            deadline_note(Duration::from_millis(9_500), Duration::from_millis(400)),
            "not run: the overall deadline (9.5 s) ran out first"
        );
        assert_eq!(
            deadline_note(Duration::from_secs(30), Duration::ZERO),
            "not run: the overall deadline (30 s) ran out first"
        );
    }
}
