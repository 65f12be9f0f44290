//! Failures tests switch on in a fake vendor, and the log of what the fakes received (the
//! proof that a refused request never left).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One injected failure, used by the next request to the vendor.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Answer this status with the vendor's error body, and `Retry-After` when given.
    Status {
        /// HTTP status.
        status: u16,
        /// Seconds for `Retry-After`.
        retry_after: Option<u32>,
    },
    /// Wait this long before answering normally.
    Delay(Duration),
}

/// Shared fault queues and request log.
#[derive(Debug, Clone, Default)]
pub struct Faults(Arc<Mutex<State>>);

#[derive(Debug, Default)]
struct State {
    queued: Vec<(String, VecDeque<Fault>)>,
    log: Vec<String>,
}

impl Faults {
    /// The next request to `vendor` (its path prefix, e.g. `launchpad`) meets `fault`;
    /// several pushes queue in order.
    pub fn push(&self, vendor: &str, fault: Fault) {
        let Ok(mut state) = self.0.lock() else { return };
        match state.queued.iter_mut().find(|(v, _)| v == vendor) {
            Some((_, queue)) => queue.push_back(fault),
            None => state.queued.push((vendor.to_owned(), VecDeque::from([fault]))),
        }
    }

    /// Every request received so far, as `METHOD /path?query`, oldest first.
    pub fn log(&self) -> Vec<String> {
        self.0.lock().map(|s| s.log.clone()).unwrap_or_default()
    }

    /// Records a request and takes the vendor's next fault.
    pub(crate) fn on_request(&self, vendor: &str, line: String) -> Option<Fault> {
        let mut state = self.0.lock().ok()?;
        state.log.push(line);
        state.queued.iter_mut().find(|(v, _)| v == vendor)?.1.pop_front()
    }
}
