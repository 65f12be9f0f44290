//! The signal engine: gathers a snapshot's inputs from its [`Market`], computes the snapshot
//! with the pure scoring of this crate, stores it, and keeps the newest one in memory, with
//! the answers published from it, so the signal routes answer without calling an upstream.
//!
//! One replica runs the engine (the holder of the store's engine lease: a PostgreSQL advisory
//! lock, or the single SQLite process); the others reload the newest stored snapshot. When no
//! snapshot exists yet (the first seconds of a fresh install, or a test app without the
//! background task), the first request computes one while the others wait on a mutex: a
//! client gets an answer rather than a 503, and concurrent first requests cost one gathering,
//! not one each.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use svc_catalogue::routes::signals::{TrackRecordResponse, WhaleAlertsResponse};
use svc_domain::Clock;
use svc_store::{Store, StoreError};

use crate::gather::{Market, parse_time};
use crate::{SignalConfig, Snapshot};

/// Why the engine has no snapshot to give.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// A snapshot could not be encoded, decoded or published.
    #[error("signal snapshot: {0}")]
    Snapshot(String),
}

/// Turns a snapshot into the answers served from it, once when it arrives (a signal request is
/// then a copy of bytes, not the serialisation of a 30 KB answer).
pub type Publish<P> = fn(&Snapshot) -> Result<P, String>;

/// The newest snapshot with the answers published from it.
#[derive(Debug)]
pub struct Current<P> {
    /// The snapshot.
    pub snapshot: Snapshot,
    /// What was published from it.
    pub published: P,
}

/// How far back the track record looks.
const TRACK_WINDOW_MS: i64 = 30 * 24 * 60 * 60 * 1000;
/// Most snapshots the track record reads (30 days of half-hourly snapshots).
const TRACK_MAX_SNAPSHOTS: u32 = 1_500;

/// The engine: its inputs, its store, and the newest snapshot in memory.
pub struct SignalEngine<P> {
    config: SignalConfig,
    store: Store,
    clock: Arc<dyn Clock>,
    market: Arc<dyn Market>,
    publish: Publish<P>,
    latest: RwLock<Option<Arc<Current<P>>>>,
    first: tokio::sync::Mutex<()>,
    /// The track record with the newest snapshot it was computed from.
    track: RwLock<Option<(Option<i64>, Arc<TrackRecordResponse>)>>,
}

impl<P> std::fmt::Debug for SignalEngine<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignalEngine").field("config", &self.config).finish_non_exhaustive()
    }
}

/// What an engine is built from.
pub struct EngineParts<P> {
    /// Scoring and refresh settings.
    pub config: SignalConfig,
    /// Where snapshots are stored and the engine lease is held.
    pub store: Store,
    /// Injected time.
    pub clock: Arc<dyn Clock>,
    /// Where inputs come from.
    pub market: Arc<dyn Market>,
    /// What is served from a snapshot.
    pub publish: Publish<P>,
}

impl<P: Send + Sync + 'static> SignalEngine<P> {
    /// An engine with no snapshot yet.
    pub fn new(parts: EngineParts<P>) -> Self {
        let EngineParts { config, store, clock, market, publish } = parts;
        SignalEngine {
            config,
            store,
            clock,
            market,
            publish,
            latest: RwLock::new(None),
            first: tokio::sync::Mutex::new(()),
            track: RwLock::new(None),
        }
    }

    /// The scoring settings.
    pub fn config(&self) -> &SignalConfig {
        &self.config
    }

    /// The track record of the last 30 days: computed from stored snapshots only (it never
    /// triggers a gathering), and cached until the next snapshot lands.
    pub async fn track_record(&self) -> Result<Arc<TrackRecordResponse>, EngineError> {
        let newest = self.store.latest_signal_snapshot_at().await?;
        let cached =
            self.track.read().ok().and_then(|g| g.as_ref().filter(|(at, _)| *at == newest).map(|(_, r)| r.clone()));
        if let Some(hit) = cached {
            return Ok(hit);
        }
        let since = self.clock.now_ms() - TRACK_WINDOW_MS;
        let history: Vec<Snapshot> = self
            .store
            .signal_snapshots_since(since, TRACK_MAX_SNAPSHOTS)
            .await?
            .into_iter()
            .filter_map(|s| serde_json::from_str(&s.body).ok())
            .collect();
        let record = Arc::new(crate::track_record(&history));
        if let Ok(mut g) = self.track.write() {
            *g = Some((history.last().map(|s| s.generated_at_ms), record.clone()));
        }
        Ok(record)
    }

    /// The newest snapshot's whale alerts still inside the alert window now (a snapshot is up
    /// to one refresh old, and an alert must never be older than the window).
    pub async fn whale_alerts(&self) -> Result<WhaleAlertsResponse, EngineError> {
        let s = &self.latest().await?.snapshot;
        let from = self.clock.now_ms() - self.config.whale_window_ms;
        let alerts =
            s.whale_alerts.iter().filter(|a| parse_time(&a.at.0).is_some_and(|at| at > from)).cloned().collect();
        Ok(WhaleAlertsResponse { meta: s.meta(), threshold_usd: s.whale_threshold_usd, alerts })
    }

    fn cached(&self) -> Option<Arc<Current<P>>> {
        self.latest.read().ok().and_then(|g| g.clone())
    }

    /// When the snapshot in memory was computed.
    fn cached_at(&self) -> Option<i64> {
        self.cached().map(|c| c.snapshot.generated_at_ms)
    }

    /// Keeps `snapshot` unless a newer one is already kept.
    fn keep(&self, snapshot: Snapshot) -> Result<(), EngineError> {
        if self.cached_at().is_some_and(|at| at >= snapshot.generated_at_ms) {
            return Ok(());
        }
        let published = (self.publish)(&snapshot).map_err(EngineError::Snapshot)?;
        let current = Arc::new(Current { snapshot, published });
        if let Ok(mut g) = self.latest.write() {
            let newer = g.as_ref().is_none_or(|old| old.snapshot.generated_at_ms < current.snapshot.generated_at_ms);
            if newer {
                *g = Some(current);
            }
        }
        Ok(())
    }

    /// The newest snapshot: from memory, else from the store, else computed now (once,
    /// however many requests wait for it).
    pub async fn latest(&self) -> Result<Arc<Current<P>>, EngineError> {
        if let Some(s) = self.cached() {
            return Ok(s);
        }
        // Boxed: the first load's future holds a whole gathering (tens of kilobytes), which
        // every signal request's future would otherwise carry, and copy, unboxed.
        Box::pin(self.first_load()).await
    }

    /// Loads or computes the first snapshot, once, however many requests wait for it.
    async fn first_load(&self) -> Result<Arc<Current<P>>, EngineError> {
        let _guard = self.first.lock().await;
        if let Some(s) = self.cached() {
            return Ok(s);
        }
        if let Some(s) = self.reload().await? {
            return Ok(s);
        }
        self.refresh().await
    }

    /// Loads the newest stored snapshot into memory, unless it is there already; `None` when
    /// the store has none.
    pub async fn reload(&self) -> Result<Option<Arc<Current<P>>>, EngineError> {
        let Some(at) = self.store.latest_signal_snapshot_at().await? else { return Ok(None) };
        if self.cached_at() != Some(at) {
            let Some(stored) = self.store.latest_signal_snapshot().await? else { return Ok(None) };
            let snapshot: Snapshot = serde_json::from_str(&stored.body)
                .map_err(|e| EngineError::Snapshot(format!("stored snapshot does not decode: {e}")))?;
            self.keep(snapshot)?;
        }
        Ok(self.cached())
    }

    /// Gathers, computes, stores and keeps a new snapshot.
    pub async fn refresh(&self) -> Result<Arc<Current<P>>, EngineError> {
        let started = std::time::Instant::now();
        let input = self.market.gather(self.clock.now_ms()).await;
        let snapshot = crate::compute(&input, &self.config);
        let body = serde_json::to_string(&snapshot).map_err(|e| EngineError::Snapshot(format!("encode: {e}")))?;
        self.store.put_signal_snapshot(snapshot.generated_at_ms, &body).await?;
        metrics::histogram!("svc_signal_snapshot_seconds").record(started.elapsed().as_secs_f64());
        tracing::info!(
            tokens = input.tokens.len(),
            trades = input.trades.len(),
            degraded = ?input.degraded,
            took_ms = started.elapsed().as_millis() as u64,
            "signal snapshot computed"
        );
        self.keep(snapshot)?;
        self.cached().ok_or_else(|| EngineError::Snapshot("not kept".into()))
    }

    /// The background task: leads the engine when it can (a snapshot at once, then one per
    /// refresh interval), else follows the leader's snapshots and retries the lease every
    /// interval, so a dead leader is replaced within one interval.
    pub async fn run(self: Arc<Self>) {
        let every = Duration::from_millis(self.config.refresh_interval_ms.max(1_000) as u64);
        let follow_every = every.min(Duration::from_secs(60));
        loop {
            match self.store.try_lead_signal_engine().await {
                Ok(Some(_lease)) => {
                    tracing::info!("this replica runs the signal engine");
                    let mut ticks = tokio::time::interval(every);
                    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                    loop {
                        ticks.tick().await;
                        // Held while computing, so a first request waits for this snapshot
                        // instead of gathering its own.
                        let _computing = self.first.lock().await;
                        if let Err(err) = self.refresh().await {
                            tracing::warn!(error = %err, "signal snapshot failed; the previous one is served");
                        }
                    }
                }
                Ok(None) => {
                    let until = tokio::time::Instant::now() + every;
                    while tokio::time::Instant::now() < until {
                        if let Err(err) = self.reload().await {
                            tracing::warn!(error = %err, "reloading the leader's signal snapshot failed");
                        }
                        tokio::time::sleep(follow_every).await;
                    }
                }
                Err(err) => {
                    tracing::warn!(error = %err, "signal engine lease unavailable; retrying");
                    tokio::time::sleep(follow_every).await;
                }
            }
        }
    }
}
