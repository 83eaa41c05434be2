//! Time management per turn: how long to think for the whole turn (both moves are chosen in one search,
//! and in Double Move Chess the clock runs between the halves; the increment comes once per turn).

use std::time::Duration;

#[derive(Clone, Copy, Debug, Default)]
pub struct Clock {
    pub time: Option<Duration>,
    pub increment: Duration,
    pub moves_to_go: Option<u32>,
}

/// (soft, hard) limits: do not start a new iteration after `soft`; abort at `hard`.
pub fn allocate(clock: &Clock, overhead: Duration) -> (Duration, Duration) {
    let Some(time) = clock.time else {
        return (Duration::MAX, Duration::MAX);
    };
    let left = time.saturating_sub(overhead);
    // Sudden death plans for 40 more turns: spending left/40 + 3/4 of the increment per turn keeps
    // a reserve of about ten increments, so a busy machine's scheduling delays do not flag us.
    let turns = clock.moves_to_go.unwrap_or(40).clamp(1, 60);
    let base = left / turns + clock.increment * 3 / 4;
    let soft = base.min(left / 5);
    let hard = (base * 3).min(left / 4).max(soft);
    (soft, hard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_plans_past_the_clock() {
        for ms in [1u64, 50, 100, 1000, 10_000, 600_000] {
            for inc in [0u64, 10, 100, 2000] {
                let c = Clock {
                    time: Some(Duration::from_millis(ms)),
                    increment: Duration::from_millis(inc),
                    moves_to_go: None,
                };
                let (soft, hard) = allocate(&c, Duration::from_millis(10));
                assert!(soft <= hard);
                assert!(
                    hard <= Duration::from_millis(ms) / 4 + Duration::from_millis(1),
                    "{ms}+{inc}: {hard:?}"
                );
            }
        }
    }

    #[test]
    fn infinite_without_clock() {
        let (s, h) = allocate(&Clock::default(), Duration::ZERO);
        assert_eq!((s, h), (Duration::MAX, Duration::MAX));
    }
}
