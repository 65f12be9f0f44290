//! Counters behind preview quotas and rate limits: a sliding window per key (the client),
//! so a burst at the end of one window and the start of the next is still one window's worth.
//!
//! Counters live in this process by default; replicas that must share them point at Redis
//! (`SVC_REDIS_URL`). Either way a hit is one atomic step, so concurrent requests from one
//! client cannot all slip under the limit.
//!
//! # Layout
//! - this module: [`Limiter`], its counters and holds, and the [`Decision`] a hit returns.
//! - [`paid`]: rate limits on calls paid per call, where a challenge holds a slot.

pub mod paid;

/// The window of a per-minute limit, in ms: the paid routes', the LLM proxy's and sellers' agents'.
pub const MINUTE_MS: i64 = 60_000;

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// What a counted request may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Whether this request is within the limit (and was counted).
    pub allowed: bool,
    /// The limit of the window.
    pub limit: u32,
    /// Requests left in the window after this one.
    pub remaining: u32,
    /// When the oldest counted request leaves the window (unix ms): the earliest time a refused
    /// client can succeed, and when `remaining` next grows.
    pub reset_at_ms: i64,
}

impl Decision {
    /// The decision where no limit applies (a limit configured as 0).
    pub fn unlimited() -> Self {
        Decision { allowed: true, limit: u32::MAX, remaining: u32::MAX, reset_at_ms: 0 }
    }

    /// Whether no limit applied.
    pub fn is_unlimited(&self) -> bool {
        self.allowed && self.limit == u32::MAX
    }

    /// Seconds until `reset_at_ms`, rounded up, at least 1 when refused: what `Retry-After`
    /// and `RateLimit-Reset` say.
    pub fn reset_secs(&self, now_ms: i64) -> u64 {
        let secs = u64::try_from((self.reset_at_ms - now_ms).max(0)).unwrap_or(0).div_ceil(1000);
        if self.allowed { secs } else { secs.max(1) }
    }
}

/// Sliding-window counters, and the slots that challenges hold.
#[derive(Debug, Default)]
pub struct Limiter {
    memory: Mutex<Windows>,
    redis: Option<Shared>,
}

/// Counters in Redis, shared by every replica pointed at it.
#[derive(Clone)]
struct Shared {
    conn: redis::aio::ConnectionManager,
    /// Prepended to every key, so svc's counters can share a Redis with other data.
    prefix: String,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shared(redis)")
    }
}

/// Why shared counters cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("rate-limit counters in Redis: {0}")]
pub struct LimitsError(#[from] redis::RedisError);

/// Longest wait for Redis: a limit check must not slow a call down noticeably. Past it, the
/// call is let through (and logged): counters failing open keeps the service answering.
const REDIS_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

/// Counts one hit if the window has room. Returns {allowed, used, oldest score}.
const HIT: &str = r"
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local used = redis.call('ZCARD', key)
local allowed = 0
if ARGV[4] ~= '' and used < limit then
  redis.call('ZADD', key, now, ARGV[4])
  used = used + 1
  allowed = 1
elseif used < limit then
  allowed = 1
end
redis.call('PEXPIRE', key, window)
local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
local oldest = now
if first[2] then oldest = tonumber(first[2]) end
return {allowed, used, oldest}
";

/// Removes one hit scored `at`.
const GIVE_BACK: &str = r"
local hit = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], ARGV[1], 'LIMIT', 0, 1)
if hit[1] then redis.call('ZREM', KEYS[1], hit[1]) end
return 0
";

/// Adds a hold ending at ARGV[1] (now is ARGV[2]); the set lives as long as its last hold.
/// Times are the service's clock, so the expiry is relative, not Redis's wall time.
const HOLD: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(ARGV[1]) - tonumber(ARGV[2])))
return 0
";

/// Uses the hold that ends first, if any is live.
const TAKE_HOLD: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local first = redis.call('ZRANGE', KEYS[1], 0, 0)
if first[1] then
  redis.call('ZREM', KEYS[1], first[1])
  return 1
end
return 0
";

impl Shared {
    async fn run<T: redis::FromRedisValue>(&self, script: &str, key: &str, args: &[String]) -> Option<T> {
        let mut conn = self.conn.clone();
        let script = redis::Script::new(script);
        let mut invocation = script.key(format!("{}{key}", self.prefix));
        for arg in args {
            invocation.arg(arg);
        }
        match tokio::time::timeout(REDIS_WAIT, invocation.invoke_async::<T>(&mut conn)).await {
            Ok(Ok(value)) => Some(value),
            Ok(Err(err)) => {
                tracing::warn!(error = %err, "rate-limit counters unavailable; letting the call through");
                None
            }
            Err(_) => {
                tracing::warn!("rate-limit counters too slow; letting the call through");
                None
            }
        }
    }

    async fn hit(&self, key: &str, limit: u32, window_ms: i64, now_ms: i64, count: bool) -> Decision {
        let member = if count { format!("{now_ms}-{}", uuid::Uuid::new_v4().simple()) } else { String::new() };
        let args = [now_ms.to_string(), window_ms.to_string(), limit.to_string(), member];
        match self.run::<(i64, i64, i64)>(HIT, key, &args).await {
            Some((allowed, used, oldest)) => Decision {
                allowed: allowed == 1,
                limit,
                remaining: limit.saturating_sub(u32::try_from(used).unwrap_or(u32::MAX)),
                reset_at_ms: oldest + window_ms,
            },
            None => Decision { allowed: true, limit, remaining: limit, reset_at_ms: now_ms + window_ms },
        }
    }
}

#[derive(Debug, Default)]
struct Windows {
    by_key: HashMap<String, Window>,
    holds: HashMap<String, VecDeque<i64>>,
    hits_since_sweep: u32,
}

#[derive(Debug)]
struct Window {
    length_ms: i64,
    hits: VecDeque<i64>,
}

impl Window {
    fn slide(&mut self, now_ms: i64) {
        while self.hits.front().is_some_and(|first| *first <= now_ms - self.length_ms) {
            self.hits.pop_front();
        }
    }

    fn decision(&self, allowed: bool, limit: u32, now_ms: i64) -> Decision {
        let used = u32::try_from(self.hits.len()).unwrap_or(u32::MAX);
        let oldest = self.hits.front().copied().unwrap_or(now_ms);
        Decision { allowed, limit, remaining: limit.saturating_sub(used), reset_at_ms: oldest + self.length_ms }
    }
}

/// Hits between sweeps of idle keys, so memory follows the active clients only.
const SWEEP_EVERY: u32 = 4096;

impl Limiter {
    /// Counters shared through the Redis at `url` under keys starting with `namespace`
    /// (e.g. `svc:limits:`), so limits hold across the replicas that share both.
    pub async fn redis(url: &str, namespace: &str) -> Result<Self, LimitsError> {
        let client = redis::Client::open(url)?;
        let conn = redis::aio::ConnectionManager::new(client).await?;
        Ok(Limiter { memory: Mutex::default(), redis: Some(Shared { conn, prefix: namespace.to_owned() }) })
    }

    fn windows(&self) -> std::sync::MutexGuard<'_, Windows> {
        self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts one request of `key` against `limit` per `window_ms`, unless the window is full.
    pub async fn hit(&self, key: &str, limit: u32, window_ms: i64, now_ms: i64) -> Decision {
        if let Some(shared) = &self.redis {
            return shared.hit(key, limit, window_ms, now_ms, true).await;
        }
        let mut windows = self.windows();
        windows.hits_since_sweep += 1;
        if windows.hits_since_sweep >= SWEEP_EVERY {
            windows.hits_since_sweep = 0;
            windows.by_key.retain(|_, w| w.hits.back().is_some_and(|last| *last > now_ms - w.length_ms));
            windows.holds.retain(|_, expiries| expiries.back().is_some_and(|until| *until > now_ms));
        }
        let window = windows
            .by_key
            .entry(key.to_owned())
            .or_insert_with(|| Window { length_ms: window_ms, hits: VecDeque::new() });
        window.length_ms = window_ms;
        window.slide(now_ms);
        let allowed = window.hits.len() < usize::try_from(limit).unwrap_or(usize::MAX);
        if allowed {
            window.hits.push_back(now_ms);
        }
        window.decision(allowed, limit, now_ms)
    }

    /// The window of `key` as it stands, without counting.
    pub async fn peek(&self, key: &str, limit: u32, window_ms: i64, now_ms: i64) -> Decision {
        if let Some(shared) = &self.redis {
            return shared.hit(key, limit, window_ms, now_ms, false).await;
        }
        let mut windows = self.windows();
        match windows.by_key.get_mut(key) {
            Some(window) => {
                window.slide(now_ms);
                let allowed = window.hits.len() < usize::try_from(limit).unwrap_or(usize::MAX);
                window.decision(allowed, limit, now_ms)
            }
            None => Decision { allowed: true, limit, remaining: limit, reset_at_ms: now_ms + window_ms },
        }
    }

    /// Takes back a request counted at `at_ms` that was not served (it failed on our side),
    /// so a client loses nothing to our failures.
    pub async fn give_back(&self, key: &str, at_ms: i64) {
        if let Some(shared) = &self.redis {
            shared.run::<i64>(GIVE_BACK, key, &[at_ms.to_string()]).await;
            return;
        }
        let mut windows = self.windows();
        if let Some(window) = windows.by_key.get_mut(key)
            && let Some(index) = window.hits.iter().rposition(|hit| *hit == at_ms)
        {
            window.hits.remove(index);
        }
    }

    /// Holds one slot under `key` until `until_ms`.
    pub async fn hold(&self, key: &str, until_ms: i64, now_ms: i64) {
        if let Some(shared) = &self.redis {
            let member = uuid::Uuid::new_v4().simple().to_string();
            shared.run::<i64>(HOLD, key, &[until_ms.to_string(), now_ms.to_string(), member]).await;
            return;
        }
        let mut windows = self.windows();
        let holds = windows.holds.entry(key.to_owned()).or_default();
        while holds.front().is_some_and(|until| *until <= now_ms) {
            holds.pop_front();
        }
        holds.push_back(until_ms);
    }

    /// Uses a slot held under `key`, if one is still held.
    pub async fn take_hold(&self, key: &str, now_ms: i64) -> bool {
        if let Some(shared) = &self.redis {
            return shared.run::<i64>(TAKE_HOLD, key, &[now_ms.to_string()]).await == Some(1);
        }
        let mut windows = self.windows();
        let Some(holds) = windows.holds.get_mut(key) else { return false };
        while holds.front().is_some_and(|until| *until <= now_ms) {
            holds.pop_front();
        }
        holds.pop_front().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600_000;

    #[tokio::test]
    async fn the_window_slides_rather_than_resetting_on_the_hour() {
        let limiter = Limiter::default();
        for minute in 0..5 {
            let decision = limiter.hit("ip", 5, HOUR, minute * 60_000).await;
            assert!(decision.allowed);
            assert_eq!(decision.remaining, u32::try_from(4 - minute).expect("small"));
        }
        let refused = limiter.hit("ip", 5, HOUR, 30 * 60_000).await;
        assert!(!refused.allowed);
        assert_eq!(refused.reset_at_ms, HOUR, "the first hit leaves the window an hour after it");
        assert_eq!(refused.reset_secs(30 * 60_000), 1800);
        assert!(!limiter.hit("ip", 5, HOUR, HOUR - 1).await.allowed);
        assert!(limiter.hit("ip", 5, HOUR, HOUR).await.allowed, "one slot back after the oldest hit expires");
        assert!(!limiter.hit("ip", 5, HOUR, HOUR).await.allowed);
        assert!(limiter.hit("other", 5, HOUR, HOUR).await.allowed, "keys are separate");
    }

    #[tokio::test]
    async fn a_given_back_hit_frees_its_slot() {
        let limiter = Limiter::default();
        for at in 0..3 {
            assert!(limiter.hit("ip", 3, HOUR, at).await.allowed);
        }
        limiter.give_back("ip", 1).await;
        assert!(limiter.hit("ip", 3, HOUR, 10).await.allowed);
        assert!(!limiter.hit("ip", 3, HOUR, 11).await.allowed);
    }

    #[tokio::test]
    async fn idle_keys_are_swept() {
        let limiter = Limiter::default();
        limiter.hit("old", 5, 1000, 0).await;
        for i in 0..SWEEP_EVERY {
            limiter.hit("busy", u32::MAX, 1000, 10_000 + i64::from(i)).await;
        }
        let windows = limiter.memory.lock().expect("lock");
        assert!(!windows.by_key.contains_key("old"));
    }

    #[tokio::test]
    async fn a_held_slot_is_used_once_and_not_after_it_expires() {
        let limiter = Limiter::default();
        limiter.hold("h", 300, 0).await;
        limiter.hold("h", 300, 0).await;
        limiter.hold("old", 100, 0).await;
        assert!(limiter.take_hold("h", 10).await);
        assert!(limiter.take_hold("h", 10).await);
        assert!(!limiter.take_hold("h", 10).await);
        assert!(!limiter.take_hold("old", 100).await, "expired at its end");
        assert!(!limiter.take_hold("never", 0).await);
    }
}
