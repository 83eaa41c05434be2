//! A game's chess clock on the wall clock (epoch milliseconds, so that any node and any restart read
//! the same times): time left per side, which side runs since when, the increment once per turn, the
//! flag time, pause and resume. The game core decides *when* a side's clock runs; this type only
//! keeps the arithmetic.

use rules::Color;
use serde::{Deserialize, Serialize};

/// The longest base time and increment a game may have.
pub const MAX_LIMIT_MS: i64 = 3 * 3600 * 1000;
pub const MAX_INCREMENT_MS: i64 = 180 * 1000;

/// A clock that runs for one side since an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Running {
    /// 0 white, 1 black.
    pub side: u8,
    /// Epoch ms since which `side` is charged.
    pub since: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clock {
    pub limit_ms: i64,
    pub increment_ms: i64,
    /// Time left per side (white, black) as of the running side's `since`.
    pub remaining_ms: [i64; 2],
    pub running: Option<Running>,
}

/// Why a time control was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeControlError(pub String);

impl Clock {
    /// A clock for `limit` seconds plus `increment` seconds per turn, validated: both finite and not
    /// negative, limit + increment > 0, limit at most 3 hours, increment at most 180 s. With no base
    /// time (0+inc) each side starts with one increment, so that a first clocked turn is possible.
    pub fn from_seconds(limit: f64, increment: f64) -> Result<Clock, TimeControlError> {
        let err = |m: &str| Err(TimeControlError(m.to_string()));
        if !limit.is_finite() || !increment.is_finite() {
            return err("clock: limit and increment must be numbers of seconds");
        }
        if limit < 0.0 || increment < 0.0 {
            return err("clock: limit and increment may not be negative");
        }
        let limit_ms = (limit * 1000.0).round() as i64;
        let increment_ms = (increment * 1000.0).round() as i64;
        if limit_ms > MAX_LIMIT_MS {
            return err("clock: the limit may be at most 3 hours (10800 seconds)");
        }
        if increment_ms > MAX_INCREMENT_MS {
            return err("clock: the increment may be at most 180 seconds");
        }
        if limit_ms + increment_ms < 1000 {
            return err(
                "clock: limit + increment must be at least one second (for no clock, omit it)",
            );
        }
        Ok(Clock::new(limit_ms, increment_ms))
    }

    pub fn new(limit_ms: i64, increment_ms: i64) -> Clock {
        let start = if limit_ms > 0 { limit_ms } else { increment_ms };
        Clock {
            limit_ms,
            increment_ms,
            remaining_ms: [start, start],
            running: None,
        }
    }

    /// The side whose clock runs.
    pub fn running_side(&self) -> Option<Color> {
        self.running.map(|r| side_color(r.side))
    }

    /// Time left per side at `now` (the running side charged up to `now`; may be negative).
    pub fn remaining(&self, now: i64) -> [i64; 2] {
        let mut r = self.remaining_ms;
        if let Some(run) = self.running {
            r[run.side as usize] -= (now - run.since).max(0);
        }
        r
    }

    /// Epoch ms at which the running side's time is up.
    pub fn flag_at(&self) -> Option<i64> {
        self.running
            .map(|r| r.since + self.remaining_ms[r.side as usize])
    }

    /// The side whose time is up at `now`, if any.
    pub fn flagged(&self, now: i64) -> Option<Color> {
        let c = self.running_side()?;
        (self.remaining(now)[c.index()] <= 0).then_some(c)
    }

    /// Charges the running side up to `now` and keeps it running from there.
    pub fn charge(&mut self, now: i64) {
        if let Some(run) = self.running.as_mut() {
            self.remaining_ms[run.side as usize] -= (now - run.since).max(0);
            run.since = now.max(run.since);
        }
    }

    /// Makes `side` the running clock from `now` (None: no clock runs), charging the one that ran.
    pub fn run(&mut self, side: Option<Color>, now: i64) {
        self.charge(now);
        self.running = side.map(|c| Running {
            side: c.index() as u8,
            since: now,
        });
    }

    /// `by` finished a turn at `now`: its running time is charged, the increment added once (only
    /// if its clock was running: a side's first, clockless turn earns none), and `next` runs.
    pub fn end_turn(&mut self, by: Color, next: Option<Color>, now: i64) {
        let was_running = self.running_side() == Some(by);
        self.charge(now);
        if was_running {
            self.remaining_ms[by.index()] += self.increment_ms;
        }
        self.run(next, now);
    }

    /// Stops the clock at `now` (charged), returning the side that was running.
    pub fn pause(&mut self, now: i64) -> Option<Color> {
        let c = self.running_side();
        self.run(None, now);
        c
    }

    /// Starts `side`'s clock again from `now` (after [`Clock::pause`]).
    pub fn resume(&mut self, side: Color, now: i64) {
        self.run(Some(side), now);
    }

    /// The service was down from `down_since` until `now`: the running side is charged for the
    /// time it used while the service was up (up to `down_since`), not for the downtime, and runs
    /// again from `now`.
    pub fn skip_downtime(&mut self, down_since: i64, now: i64) {
        if let Some(run) = self.running.as_mut() {
            let used_until = down_since.clamp(run.since, now.max(run.since));
            self.remaining_ms[run.side as usize] -= used_until - run.since;
            run.since = now.max(run.since);
        }
    }

    /// Sets the side that ran out to exactly zero.
    pub fn zero(&mut self, side: Color) {
        self.remaining_ms[side.index()] = 0;
        if self.running_side() == Some(side) {
            self.running = None;
        }
    }
}

fn side_color(i: u8) -> Color {
    if i == 0 {
        Color::White
    } else {
        Color::Black
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rules::Color::{Black, White};

    #[test]
    fn validation_refuses_nonsense_controls() {
        assert!(Clock::from_seconds(1e-9, 0.0).is_err());
        assert!(Clock::from_seconds(0.0, 0.0).is_err());
        assert!(Clock::from_seconds(-5.0, 2.0).is_err());
        assert!(Clock::from_seconds(f64::NAN, 2.0).is_err());
        assert!(Clock::from_seconds(f64::INFINITY, 0.0).is_err());
        assert!(Clock::from_seconds(10_801.0, 0.0).is_err());
        assert!(Clock::from_seconds(60.0, 181.0).is_err());
        let c = Clock::from_seconds(10_800.0, 180.0).unwrap();
        assert_eq!((c.limit_ms, c.increment_ms), (10_800_000, 180_000));
        let c = Clock::from_seconds(0.0, 2.0).unwrap();
        assert_eq!(
            c.remaining_ms,
            [2000, 2000],
            "0+2 starts with one increment"
        );
        let c = Clock::from_seconds(0.5, 0.5).unwrap();
        assert_eq!(c.remaining_ms, [500, 500]);
    }

    #[test]
    fn charge_and_increment_once_per_turn() {
        let mut c = Clock::new(60_000, 2_000);
        c.run(Some(White), 1_000);
        // Half way through a two-move turn: charged, still running, no increment.
        c.charge(4_000);
        assert_eq!(c.remaining_ms, [57_000, 60_000]);
        assert_eq!(c.running_side(), Some(White));
        assert_eq!(c.remaining(5_000), [56_000, 60_000]);
        // The turn passes: charged up to now, one increment, Black runs.
        c.end_turn(White, Some(Black), 6_000);
        assert_eq!(c.remaining_ms, [57_000, 60_000]);
        assert_eq!(c.running_side(), Some(Black));
        assert_eq!(c.flag_at(), Some(66_000));
        // A turn whose clock did not run (a side's first turn) earns no increment.
        let mut d = Clock::new(60_000, 2_000);
        d.end_turn(White, Some(Black), 10_000);
        assert_eq!(d.remaining_ms, [60_000, 60_000]);
    }

    #[test]
    fn flag_time_and_flagged_side() {
        let mut c = Clock::new(3_000, 0);
        assert_eq!(c.flag_at(), None);
        assert_eq!(c.flagged(1_000_000), None, "no running clock, no flag");
        c.run(Some(Black), 10_000);
        assert_eq!(c.flag_at(), Some(13_000));
        assert_eq!(c.flagged(12_999), None);
        assert_eq!(c.flagged(13_000), Some(Black));
        c.zero(Black);
        assert_eq!(c.remaining_ms[1], 0);
        assert_eq!(c.running_side(), None);
    }

    #[test]
    fn pause_resume_and_forgiven_downtime() {
        let mut c = Clock::new(10_000, 0);
        c.run(Some(White), 0);
        assert_eq!(c.pause(4_000), Some(White));
        assert_eq!(
            c.remaining(100_000),
            [6_000, 10_000],
            "paused clocks do not run"
        );
        c.resume(White, 100_000);
        assert_eq!(c.remaining(101_000), [5_000, 10_000]);
        // Used 2 s more, then the service was down from 102 000 to 132 000: the 2 s stay charged,
        // the 30 s are free, the clock runs again from 132 000.
        c.skip_downtime(102_000, 132_000);
        assert_eq!(c.remaining(132_000), [4_000, 10_000]);
        assert_eq!(c.remaining(132_500), [3_500, 10_000]);
        // A downtime that began before the clock started charges nothing.
        let mut d = Clock::new(10_000, 0);
        d.run(Some(Black), 50_000);
        d.skip_downtime(40_000, 60_000);
        assert_eq!(d.remaining(60_000), [10_000, 10_000]);
    }

    #[test]
    fn clocks_never_charge_backwards() {
        let mut c = Clock::new(10_000, 0);
        c.run(Some(White), 5_000);
        c.charge(4_000); // a wall clock stepping back is not a gift of time
        assert_eq!(c.remaining(4_000), [10_000, 10_000]);
        assert_eq!(c.remaining(6_000), [9_000, 10_000]);
    }
}
