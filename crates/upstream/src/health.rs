//! How each vendor has answered lately, for the operator's page: calls and failures in the
//! last few minutes, the median latency of the latest calls, and the last failure. Kept per
//! process beside the metrics the same calls feed (a replica sees its own calls), in memory
//! only: a restart starts it again.

use std::collections::VecDeque;
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::Vendor;

/// The window calls and failures are counted over.
pub const WINDOW: Duration = Duration::from_secs(300);

/// Latencies kept per vendor for its median.
const LATENCIES: usize = 64;

/// One vendor's recent answers, as the operator sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorHealth {
    /// The vendor, by the name metrics and settings use (`predmkt-gamma`, …).
    pub vendor: &'static str,
    /// Calls in the last [`WINDOW`] (a call with retries counts once).
    pub calls: u64,
    /// Of those, the ones that failed.
    pub failures: u64,
    /// The median latency of its latest calls, retries included.
    pub median: Option<Duration>,
    /// How long ago it last answered well.
    pub last_ok: Option<Duration>,
    /// How long ago it last failed, and why.
    pub last_failure: Option<(Duration, String)>,
}

impl VendorHealth {
    /// `ok`, `failing` (at least half of the window's calls failed), or `idle` (no calls).
    pub fn state(&self) -> &'static str {
        match (self.calls, self.failures) {
            (0, _) => "idle",
            (calls, failures) if failures * 2 >= calls => "failing",
            _ => "ok",
        }
    }
}

#[derive(Debug, Default)]
struct Tracker {
    /// When each call of the window ended, and whether it failed; oldest first.
    ended: VecDeque<(Instant, bool)>,
    latencies: VecDeque<Duration>,
    last_ok: Option<Instant>,
    last_failure: Option<(Instant, String)>,
}

/// Every vendor's tracker.
#[derive(Debug)]
struct Board(Vec<(Vendor, Tracker)>);

static BOARD: LazyLock<Mutex<Board>> = LazyLock::new(|| Mutex::new(Board::new()));

/// Notes one call of `vendor` that took `took` and ended with `failure`, if it failed.
pub(crate) fn record(vendor: Vendor, took: Duration, failure: Option<String>) {
    BOARD.lock().unwrap_or_else(PoisonError::into_inner).record(vendor, took, failure, Instant::now());
}

/// Every vendor's recent answers, in [`Vendor::ALL`]'s order.
pub fn vendor_health() -> Vec<VendorHealth> {
    BOARD.lock().unwrap_or_else(PoisonError::into_inner).read(Instant::now())
}

impl Board {
    fn new() -> Self {
        Board(Vendor::ALL.iter().map(|v| (*v, Tracker::default())).collect())
    }

    fn record(&mut self, vendor: Vendor, took: Duration, failure: Option<String>, now: Instant) {
        let Some((_, tracker)) = self.0.iter_mut().find(|(v, _)| *v == vendor) else { return };
        tracker.forget_old(now);
        tracker.ended.push_back((now, failure.is_some()));
        if tracker.latencies.len() == LATENCIES {
            tracker.latencies.pop_front();
        }
        tracker.latencies.push_back(took);
        match failure {
            Some(why) => tracker.last_failure = Some((now, why)),
            None => tracker.last_ok = Some(now),
        }
    }

    fn read(&mut self, now: Instant) -> Vec<VendorHealth> {
        self.0
            .iter_mut()
            .map(|(vendor, tracker)| {
                tracker.forget_old(now);
                let mut latencies: Vec<Duration> = tracker.latencies.iter().copied().collect();
                latencies.sort_unstable();
                VendorHealth {
                    vendor: vendor.slug(),
                    calls: tracker.ended.len() as u64,
                    failures: tracker.ended.iter().filter(|(_, failed)| *failed).count() as u64,
                    median: latencies.get(latencies.len() / 2).copied(),
                    last_ok: tracker.last_ok.map(|at| now - at),
                    last_failure: tracker.last_failure.as_ref().map(|(at, why)| (now - *at, why.clone())),
                }
            })
            .collect()
    }
}

impl Tracker {
    /// Drops the calls that ended before the window.
    fn forget_old(&mut self, now: Instant) {
        while self.ended.front().is_some_and(|(at, _)| now.duration_since(*at) > WINDOW) {
            self.ended.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vendors_calls_failures_median_and_last_failure_are_kept_for_the_window() {
        let mut board = Board::new();
        let start = Instant::now();
        for ms in [10, 30, 20] {
            board.record(Vendor::Blockaid, Duration::from_millis(ms), None, start);
        }
        board.record(Vendor::Blockaid, Duration::from_millis(40), Some("shield answered 503".into()), start);
        let shield = |board: &mut Board, at| board.read(at).into_iter().find(|h| h.vendor == "shield").expect("listed");
        let health = shield(&mut board, start + Duration::from_secs(1));
        assert_eq!((health.calls, health.failures, health.state()), (4, 1, "ok"));
        assert_eq!(health.median, Some(Duration::from_millis(30)));
        assert_eq!(health.last_failure, Some((Duration::from_secs(1), "shield answered 503".into())));
        assert_eq!(health.last_ok, Some(Duration::from_secs(1)));
        let later = shield(&mut board, start + WINDOW + Duration::from_secs(1));
        assert_eq!((later.calls, later.state()), (0, "idle"), "the window moved on");
        assert!(later.last_failure.is_some(), "the last failure is kept past the window");
        assert_eq!(board.read(start).len(), Vendor::ALL.len(), "every vendor is listed, called or not");
    }

    #[test]
    fn half_the_calls_failing_is_failing() {
        let health =
            VendorHealth { vendor: "x", calls: 4, failures: 2, median: None, last_ok: None, last_failure: None };
        assert_eq!(health.state(), "failing");
    }
}
