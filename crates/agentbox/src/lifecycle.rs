//! A gateway's life, driven by one task per gateway on the machine that runs it:
//! `provisioning → configuring → starting → health_check → running → stopping → stopped`,
//! or `failed` with the reason from any of them.
//!
//! Each move is a compare-and-set in the store, so a stop asked for mid-start (possibly on
//! another replica) wins over the next step, and the driver turns to stopping. While running,
//! the driver watches the process (a crash is seen within a second), probes `/health` and
//! bills each period in advance; a period the credits do not cover stops the gateway. Every
//! end goes the same way: SIGTERM, the grace period, killed, the key revoked, the sandbox
//! removed, the state recorded. After a restart, [`Agentbox::reconcile`] re-attaches to the
//! sandboxes still running and ends the rest; none is left behind.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use svc_store::{Debit, GatewayRecord};
use tokio::sync::Notify;

use crate::backend::{Credentials, ProcSpec, SandboxStatus};
use crate::layout::GATEWAY_PORT;
use crate::pool::Bring;
use crate::templates;
use crate::{Agentbox, AgentboxError};

/// How a gateway's life ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// Stopped on request; the request's reason stands.
    Stopped,
    /// Stopped by svc, for this reason (credits ran out).
    StoppedBecause(String),
    /// Failed, for this reason.
    Failed(String),
}

/// Consecutive failed probes that fail a running gateway.
const PROBES_TO_FAIL: u32 = 3;
/// How often a gateway's process is looked at.
const WATCH_TICK: Duration = Duration::from_secs(1);

impl Agentbox {
    /// Brings a gateway up as `how` says, watches it, and ends it.
    pub(crate) async fn drive(self: Arc<Self>, gateway: GatewayRecord, notify: Arc<Notify>, how: Bring) {
        let outcome = match how {
            Bring::Fresh => self.bring_up(&gateway, &notify).await,
            Bring::Warm(member) => self.adopt(&gateway, member).await,
            Bring::Attached => Ok(()),
        };
        let end = match outcome {
            Ok(()) => self.watch(&gateway, &notify).await,
            Err(end) => end,
        };
        self.finish(&gateway, end).await;
        self.drivers().remove(&gateway.id);
        self.health().remove(&gateway.id);
    }

    async fn bring_up(&self, gateway: &GatewayRecord, notify: &Notify) -> Result<(), End> {
        let backend = self.backend().map_err(|e| End::Failed(e.to_string()))?;
        let id = gateway.id.as_str();
        let template = template_of(gateway)?;
        let snapshot =
            backend.snapshot().map_err(|dir| End::Failed(format!("the agent snapshot is not prepared in {dir}")))?;

        let spec = self.sandbox_spec(gateway.memory_mb);
        backend.create(id, spec).await.map_err(|e| failed("making the sandbox", e))?;
        let made = format!(
            "sandbox created for template {} ({} MiB of memory; home {} MiB, /tmp {} MiB within it)",
            template.name, spec.memory_mb, spec.home_mb, spec.tmp_mb
        );
        backend.note(id, &made).await;
        self.advance(id, "provisioning", "configuring").await?;

        let api_key = self.mint_key(gateway, template).await?;
        let llm_token = self.llm.token(&gateway.account_id).await.map_err(|e| failed("the LLM token", e))?;
        let models: Vec<&str> = self.llm.models().iter().map(|(alias, _)| alias).collect();
        let svc_url = backend.svc_url();
        let chat = match self.telegram.sandbox_channel(&gateway.account_id).await {
            Ok(chat) => chat,
            Err(e) => {
                tracing::warn!(gateway = id, error = %e, "the account's chat bot could not be read; starting without it");
                None
            }
        };
        let groups = chat.as_ref().map(|(_, groups)| groups.as_slice());
        let files = crate::files::sandbox_files(template, &models, svc_catalogue::catalogue(), &svc_url, groups);
        backend.write_files(id, &files).await.map_err(|e| failed("writing the sandbox's files", e))?;
        backend.note(id, &format!("wrote the agent's config, workspace and {} skills", files.len() - 4)).await;
        let real = Credentials { api_key, llm_token, bot_token: chat.map(|(token, _)| token) };
        let given = backend.credentials(id, real).await.map_err(|e| failed("arming the sandbox's way out", e))?;
        if !backend.holds_real_credentials() {
            backend.note(id, "credentials: the sandbox holds placeholders; svc puts the real ones on its calls").await;
        }
        self.advance(id, "configuring", "starting").await?;

        let env = crate::files::environment(&gateway.id, &gateway.template, &snapshot, &svc_url, &given);
        if given.bot_token.is_some() {
            backend.note(id, "chat bot wired: the agent long-polls svc for its messages").await;
        }
        let process = ProcSpec { argv: snapshot.command.clone(), env };
        let pid = backend.spawn(id, &process).await.map_err(|e| failed("starting the gateway", e))?;
        self.store.set_gateway_pid(id, pid).await.map_err(|e| failed("recording the process", e))?;
        backend.note(id, "gateway process started").await;
        self.advance(id, "starting", "health_check").await?;

        let started = tokio::time::Instant::now();
        loop {
            if self.stop_requested(id).await {
                return Err(End::Stopped);
            }
            if let SandboxStatus::Exited(why) = backend.status(id).await {
                return Err(End::Failed(format!("{why} before it answered its health check")));
            }
            if matches!(backend.get(id, GATEWAY_PORT, "/health").await, Ok(200)) {
                break;
            }
            if started.elapsed() >= self.config.health_timeout {
                return Err(End::Failed(format!(
                    "the gateway did not answer its health check on port {GATEWAY_PORT} within {} s",
                    self.config.health_timeout.as_secs()
                )));
            }
            let _ = tokio::time::timeout(Duration::from_millis(250), notify.notified()).await;
        }
        backend.note(id, &format!("healthy after {} ms", started.elapsed().as_millis())).await;
        if !backend.holds_real_credentials() {
            backend.set_warming(id, true);
            let warmed = self.warm_up(backend.as_ref(), id, &process.env).await;
            backend.set_warming(id, false);
            match warmed {
                Ok((status, ms)) => backend.note(id, &format!("its runtime loaded in {ms} ms ({status})")).await,
                Err(e) => tracing::warn!(gateway = id, error = %e, "could not warm a gateway up; starting it cold"),
            }
        }
        self.begin_running(gateway).await
    }

    /// Takes a warm gateway for `gateway`: its way out armed with the account's credentials,
    /// then the same states a fresh one goes through, each at once.
    async fn adopt(&self, gateway: &GatewayRecord, member: crate::pool::Member) -> Result<(), End> {
        let backend = self.backend().map_err(|e| End::Failed(e.to_string()))?;
        let id = gateway.id.as_str();
        let template = template_of(gateway)?;
        backend.note(id, "taken from the warm pool").await;
        self.advance(id, "provisioning", "configuring").await?;
        let api_key = self.mint_key(gateway, template).await?;
        let llm_token = self.llm.token(&gateway.account_id).await.map_err(|e| failed("the LLM token", e))?;
        let real = Credentials { api_key, llm_token, bot_token: None };
        backend.credentials(id, real).await.map_err(|e| failed("arming the sandbox's way out", e))?;
        backend.note(id, "credentials: the sandbox holds placeholders; svc puts the real ones on its calls").await;
        self.advance(id, "configuring", "starting").await?;
        if let Some(pid) = member.pid {
            self.store.set_gateway_pid(id, Some(pid)).await.map_err(|e| failed("recording the process", e))?;
        }
        self.advance(id, "starting", "health_check").await?;
        if !matches!(backend.get(id, GATEWAY_PORT, "/health").await, Ok(200)) {
            return Err(End::Failed("the warm gateway did not answer its health check".into()));
        }
        self.begin_running(gateway).await
    }

    /// A healthy gateway's first period billed, and it runs.
    async fn begin_running(&self, gateway: &GatewayRecord) -> Result<(), End> {
        let id = gateway.id.as_str();
        self.health().insert(id.to_owned(), true);
        match self.bill(gateway, 0).await {
            Ok(Debit::Taken) => {}
            Ok(Debit::Insufficient { .. }) => return Err(End::StoppedBecause(CREDITS_RAN_OUT.into())),
            Err(e) => return Err(failed("billing", e)),
        }
        self.advance(id, "health_check", "running").await?;
        if let Ok(backend) = self.backend() {
            backend.note(id, "running").await;
        }
        Ok(())
    }

    /// Watches a running gateway until it must end.
    async fn watch(&self, gateway: &GatewayRecord, notify: &Notify) -> End {
        let Ok(backend) = self.backend() else { return End::Failed("the sandbox backend is gone".into()) };
        let id = gateway.id.as_str();
        let mut failures = 0u32;
        let mut next_probe = tokio::time::Instant::now() + self.config.probe_interval;
        let mut billed: Option<u64> = None;
        // Asleep when svc (re)starts watching it: what it slept through is not billed.
        let mut asleep = backend.asleep(id);
        loop {
            let record = match self.store.gateway(id).await {
                Ok(Some(record)) => record,
                Ok(None) => return End::Failed("the gateway's record vanished".into()),
                Err(e) => {
                    tracing::warn!(gateway = id, error = %e, "could not read the gateway; retrying");
                    let _ = tokio::time::timeout(WATCH_TICK, notify.notified()).await;
                    continue;
                }
            };
            if record.state != "running" {
                return End::Stopped;
            }
            match backend.status(id).await {
                SandboxStatus::Running { .. } => {}
                SandboxStatus::Exited(why) => return End::Failed(why),
                SandboxStatus::Missing => return End::Failed("the gateway's sandbox disappeared".into()),
            }
            let interval = i64::try_from(self.config.billing_interval.as_millis()).unwrap_or(i64::MAX).max(1);
            let started = record.started_at.unwrap_or(record.updated_at);
            let due = u64::try_from((self.clock.now_ms() - started).max(0) / interval).unwrap_or(0);
            if asleep {
                if !self.wakes(gateway).await {
                    let _ = tokio::time::timeout(WATCH_TICK, notify.notified()).await;
                    continue;
                }
                if let Err(e) = backend.wake(id).await {
                    return End::Failed(format!("the gateway could not be woken: {e}"));
                }
                asleep = false;
                // The periods it slept through are not billed; the one it wakes in is.
                billed = Some(billed.map_or(due.saturating_sub(1), |b| b.max(due.saturating_sub(1))));
                next_probe = tokio::time::Instant::now() + self.config.probe_interval;
                backend.note(id, "woke up for a chat message").await;
            } else if !self.config.idle_sleep.is_zero()
                && backend.idle_for(id).is_some_and(|idle| idle >= self.config.idle_sleep)
            {
                match backend.sleep(id).await {
                    Ok(true) => {
                        asleep = true;
                        self.health().remove(id);
                        let minutes = self.config.idle_sleep.as_secs() / 60;
                        backend
                            .note(id, &format!("asleep after {minutes} idle minutes; not billed until it wakes"))
                            .await;
                        continue;
                    }
                    Ok(false) => {}
                    Err(e) => tracing::warn!(gateway = id, error = %e, "could not put an idle gateway to sleep"),
                }
            }
            if tokio::time::Instant::now() >= next_probe {
                next_probe = tokio::time::Instant::now() + self.config.probe_interval;
                let healthy = matches!(backend.get(id, GATEWAY_PORT, "/health").await, Ok(200));
                self.health().insert(id.to_owned(), healthy);
                failures = if healthy { 0 } else { failures + 1 };
                if failures >= PROBES_TO_FAIL {
                    return End::Failed(format!(
                        "the gateway stopped answering its health check ({PROBES_TO_FAIL} probes in a row)"
                    ));
                }
            }
            // Every period up to now, each in advance; one missed while svc was down is
            // billed on return, and one billed before is not taken again.
            let from = billed.map_or(0, |b| b + 1);
            for period in from..=due {
                match self.bill(gateway, period).await {
                    Ok(Debit::Taken) => billed = Some(period),
                    Ok(Debit::Insufficient { .. }) => return End::StoppedBecause(CREDITS_RAN_OUT.into()),
                    Err(e) => {
                        tracing::warn!(gateway = id, error = %e, "could not bill the gateway; retrying");
                        break;
                    }
                }
            }
            let _ = tokio::time::timeout(WATCH_TICK, notify.notified()).await;
        }
    }

    /// Ends a gateway: stops its process, revokes its key, removes its sandbox, records how
    /// it ended.
    pub(crate) async fn finish(&self, gateway: &GatewayRecord, end: End) {
        let id = gateway.id.as_str();
        let now = self.clock.now_ms();
        if let End::StoppedBecause(reason) = &end
            && let Err(e) = self.store.request_gateway_stop(id, reason, now).await
        {
            tracing::warn!(gateway = id, error = %e, "could not record the stop");
        }
        if let Ok(backend) = self.backend() {
            backend.note(id, "stopping").await;
            if let Err(e) = backend.terminate(id, self.config.stop_grace).await {
                tracing::warn!(gateway = id, error = %e, "could not stop the gateway's process");
            }
        }
        let key = self.store.gateway(id).await.ok().flatten().and_then(|g| g.key_id).or(gateway.key_id.clone());
        if let Some(key) = key {
            if let Err(e) = self.store.revoke_api_key(&gateway.account_id, &key, self.clock.now_ms()).await {
                tracing::error!(gateway = id, error = %e, "could not revoke the gateway's key");
            }
            // A sandbox that held the account's LLM token itself: a new one, so the old one
            // (which a stranger in the chat could have talked the agent into revealing) stops
            // working. One that held a placeholder revealed nothing.
            if self.backend().is_ok_and(|b| b.holds_real_credentials())
                && let Err(e) = self.llm.rotate(&gateway.account_id).await
            {
                tracing::error!(gateway = id, error = %e, "could not rotate the account's LLM token");
            }
        }
        if let Ok(backend) = self.backend()
            && let Err(e) = backend.destroy(id).await
        {
            tracing::error!(gateway = id, error = %e, "could not remove the sandbox");
        }
        let (state, reason) = match &end {
            End::Stopped => ("stopped", None),
            End::StoppedBecause(reason) => ("stopped", Some(reason.as_str())),
            End::Failed(reason) => ("failed", Some(reason.as_str())),
        };
        match self.store.end_gateway(id, state, reason, self.clock.now_ms()).await {
            Ok(_) => {}
            Err(e) => tracing::error!(gateway = id, error = %e, "could not record the gateway's end"),
        }
        if let Ok(backend) = self.backend() {
            let line = match reason {
                Some(reason) => format!("{state}: {reason}"),
                None => state.to_owned(),
            };
            backend.note(id, &line).await;
        }
        tracing::info!(gateway = id, account = %gateway.account_id, state, reason, "gateway ended");
    }

    /// After a restart: re-attaches to this machine's running gateways, ends those caught
    /// mid-start or gone, and removes sandboxes no gateway owns.
    pub async fn reconcile(self: &Arc<Self>) -> Result<(), AgentboxError> {
        let Ok(backend) = self.backend() else { return Ok(()) };
        let mut kept = HashSet::new();
        for gateway in self.store.active_gateways_on(&self.config.node).await? {
            let end = match gateway.state.as_str() {
                "running" | "stopping" => match backend.attach(&gateway.id).await {
                    Ok(SandboxStatus::Running { .. }) => self.rearm(backend.as_ref(), &gateway).await.err(),
                    Ok(SandboxStatus::Exited(why)) => Some(End::Failed(why)),
                    Ok(SandboxStatus::Missing) => Some(End::Failed("the gateway's sandbox disappeared".into())),
                    Err(e) => Some(End::Failed(format!("could not re-attach to the sandbox: {e}"))),
                },
                _ => Some(End::Failed("svc restarted while the gateway was starting; start it again".into())),
            };
            match end {
                None => {
                    tracing::info!(gateway = %gateway.id, "re-attached to a running gateway");
                    backend.note(&gateway.id, "svc restarted; watching again").await;
                    kept.insert(gateway.id.clone());
                    let notify = self.register(&gateway.id);
                    tokio::spawn(Arc::clone(self).drive(gateway, notify, Bring::Attached));
                }
                Some(end) => {
                    kept.insert(gateway.id.clone());
                    self.finish(&gateway, end).await;
                }
            }
        }
        self.revoke_leftover_keys().await;
        for id in backend.sandboxes().await? {
            if !kept.contains(&id) {
                tracing::warn!(sandbox = %id, "removing a sandbox no gateway owns");
                let _ = backend.terminate(&id, Duration::from_secs(1)).await;
                if let Err(e) = backend.destroy(&id).await {
                    tracing::error!(sandbox = %id, error = %e, "could not remove a sandbox no gateway owns");
                }
            }
        }
        Ok(())
    }

    /// After a restart, arms a re-attached sandbox's way out again. The key's secret died with
    /// the process that minted it, so the gateway gets a new key (the old one revoked first: a
    /// crash midway leaves no working key behind) under the placeholder it already holds.
    async fn rearm(&self, backend: &dyn crate::Backend, gateway: &GatewayRecord) -> Result<(), End> {
        if backend.holds_real_credentials() {
            return Ok(());
        }
        if let Some(old) = &gateway.key_id {
            self.store
                .revoke_api_key(&gateway.account_id, old, self.clock.now_ms())
                .await
                .map_err(|e| failed("revoking its key", e))?;
        }
        let template = template_of(gateway)?;
        let api_key = self.mint_key(gateway, template).await?;
        let llm_token = self.llm.token(&gateway.account_id).await.map_err(|e| failed("the LLM token", e))?;
        let bot_token = self.telegram.sandbox_channel(&gateway.account_id).await.ok().flatten().map(|(token, _)| token);
        let real = Credentials { api_key, llm_token, bot_token };
        backend.credentials(&gateway.id, real).await.map_err(|e| failed("arming the sandbox's way out", e))?;
        Ok(())
    }

    /// The gateway's own API key, with its template's scopes, recorded as the gateway's; its
    /// secret.
    async fn mint_key(&self, gateway: &GatewayRecord, template: &templates::Template) -> Result<String, End> {
        let name = format!("gateway {}", gateway.id);
        let now = self.clock.now_ms();
        let key = svc_accounts::issue_key(&self.store, &gateway.account_id, &name, &template.scopes(), None, now)
            .await
            .map_err(|e| failed("minting the sandbox's key", e))?;
        self.store.set_gateway_key(&gateway.id, &key.record.id).await.map_err(|e| failed("recording the key", e))?;
        Ok(key.secret)
    }

    /// Removes the logs of gateways that ended more than the retention ago; those of this
    /// node's active gateways stay whatever their age.
    pub async fn sweep_logs(&self) -> Result<usize, AgentboxError> {
        let Ok(backend) = self.backend() else { return Ok(0) };
        let keep: HashSet<String> =
            self.store.active_gateways_on(&self.config.node).await?.into_iter().map(|g| g.id).collect();
        let retention = i64::try_from(self.config.log_retention.as_millis()).unwrap_or(i64::MAX);
        let removed = backend.sweep_logs(&keep, self.clock.now_ms().saturating_sub(retention)).await;
        if removed > 0 {
            tracing::info!(removed, "removed the logs of gateways that ended over the retention ago");
        }
        Ok(removed)
    }

    /// Sweeps old logs now and every `every` after.
    pub async fn keep_logs_swept(self: Arc<Self>, every: Duration) {
        loop {
            if let Err(e) = self.sweep_logs().await {
                tracing::warn!(error = %e, "could not sweep old sandbox logs");
            }
            tokio::time::sleep(every).await;
        }
    }

    /// Whether a sleeping gateway has a reason to wake: a chat message waiting for it.
    async fn wakes(&self, gateway: &GatewayRecord) -> bool {
        match self.store.telegram_bot(&gateway.account_id).await {
            Ok(Some(bot)) => self.store.pending_telegram_updates(&bot.token_hash).await.is_ok_and(|n| n > 0),
            _ => false,
        }
    }

    /// Revokes the keys of ended gateways whose revocation failed when they ended.
    pub async fn revoke_leftover_keys(&self) {
        match self.store.unrevoked_gateway_keys(1000).await {
            Ok(keys) => {
                for (account, key) in keys {
                    tracing::warn!(account = %account, key = %key, "revoking the key of an ended gateway");
                    if let Err(e) = self.store.revoke_api_key(&account, &key, self.clock.now_ms()).await {
                        tracing::error!(key = %key, error = %e, "could not revoke the key of an ended gateway");
                    }
                }
            }
            Err(e) => tracing::error!(error = %e, "could not look for keys of ended gateways"),
        }
    }

    /// Moves the gateway on; when it was not where expected, a stop came first.
    async fn advance(&self, id: &str, from: &str, to: &str) -> Result<(), End> {
        match self.store.advance_gateway(id, from, to, self.clock.now_ms()).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(End::Stopped),
            Err(e) => Err(failed("recording its state", e)),
        }
    }

    async fn stop_requested(&self, id: &str) -> bool {
        matches!(self.store.gateway(id).await, Ok(Some(g)) if g.state != "health_check")
    }

    async fn bill(&self, gateway: &GatewayRecord, period: u64) -> Result<Debit, svc_store::StoreError> {
        let price = self.config.period_price();
        if price == 0 {
            return Ok(Debit::Taken);
        }
        self.store.bill_gateway(&gateway.id, &gateway.account_id, period, price, self.clock.now_ms()).await
    }
}

/// Why a gateway is stopped when its account cannot pay the next period.
pub const CREDITS_RAN_OUT: &str = "the account's credits ran out";

/// The gateway's template, or why it cannot run.
fn template_of(gateway: &GatewayRecord) -> Result<&'static templates::Template, End> {
    templates::template(&gateway.template).ok_or_else(|| End::Failed(format!("unknown template {}", gateway.template)))
}

fn failed(what: &str, err: impl std::fmt::Display) -> End {
    tracing::warn!(error = %err, "gateway start failed: {what}");
    End::Failed(format!("{what} failed"))
}
