//! A response cache with per-entry expiry, read from the injected clock so tests move time
//! instead of sleeping.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use svc_domain::Clock;

/// Decoded answers by normalised request. Bounded: when full, expired entries go first and
/// then everything, which costs only refetches.
#[derive(Debug)]
pub struct TtlCache<V> {
    name: &'static str,
    clock: Arc<dyn Clock>,
    capacity: usize,
    entries: Mutex<HashMap<String, (i64, V)>>,
}

impl<V: Clone> TtlCache<V> {
    /// An empty cache named `name` in the hit metric.
    pub fn new(name: &'static str, clock: Arc<dyn Clock>, capacity: usize) -> Self {
        TtlCache { name, clock, capacity: capacity.max(1), entries: Mutex::new(HashMap::new()) }
    }

    /// The live entry under `key`.
    pub fn get(&self, key: &str) -> Option<V> {
        let now = self.clock.now_ms();
        let entries = self.entries.lock().ok()?;
        entries.get(key).filter(|(expires, _)| *expires > now).map(|(_, v)| v.clone())
    }

    /// Keeps `value` under `key` for `ttl`.
    pub fn put(&self, key: String, value: V, ttl: Duration) {
        let now = self.clock.now_ms();
        let expires = now.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        let Ok(mut entries) = self.entries.lock() else { return };
        if entries.len() >= self.capacity && !entries.contains_key(&key) {
            entries.retain(|_, (at, _)| *at > now);
            if entries.len() >= self.capacity {
                entries.clear();
            }
        }
        entries.insert(key, (expires, value));
    }

    /// The cached value, or `fetch`'s answer kept for `ttl`. Errors are not cached.
    pub async fn get_or_fetch<E, F, Fut>(&self, key: String, ttl: Duration, fetch: F) -> Result<V, E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, E>>,
    {
        if let Some(hit) = self.get(&key) {
            metrics::counter!("svc_upstream_cache_hits_total", "vendor" => self.name).increment(1);
            return Ok(hit);
        }
        metrics::counter!("svc_upstream_cache_misses_total", "vendor" => self.name).increment(1);
        let value = fetch().await?;
        self.put(key, value.clone(), ttl);
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_domain::FixedClock;

    #[tokio::test]
    async fn entries_live_for_their_ttl_and_errors_are_not_kept() {
        let clock = FixedClock::at_ms(1_000);
        let cache = TtlCache::new("test", Arc::new(clock.clone()), 8);
        let first: Result<u32, ()> = cache.get_or_fetch("k".into(), Duration::from_secs(60), || async { Ok(1) }).await;
        assert_eq!(first, Ok(1));
        let cached: Result<u32, ()> = cache.get_or_fetch("k".into(), Duration::from_secs(60), || async { Ok(2) }).await;
        assert_eq!(cached, Ok(1));
        clock.advance_ms(60_000);
        assert_eq!(cache.get("k"), None);
        let failed: Result<u32, &str> =
            cache.get_or_fetch("k".into(), Duration::from_secs(60), || async { Err("down") }).await;
        assert_eq!(failed, Err("down"));
        assert_eq!(cache.get("k"), None);
    }

    #[test]
    fn a_full_cache_drops_expired_entries_first() {
        let clock = FixedClock::at_ms(0);
        let cache = TtlCache::new("test", Arc::new(clock.clone()), 2);
        cache.put("old".into(), 1, Duration::from_millis(10));
        cache.put("live".into(), 2, Duration::from_secs(10));
        clock.advance_ms(20);
        cache.put("new".into(), 3, Duration::from_secs(10));
        assert_eq!((cache.get("old"), cache.get("live"), cache.get("new")), (None, Some(2), Some(3)));
    }
}
