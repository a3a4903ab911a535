//! Jittered exponential backoff for reconnecting: each wait is drawn from the upper half of
//! the current step, the step doubles up to a ceiling, and only a successful registration
//! resets it.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    step: Duration,
    seed: u64,
}

impl Backoff {
    pub fn new(min: Duration, max: Duration) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9)
            ^ u64::from(std::process::id()).rotate_left(32);
        Backoff {
            min,
            max: max.max(min),
            step: min,
            seed: seed | 1,
        }
    }

    /// The next wait: uniform in [step/2, step], then the step doubles (capped).
    pub fn next_wait(&mut self) -> Duration {
        // xorshift64*
        self.seed ^= self.seed >> 12;
        self.seed ^= self.seed << 25;
        self.seed ^= self.seed >> 27;
        let r = self.seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
        let frac = (r >> 11) as f64 / (1u64 << 53) as f64;
        let wait = self.step.mul_f64(0.5 + 0.5 * frac);
        self.step = (self.step * 2).min(self.max);
        wait
    }

    /// Back to the first step (after a registration that succeeded).
    pub fn reset(&mut self) {
        self.step = self.min;
    }

    /// The ceiling (used for slow retries after a permission error).
    pub fn max(&self) -> Duration {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_jittered_to_the_ceiling_and_resets() {
        let mut b = Backoff::new(Duration::from_millis(500), Duration::from_secs(30));
        let mut steps = Vec::new();
        for _ in 0..12 {
            steps.push(b.next_wait());
        }
        let mut step = Duration::from_millis(500);
        for w in &steps {
            assert!(
                *w >= step / 2 && *w <= step,
                "{w:?} outside [{:?}, {step:?}]",
                step / 2
            );
            step = (step * 2).min(Duration::from_secs(30));
        }
        assert!(steps[11] >= Duration::from_secs(15));
        assert!(steps.windows(2).any(|w| w[0] != w[1]), "jitter varies");
        b.reset();
        assert!(b.next_wait() <= Duration::from_millis(500));
    }

    #[tokio::test(start_paused = true)]
    async fn a_reconnect_loop_waits_the_backoff_in_paused_time() {
        let mut b = Backoff::new(Duration::from_millis(500), Duration::from_secs(30));
        let start = tokio::time::Instant::now();
        let mut total = Duration::ZERO;
        for _ in 0..8 {
            let w = b.next_wait();
            total += w;
            tokio::time::sleep(w).await;
        }
        // 8 attempts: at least half of 0.5+1+2+4+8+16+30+30 seconds, at most all of it.
        let elapsed = start.elapsed();
        // The timer wheel rounds each sleep up to the millisecond.
        assert!(
            elapsed >= total && elapsed <= total + Duration::from_millis(8),
            "{elapsed:?} vs {total:?}"
        );
        assert!(
            elapsed >= Duration::from_millis(45_750) && elapsed <= Duration::from_millis(91_500),
            "{elapsed:?}"
        );
    }
}
