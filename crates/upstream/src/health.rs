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

/// Calls are counted in slots of this many seconds, so a busy vendor's window takes the same
/// room as an idle one's.
const SLOT_SECS: u64 = 10;

/// Slots in the window.
const SLOTS: usize = (WINDOW.as_secs() / SLOT_SECS) as usize;

/// One vendor's recent answers, as the operator sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VendorHealth {
    /// The vendor, by the name metrics and settings use (`predmkt-gamma`, …).
    pub vendor: &'static str,
    /// Calls in the last [`WINDOW`], to ten seconds (a call with retries counts once).
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
    /// Calls and failures per slot of the window, by slot number modulo [`SLOTS`].
    slots: [Slot; SLOTS],
    latencies: VecDeque<Duration>,
    last_ok: Option<Instant>,
    last_failure: Option<(Instant, String)>,
}

/// One slot's calls.
#[derive(Debug, Default, Clone, Copy)]
struct Slot {
    /// Its number: seconds since the board began over [`SLOT_SECS`].
    at: u64,
    calls: u64,
    failures: u64,
}

/// Every vendor's tracker.
#[derive(Debug)]
struct Board {
    /// Where slot numbers count from.
    epoch: Instant,
    trackers: Vec<(Vendor, Tracker)>,
}

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
        Board { epoch: Instant::now(), trackers: Vendor::ALL.iter().map(|v| (*v, Tracker::default())).collect() }
    }

    /// The slot `now` falls in.
    fn slot(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.epoch).as_secs() / SLOT_SECS
    }

    fn record(&mut self, vendor: Vendor, took: Duration, failure: Option<String>, now: Instant) {
        let at = self.slot(now);
        let Some((_, tracker)) = self.trackers.iter_mut().find(|(v, _)| *v == vendor) else { return };
        let slot = &mut tracker.slots[(at % SLOTS as u64) as usize];
        if slot.at != at {
            *slot = Slot { at, calls: 0, failures: 0 };
        }
        slot.calls += 1;
        slot.failures += u64::from(failure.is_some());
        if tracker.latencies.len() == LATENCIES {
            tracker.latencies.pop_front();
        }
        tracker.latencies.push_back(took);
        match failure {
            Some(why) => tracker.last_failure = Some((now, why)),
            None => tracker.last_ok = Some(now),
        }
    }

    fn read(&self, now: Instant) -> Vec<VendorHealth> {
        let current = self.slot(now);
        self.trackers
            .iter()
            .map(|(vendor, tracker)| {
                let in_window = tracker.slots.iter().filter(|s| s.at <= current && current - s.at < SLOTS as u64);
                let (calls, failures) = in_window.fold((0, 0), |(c, f), s| (c + s.calls, f + s.failures));
                let mut latencies: Vec<Duration> = tracker.latencies.iter().copied().collect();
                latencies.sort_unstable();
                VendorHealth {
                    vendor: vendor.slug(),
                    calls,
                    failures,
                    median: latencies.get(latencies.len() / 2).copied(),
                    last_ok: tracker.last_ok.map(|at| now - at),
                    last_failure: tracker.last_failure.as_ref().map(|(at, why)| (now - *at, why.clone())),
                }
            })
            .collect()
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
        let shield = |board: &Board, at| board.read(at).into_iter().find(|h| h.vendor == "shield").expect("listed");
        let health = shield(&board, start + Duration::from_secs(1));
        assert_eq!((health.calls, health.failures, health.state()), (4, 1, "ok"));
        assert_eq!(health.median, Some(Duration::from_millis(30)));
        assert_eq!(health.last_failure, Some((Duration::from_secs(1), "shield answered 503".into())));
        assert_eq!(health.last_ok, Some(Duration::from_secs(1)));
        let later = shield(&board, start + WINDOW + Duration::from_secs(1));
        assert_eq!((later.calls, later.state()), (0, "idle"), "the window moved on");
        assert!(later.last_failure.is_some(), "the last failure is kept past the window");
        assert_eq!(board.read(start).len(), Vendor::ALL.len(), "every vendor is listed, called or not");
    }

    #[test]
    fn a_busy_vendors_calls_are_counted_in_the_same_room_as_an_idle_ones() {
        let mut board = Board::new();
        let start = Instant::now();
        for n in 0..100_000_u64 {
            let failure = (n % 10 == 0).then(|| "timeout".to_owned());
            board.record(Vendor::Okx, Duration::from_millis(5), failure, start + Duration::from_millis(n));
        }
        let okx = board.read(start + Duration::from_secs(100)).into_iter().find(|h| h.vendor == "okx").expect("listed");
        assert_eq!((okx.calls, okx.failures), (100_000, 10_000));
    }

    #[test]
    fn half_the_calls_failing_is_failing() {
        let health =
            VendorHealth { vendor: "x", calls: 4, failures: 2, median: None, last_ok: None, last_failure: None };
        assert_eq!(health.state(), "failing");
    }
}
