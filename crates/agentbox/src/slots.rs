//! Counted slots: at most so many of something at once per key (log streams per account,
//! long polls per bot), each slot given back when its holder is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Log streams one account may hold open at once.
pub const MAX_LOG_STREAMS: usize = 4;

/// Slots per key, up to a maximum.
#[derive(Debug)]
pub struct Slots {
    max: usize,
    taken: Arc<Mutex<HashMap<String, usize>>>,
}

/// One taken slot; dropping it gives it back.
#[derive(Debug)]
pub struct Slot {
    taken: Arc<Mutex<HashMap<String, usize>>>,
    key: String,
}

impl Slots {
    /// Up to `max` slots per key.
    pub fn new(max: usize) -> Self {
        Slots { max, taken: Arc::default() }
    }

    /// A slot for `key`, unless all of its are taken.
    pub fn take(&self, key: &str) -> Option<Slot> {
        let mut taken = self.taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = taken.entry(key.to_owned()).or_default();
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(Slot { taken: Arc::clone(&self.taken), key: key.to_owned() })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut taken = self.taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(n) = taken.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                taken.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_gets_at_most_its_slots_and_a_dropped_one_comes_back() {
        let slots = Slots::new(2);
        let (a, _b) = (slots.take("x").expect("first"), slots.take("x").expect("second"));
        assert!(slots.take("x").is_none(), "all taken");
        assert!(slots.take("y").is_some(), "per key");
        drop(a);
        assert!(slots.take("x").is_some(), "given back");
    }
}
