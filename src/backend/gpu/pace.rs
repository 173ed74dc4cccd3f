//! How many iterations a device submission carries: sized from the measured time per
//! iteration, so that a run stops close to its time limit and answers a cancellation
//! promptly on any device, fast or slow (a hardware GPU runs a few thousand iterations a
//! second at 8x8, a software adapter under load a few).
//!
//! The device loop keeps one submission in flight while the host reads the one before, so a
//! stop is seen at most two submissions late. Each submission is therefore sized to take
//! about [`TARGET_S`] (never more iterations than the loop's most, never fewer than one), and
//! near the time limit to end by it: after the first iteration, a run overshoots its limit by
//! about two submissions and a read back, well within max(0.5 s, 10 %), and a cancellation
//! is answered in well under a second.

use std::time::{Duration, Instant};

/// The time one submission is sized to take, in seconds.
pub const TARGET_S: f64 = 0.1;

/// The pacing of one run of the device loop.
#[derive(Clone, Debug)]
pub struct Pace {
    /// The most iterations a submission carries (the loop's throughput setting).
    most: usize,
    /// Seconds per iteration, as last measured (None before the first read).
    per_iteration: Option<f64>,
    /// When the last read completed, and the iterations of the submission it read.
    last_read: Instant,
    start: Instant,
    time_limit: Option<Duration>,
}

impl Pace {
    /// A run that starts now, with at most `most` iterations a submission.
    pub fn new(most: usize, time_limit: Option<Duration>) -> Self {
        let now = Instant::now();
        Pace { most: most.max(1), per_iteration: None, last_read: now, start: now, time_limit }
    }

    /// The iterations of the next submission: one until a time per iteration is measured,
    /// then as many as take [`TARGET_S`], and no more than fit in the time left.
    pub fn next(&self) -> usize {
        let Some(tau) = self.per_iteration.filter(|t| *t > 0.0) else { return 1 };
        let mut k = (TARGET_S / tau).floor() as usize;
        if let Some(limit) = self.time_limit {
            let left = limit.as_secs_f64() - self.start.elapsed().as_secs_f64();
            k = k.min((left / tau).floor().max(1.0) as usize);
        }
        k.clamp(1, self.most)
    }

    /// Starts the clock of the next read now, keeping the time per iteration measured: for a
    /// caller that left the device idle since its last read (the stepper between steps), so
    /// that the idle time is not taken for the device's.
    pub fn resume(&mut self) {
        self.last_read = Instant::now();
    }

    /// Records that the read of a submission of `k` iterations completed now. The device
    /// runs submissions back to back, so the time since the previous read is this one's.
    pub fn read(&mut self, k: usize) {
        let now = Instant::now();
        let took = now.duration_since(self.last_read).as_secs_f64() / k.max(1) as f64;
        self.last_read = now;
        // The newest measurement weighs most: a device that slows down (a loaded machine)
        // shrinks the next submission at once.
        self.per_iteration = Some(match self.per_iteration {
            Some(old) if took < old => 0.5 * old + 0.5 * took,
            _ => took,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_iteration_until_measured_then_sized_to_the_target_and_the_time_left() {
        let mut p = Pace::new(32, None);
        assert_eq!(p.next(), 1);
        // 10 ms an iteration: ten to a submission.
        p.per_iteration = Some(0.01);
        assert_eq!(p.next(), 10);
        // A fast device is held to the loop's most.
        p.per_iteration = Some(1e-6);
        assert_eq!(p.next(), 32);
        // A slow one runs one at a time.
        p.per_iteration = Some(2.0);
        assert_eq!(p.next(), 1);
        // Near the limit: no more than fit in the time left.
        let mut p = Pace::new(32, Some(Duration::from_millis(50)));
        p.per_iteration = Some(0.01);
        assert!(p.next() <= 5, "{}", p.next());
    }

    #[test]
    fn a_slower_read_takes_over_at_once_and_a_faster_one_by_halves() {
        let mut p = Pace::new(32, None);
        p.per_iteration = Some(0.001);
        p.last_read = Instant::now() - Duration::from_millis(100);
        p.read(10);
        assert!(p.per_iteration.unwrap() >= 0.0099, "{:?}", p.per_iteration);
    }
}
