//! Agent sandboxes: an account starts a templated agent gateway in an isolated sandbox, wired
//! to svc's tools (a freshly minted, scoped API key) and its LLM proxy (the account's token),
//! watches it, and stops it.
//!
//! # Layout
//! - this module: [`Agentbox`], the service the routes call, and its settings.
//! - [`lifecycle`]: a gateway's states as persisted moves, from provisioning to stopped or
//!   failed, its watch (crashes, health, billing) and the reconciliation after a restart.
//! - [`backend`]: the trait sandboxes run behind; [`local`]: bubblewrap on this machine,
//!   capped by [`cgroups`]; [`shim`]: the bridge inside a local sandbox; [`remote`]: an
//!   E2B-compatible service.
//! - [`templates`]: the agents; [`files`]: the config, workspace and skills a sandbox gets.
//! - [`snapshot`]: the prepared agent gateway install sandboxes mount; [`layout`]: where its
//!   mount, the agent's home and the ports are inside a sandbox.
//! - [`telegram`]: the chat-bot channel (relay and Bot-API shim); [`sealed`]: secrets at rest;
//!   [`slots`]: per-key caps on what is held open.
//! - [`error`]: the one error type, [`AgentboxError`].

pub mod backend;
pub mod cgroups;
mod egress;
pub mod error;
pub mod files;
pub mod layout;
pub mod lifecycle;
pub mod local;
mod pool;
pub mod remote;
mod warm;
pub use svc_sealed as sealed;
pub mod shim;
pub mod slots;
pub mod snapshot;
pub mod telegram;
pub mod templates;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use svc_catalogue::routes::agentbox::{GatewayView, TemplateList, TemplateView};
use svc_catalogue::routes::common::Timestamp;
use svc_domain::{Clock, Money, rfc3339};
use svc_store::{GatewayCreated, GatewayRecord, NewGateway, Store};
use tokio::sync::Notify;

pub use backend::Backend;
pub use error::AgentboxError;
pub use slots::MAX_LOG_STREAMS;

pub use svc_catalogue::routes::agentbox::LOGS_PATH;

/// The sandboxes' settings.
#[derive(Debug, Clone)]
pub struct AgentboxConfig {
    /// This machine's name, recorded with each gateway so a replica reconciles its own.
    pub node: String,
    /// Memory each sandbox reserves and is capped at, MiB.
    pub memory_mb: u64,
    /// Memory all sandboxes on this machine may reserve together, MiB.
    pub memory_budget_mb: u64,
    /// The most processes and threads in one sandbox.
    pub pids_max: u32,
    /// What a running gateway costs per minute, in credits.
    pub credits_per_minute: Money,
    /// How often running time is billed (each period in advance).
    pub billing_interval: Duration,
    /// How long a gateway has to answer its health check after it starts.
    pub health_timeout: Duration,
    /// How often a running gateway is probed.
    pub probe_interval: Duration,
    /// How long a gateway gets to exit after SIGTERM.
    pub stop_grace: Duration,
    /// What a sandbox's home holds at most, MiB (it counts against the memory cap).
    pub home_mb: u64,
    /// What a sandbox's `/tmp` holds at most, MiB (it counts against the memory cap).
    pub tmp_mb: u64,
    /// The most a gateway's log keeps, MiB.
    pub log_cap_mb: u64,
    /// How long a gateway's log is kept after it ends.
    pub log_retention: Duration,
    /// Warm gateways kept booted per template, for starts in about a second.
    pub pool_size: usize,
    /// A running gateway with nothing to do for this long is put to sleep; zero: never.
    pub idle_sleep: Duration,
}

impl AgentboxConfig {
    /// The defaults on `node`: 2 GiB per sandbox (the agent gateway idles
    /// near 1 GiB and peaks near 1.4), 0.001 USD a minute, billed each minute, 90 s to
    /// become healthy, probed every 30 s, 10 s to stop; a 512 MiB home and a 256 MiB `/tmp`
    /// (inside the memory cap, with room left for the gateway), logs of at most 16 MiB kept
    /// three days after their gateway ends; one warm gateway per template; asleep after 15
    /// idle minutes.
    pub fn new(node: String, memory_budget_mb: u64) -> Self {
        AgentboxConfig {
            node,
            memory_mb: 2048,
            memory_budget_mb,
            pids_max: 512,
            credits_per_minute: Money::from_atomic(1_000),
            billing_interval: Duration::from_secs(60),
            health_timeout: Duration::from_secs(90),
            probe_interval: Duration::from_secs(30),
            stop_grace: Duration::from_secs(10),
            home_mb: 512,
            tmp_mb: 256,
            log_cap_mb: 16,
            log_retention: Duration::from_secs(3 * 24 * 3600),
            pool_size: 1,
            idle_sleep: Duration::from_secs(15 * 60),
        }
    }

    /// The price of one billing period, atomic units, rounded up.
    pub fn period_price(&self) -> u64 {
        let millis = self.billing_interval.as_millis();
        let price = (u128::from(self.credits_per_minute.atomic()) * millis).div_ceil(60_000);
        u64::try_from(price).unwrap_or(u64::MAX)
    }
}

/// The sandboxes service.
pub struct Agentbox {
    config: AgentboxConfig,
    store: Store,
    clock: Arc<dyn Clock>,
    /// `None` where sandboxes cannot run here; why.
    backend: Result<Arc<dyn Backend>, String>,
    llm: Arc<svc_llm::Llm>,
    /// Wakes the driver of a gateway this process runs, by gateway id.
    drivers: Mutex<HashMap<String, Arc<Notify>>>,
    /// The last health probe of each running gateway.
    health: Mutex<HashMap<String, bool>>,
    /// The chat-bot channel.
    telegram: telegram::Telegram,
    /// Log streams open, by account.
    log_streams: slots::Slots,
    /// Warm gateways, by template.
    pool: pool::Pool,
}

/// A new gateway's id (its sandbox's too).
pub(crate) fn new_gateway_id() -> String {
    format!("gw_{}", &uuid::Uuid::new_v4().simple().to_string()[..20])
}

/// How often a followed log is looked at for new lines.
pub const LOG_POLL: Duration = Duration::from_millis(250);

/// What a followed log yields ([`Agentbox::follow_log`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEvent {
    /// A whole line, with the log position just after it (where a reader resumes after it).
    Line {
        /// The position after the line.
        after: u64,
        /// The line.
        text: String,
    },
    /// The gateway has ended and its last line was sent.
    End,
}

impl Agentbox {
    /// The service from its `setup` (settings, backend or why there is none, chat channel).
    pub fn new(setup: AgentboxSetup, store: Store, clock: Arc<dyn Clock>, llm: Arc<svc_llm::Llm>) -> Self {
        let AgentboxSetup { config, backend, telegram } = setup;
        let telegram = telegram::Telegram::new(telegram, store.clone(), clock.clone());
        Agentbox {
            config,
            store,
            clock,
            backend,
            llm,
            drivers: Mutex::default(),
            health: Mutex::default(),
            telegram,
            log_streams: slots::Slots::new(MAX_LOG_STREAMS),
            pool: pool::Pool::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &AgentboxConfig {
        &self.config
    }

    /// The chat-bot channel.
    pub fn telegram(&self) -> &telegram::Telegram {
        &self.telegram
    }

    fn backend(&self) -> Result<&Arc<dyn Backend>, AgentboxError> {
        self.backend.as_ref().map_err(|why| AgentboxError::Unavailable(why.clone()))
    }

    /// `GET /api/agentbox/templates`.
    pub fn templates(&self) -> TemplateList {
        TemplateList {
            templates: templates::TEMPLATES
                .iter()
                .map(|t| TemplateView {
                    name: t.name.to_owned(),
                    summary: t.summary.to_owned(),
                    trades: t.trades,
                    scopes: t.scopes().iter().map(|s| s.as_str().to_owned()).collect(),
                    warm: u32::try_from(self.pool.warm(t.name)).unwrap_or(u32::MAX),
                })
                .collect(),
            credits_per_minute: self.config.credits_per_minute,
            memory_mb: self.config.memory_mb,
        }
    }

    /// `POST /api/agentbox/gateway/start`: records the gateway and starts bringing it up in
    /// the background; answers with it in `provisioning`.
    pub async fn start(self: &Arc<Self>, account_id: &str, template_name: &str) -> Result<GatewayView, AgentboxError> {
        let template =
            templates::template(template_name).ok_or_else(|| AgentboxError::UnknownTemplate(template_name.into()))?;
        let backend = self.backend()?;
        backend.snapshot().map_err(AgentboxError::NotPrepared)?;
        if let Some(active) = self.store.active_gateway(account_id).await? {
            return Err(already_active(active));
        }
        let price = self.config.period_price();
        let balance = self.store.account(account_id).await?.map_or(0, |a| a.balance);
        if balance < price {
            return Err(AgentboxError::InsufficientCredits {
                balance: Money::from_atomic(balance),
                price: Money::from_atomic(price),
            });
        }
        let (needed, budget) = (self.config.memory_mb, self.config.memory_budget_mb);
        let warm = if self.may_take_warm(account_id).await? { self.pool.take(template.name) } else { None };
        if warm.is_none() {
            // Warm gateways give way to a start that needs their room.
            while !self.room_for(needed).await {
                if !self.evict_one().await {
                    let reserved = self.store.reserved_gateway_memory(&self.config.node).await?;
                    return Err(AgentboxError::Capacity {
                        reserved_mb: reserved,
                        budget_mb: budget,
                        needed_mb: needed,
                    });
                }
            }
        }
        let id = warm.as_ref().map_or_else(new_gateway_id, |member| member.id.clone());
        let now = self.clock.now_ms();
        let new = NewGateway {
            id: &id,
            account_id,
            template: template.name,
            node: &self.config.node,
            backend: backend.kind(),
            memory_mb: needed,
            now_ms: now,
        };
        let created = match self.store.create_gateway(&new).await {
            // The account's gateway ended between the refusal and the look at it: try once more.
            Err(svc_store::StoreError::Contended(_)) => self.store.create_gateway(&new).await,
            other => other,
        };
        let created = match created {
            Ok(created) => created,
            Err(e) => {
                self.give_back(template.name, warm);
                return Err(e.into());
            }
        };
        if let GatewayCreated::Active(active) = created {
            self.give_back(template.name, warm);
            return Err(already_active(*active));
        }
        // Two starts of different accounts may both have passed the check above; the one
        // that finds the budget exceeded once both are recorded gives way.
        let reserved = self.store.reserved_gateway_memory(&self.config.node).await?;
        if reserved > budget {
            self.store.end_gateway(&id, "failed", Some("no room for another sandbox on this machine"), now).await?;
            return Err(AgentboxError::Capacity {
                reserved_mb: reserved - needed,
                budget_mb: budget,
                needed_mb: needed,
            });
        }
        let record = self.store.gateway(&id).await?.ok_or(AgentboxError::NoGateway("the gateway vanished"))?;
        let notify = self.register(&id);
        let how = match warm {
            Some(member) => pool::Bring::Warm(member),
            None => pool::Bring::Fresh,
        };
        tokio::spawn(Arc::clone(self).drive(record.clone(), notify, how));
        self.view(record).await
    }

    /// Puts back a warm gateway a start took but could not use.
    fn give_back(&self, template: &'static str, warm: Option<pool::Member>) {
        if let Some(member) = warm {
            self.pool.put_back(template, member);
        }
    }

    /// `GET /api/agentbox/gateway`: the account's active gateway, else its latest.
    pub async fn status(&self, account_id: &str) -> Result<GatewayView, AgentboxError> {
        let record = self.store.latest_gateway(account_id).await?.ok_or(AgentboxError::NoGateway(NO_GATEWAY))?;
        self.view(record).await
    }

    /// `POST /api/agentbox/gateway/stop`: asks the account's active gateway to stop.
    pub async fn stop(&self, account_id: &str) -> Result<GatewayView, AgentboxError> {
        let record = self.store.active_gateway(account_id).await?.ok_or(AgentboxError::NoGateway(NO_ACTIVE))?;
        self.store.request_gateway_stop(&record.id, "stopped by its owner", self.clock.now_ms()).await?;
        self.wake(&record.id);
        let record = self.store.gateway(&record.id).await?.unwrap_or(record);
        self.view(record).await
    }

    /// The gateway whose log `account_id` may read: its active one, else its latest.
    pub async fn log_target(&self, account_id: &str) -> Result<GatewayRecord, AgentboxError> {
        self.backend()?;
        self.store.latest_gateway(account_id).await?.ok_or(AgentboxError::NoGateway(NO_GATEWAY))
    }

    /// A slot for one more log stream of `account_id`, while it holds fewer than
    /// [`MAX_LOG_STREAMS`].
    pub fn open_log_stream(&self, account_id: &str) -> Result<slots::Slot, AgentboxError> {
        self.log_streams.take(account_id).ok_or(AgentboxError::TooManyStreams)
    }

    /// Log lines of gateway `id` from position `from`.
    pub async fn read_log(&self, id: &str, from: u64) -> Result<backend::LogChunk, AgentboxError> {
        Ok(self.backend()?.read_log(id, from, 64 * 1024).await?)
    }

    /// Follows gateway `id`'s log from position `from`: its lines as they are written (looked
    /// for every [`LOG_POLL`]), then [`LogEvent::End`] once the gateway has stopped or failed
    /// and its last line is sent. `held` (the stream's slot) is kept as long as the stream.
    pub fn follow_log(
        self: &Arc<Self>,
        id: String,
        from: u64,
        held: slots::Slot,
    ) -> impl futures::Stream<Item = LogEvent> + use<> {
        let agentbox = Arc::clone(self);
        let stream = futures::stream::unfold((from, false), move |(pos, done)| {
            let agentbox = agentbox.clone();
            let id = id.clone();
            // Held by the stream: the account's slot comes back when the client goes.
            let _held = &held;
            async move {
                if done {
                    return None;
                }
                let mut pos = pos;
                loop {
                    // Whether it had ended before this read: then what the read finds is the last.
                    let ended = agentbox.ended(&id).await.unwrap_or(true);
                    let chunk = match agentbox.read_log(&id, pos).await {
                        Ok(chunk) => chunk,
                        Err(e) => {
                            tracing::warn!(gateway = %id, error = %e, "could not read a gateway log");
                            return None;
                        }
                    };
                    if !chunk.lines.is_empty() {
                        let events: Vec<LogEvent> =
                            chunk.lines.into_iter().map(|(after, text)| LogEvent::Line { after, text }).collect();
                        pos = chunk.next;
                        return Some((futures::stream::iter(events), (pos, false)));
                    }
                    if ended {
                        return Some((futures::stream::iter(vec![LogEvent::End]), (pos, true)));
                    }
                    tokio::time::sleep(LOG_POLL).await;
                }
            }
        });
        futures::StreamExt::flatten(stream)
    }

    /// Where reading the newest `lines` lines of gateway `id`'s log starts.
    pub async fn recent_start(&self, id: &str, lines: usize) -> Result<u64, AgentboxError> {
        let backend = self.backend()?;
        let len = backend.log_len(id).await;
        let from = len.saturating_sub(64 * 1024);
        let chunk = backend.read_log(id, from, 64 * 1024).await?;
        // Where each line starts; a first line the window may have cut is left out.
        let mut starts: Vec<u64> =
            std::iter::once(from).chain(chunk.lines.iter().map(|l| l.0)).take(chunk.lines.len()).collect();
        if from > 0 && !starts.is_empty() {
            starts.remove(0);
        }
        let keep = starts.len().saturating_sub(lines);
        Ok(starts.get(keep).copied().unwrap_or(chunk.next))
    }

    /// Whether gateway `id` has ended (the log stream then finishes).
    pub async fn ended(&self, id: &str) -> Result<bool, AgentboxError> {
        Ok(self.store.gateway(id).await?.is_none_or(|g| !g.is_active()))
    }

    async fn view(&self, record: GatewayRecord) -> Result<GatewayView, AgentboxError> {
        let burnt = self.store.gateway_credits_burnt(&record.id).await?;
        let running = record.state == "running";
        let health = match self.health().get(&record.id) {
            Some(true) if running => "healthy",
            Some(false) if running => "unhealthy",
            _ => "unknown",
        };
        let here = record.node == self.config.node && record.is_active();
        let asleep = here && self.backend.as_ref().is_ok_and(|backend| backend.asleep(&record.id));
        let memory_bytes = match (&self.backend, record.is_active()) {
            (Ok(backend), true) if record.node == self.config.node => match backend.status(&record.id).await {
                backend::SandboxStatus::Running { memory_bytes } => memory_bytes,
                _ => None,
            },
            _ => None,
        };
        Ok(GatewayView {
            template: record.template,
            state: record.state,
            reason: record.reason,
            health: health.to_owned(),
            asleep,
            created_at: Timestamp(rfc3339(record.created_at)),
            started_at: record.started_at.map(|t| Timestamp(rfc3339(t))),
            ended_at: record.ended_at.map(|t| Timestamp(rfc3339(t))),
            memory_bytes,
            memory_limit_mb: record.memory_mb,
            credits_burnt: Money::from_atomic(burnt),
            credits_per_minute: self.config.credits_per_minute,
            logs: LOGS_PATH.to_owned(),
            id: record.id,
        })
    }

    fn register(&self, id: &str) -> Arc<Notify> {
        let notify = Arc::new(Notify::new());
        self.drivers().insert(id.to_owned(), Arc::clone(&notify));
        notify
    }

    fn wake(&self, id: &str) {
        if let Some(notify) = self.drivers().get(id) {
            notify.notify_one();
        }
    }

    fn drivers(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Notify>>> {
        self.drivers.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn health(&self) -> std::sync::MutexGuard<'_, HashMap<String, bool>> {
        self.health.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

const NO_GATEWAY: &str = "this account has no gateway; start one with POST /api/agentbox/gateway/start";
const NO_ACTIVE: &str = "this account has no running gateway";

fn already_active(active: GatewayRecord) -> AgentboxError {
    AgentboxError::AlreadyActive { id: active.id, state: active.state, template: active.template }
}

/// What the service is built from: its settings and its backend, or why there is none here.
pub struct AgentboxSetup {
    /// The settings.
    pub config: AgentboxConfig,
    /// The backend, or why sandboxes cannot run on this server.
    pub backend: Result<Arc<dyn Backend>, String>,
    /// The chat-bot channel's platform, address and sealing key.
    pub telegram: telegram::TelegramConfig,
}

impl AgentboxSetup {
    /// No sandboxes on this server, for `why`: every sandbox route answers 503 saying so.
    pub fn unavailable(why: impl Into<String>) -> Self {
        AgentboxSetup {
            config: AgentboxConfig::new("local".into(), 0),
            backend: Err(why.into()),
            telegram: telegram::TelegramConfig {
                api_url: "https://api.telegram.org".into(),
                public_url: "http://127.0.0.1:8402".into(),
                sealed: std::sync::Arc::new(sealed::SecretBox::ephemeral()),
            },
        }
    }
}
