//! Keeping the warm pool (`pool`) filled: booting warm gateways within the memory budget,
//! replacing those that die waiting, and making room for starts.

use std::sync::Arc;
use std::time::Duration;

use crate::backend::{Credentials, ProcSpec, SandboxSpec, SandboxStatus};
use crate::layout::GATEWAY_PORT;
use crate::pool::Member;
use crate::templates::{self, Template};
use crate::{Agentbox, AgentboxError};

/// How often the pool is looked at: members gone are replaced, missing ones booted.
const TICK: Duration = Duration::from_secs(2);

impl Agentbox {
    /// Keeps every template's pool filled to `pool_size`, one boot at a time, within the memory
    /// budget; replaces members that died waiting.
    pub async fn keep_pool_warm(self: Arc<Self>) {
        if self.config.pool_size == 0 {
            return;
        }
        loop {
            self.tend_pool().await;
            tokio::time::sleep(TICK).await;
        }
    }

    async fn tend_pool(&self) {
        let Ok(backend) = self.backend() else { return };
        if backend.holds_real_credentials() || backend.snapshot().is_err() {
            return;
        }
        let members: Vec<Member> = self.pool.ready().values().flatten().cloned().collect();
        for member in members {
            if !matches!(backend.status(&member.id).await, SandboxStatus::Running { .. }) {
                tracing::warn!(sandbox = %member.id, "a warm gateway ended while it waited; replacing it");
                self.pool.ready().values_mut().for_each(|list| list.retain(|m| m.id != member.id));
                let _ = backend.destroy(&member.id).await;
            }
        }
        for template in &templates::TEMPLATES {
            if self.pool.warm(template.name) >= self.config.pool_size {
                continue;
            }
            if !self.room_for(self.config.memory_mb).await || self.anyone_booting().await {
                return;
            }
            let id = crate::new_gateway_id();
            self.pool.booting().push(id.clone());
            let booted = self.boot_warm(template, id.clone()).await;
            self.pool.booting().retain(|booting| *booting != id);
            match booted {
                Ok(member) => {
                    tracing::info!(sandbox = %member.id, template = template.name, "a warm gateway is ready");
                    self.pool.ready().entry(template.name).or_default().push(member);
                }
                Err((id, why)) => {
                    tracing::warn!(sandbox = %id, template = template.name, error = %why, "a warm gateway failed to boot");
                    let _ = backend.terminate(&id, Duration::from_secs(1)).await;
                    let _ = backend.destroy(&id).await;
                    return;
                }
            }
        }
    }

    /// Whether a gateway of this node is booting for someone: the pool waits, so its own boot
    /// (CPU-heavy) does not slow the start someone is waiting for.
    async fn anyone_booting(&self) -> bool {
        match self.store.active_gateways_on(&self.config.node).await {
            Ok(gateways) => gateways.iter().any(|g| g.state != "running"),
            Err(_) => true,
        }
    }

    /// Whether `needed` MiB more fit this machine's budget, beside its gateways and the pool.
    pub(crate) async fn room_for(&self, needed: u64) -> bool {
        let Ok(reserved) = self.store.reserved_gateway_memory(&self.config.node).await else { return false };
        let pooled = self.pool.held() as u64 * self.config.memory_mb;
        reserved + pooled + needed <= self.config.memory_budget_mb
    }

    /// Ends every warm gateway: when svc stops, as they are not carried across a restart.
    pub async fn drain_pool(&self) {
        while self.evict_one().await {}
        let booting: Vec<String> = self.pool.booting().drain(..).collect();
        if let Ok(backend) = self.backend() {
            for id in booting {
                let _ = backend.terminate(&id, Duration::from_secs(1)).await;
                let _ = backend.destroy(&id).await;
            }
        }
    }

    /// Frees a warm gateway's room for a start that needs it; whether there was one.
    pub(crate) async fn evict_one(&self) -> bool {
        let Some(member) = self.pool.take_any() else { return false };
        if let Ok(backend) = self.backend() {
            let _ = backend.terminate(&member.id, Duration::from_secs(1)).await;
            let _ = backend.destroy(&member.id).await;
        }
        true
    }

    /// Boots one warm gateway of `template`: made, configured and healthy, its way out armed
    /// with nothing that works; on failure its id (to remove) and why.
    async fn boot_warm(&self, template: &'static Template, id: String) -> Result<Member, (String, String)> {
        let fail = |why: String| (id.clone(), why);
        let backend = self.backend().map_err(|e| fail(e.to_string()))?;
        let snapshot = backend.snapshot().map_err(|dir| fail(format!("no snapshot in {dir}")))?;
        backend.create(&id, self.sandbox_spec(self.config.memory_mb)).await.map_err(|e| fail(e.to_string()))?;
        backend.note(&id, &format!("warm gateway booting for template {}", template.name)).await;
        let models: Vec<&str> = self.llm.models().iter().map(|(alias, _)| alias).collect();
        let svc_url = backend.svc_url();
        let files = crate::files::sandbox_files(template, &models, svc_catalogue::catalogue(), &svc_url, None);
        backend.write_files(&id, &files).await.map_err(|e| fail(e.to_string()))?;
        let given = backend.credentials(&id, Credentials::nobody()).await.map_err(|e| fail(e.to_string()))?;
        let env = crate::files::environment(&id, template.name, &snapshot, &svc_url, &given);
        let pid = backend
            .spawn(&id, &ProcSpec { argv: snapshot.command.clone(), env: env.clone() })
            .await
            .map_err(|e| fail(e.to_string()))?;
        let started = tokio::time::Instant::now();
        loop {
            if let SandboxStatus::Exited(why) = backend.status(&id).await {
                return Err(fail(why));
            }
            if matches!(backend.get(&id, GATEWAY_PORT, "/health").await, Ok(200)) {
                break;
            }
            if started.elapsed() >= self.config.health_timeout {
                return Err(fail("no health answer in time".into()));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let healthy = started.elapsed().as_millis();
        let (status, warmed) = self.warm_up(backend.as_ref(), &id, &env).await.map_err(fail)?;
        let line = format!(
            "warm: healthy after {healthy} ms, its runtime loaded in {warmed} ms ({status}); waiting for a start"
        );
        backend.note(&id, &line).await;
        Ok(Member { id, pid })
    }

    /// Runs a first turn through the gateway's own chat endpoint, its model call answered by
    /// its way out (the caller has it warming): the gateway loads its agent runtime on its first turn (seconds), so the
    /// owner's first message is then answered as fast as the next. The status and how long it
    /// took, ms.
    pub(crate) async fn warm_up(
        &self,
        backend: &dyn crate::Backend,
        id: &str,
        env: &[(String, String)],
    ) -> Result<(u16, u128), String> {
        let token = env.iter().find(|(name, _)| name == "SVC_GATEWAY_TOKEN").map_or("", |(_, v)| v.as_str());
        let turn = serde_json::json!({
            "model": "openclaw",
            "user": "svc-warm-up",
            "messages": [{"role": "user", "content": "warm-up"}],
        });
        let warming = tokio::time::Instant::now();
        let status = backend.chat(id, token, &turn.to_string()).await.map_err(|e| e.to_string())?;
        Ok((status, warming.elapsed().as_millis()))
    }

    /// A sandbox's caps from the settings.
    pub(crate) fn sandbox_spec(&self, memory_mb: u64) -> SandboxSpec {
        SandboxSpec {
            memory_mb,
            pids_max: self.config.pids_max,
            home_mb: self.config.home_mb,
            tmp_mb: self.config.tmp_mb,
            log_cap_mb: self.config.log_cap_mb,
        }
    }

    /// Whether a start of `account_id` may take a warm gateway: not when it has a chat bot
    /// (wired into the gateway's config at boot).
    pub(crate) async fn may_take_warm(&self, account_id: &str) -> Result<bool, AgentboxError> {
        if self.config.pool_size == 0 {
            return Ok(false);
        }
        Ok(self.telegram.sandbox_channel(account_id).await?.is_none())
    }
}
