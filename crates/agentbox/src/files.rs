//! What a sandbox is given: the agent gateway's config, the template's workspace files and
//! the skills generated from the catalogue, and the gateway's environment. No secret is written into any file: the config
//! names the API key and the LLM token by environment variable, and the gateway reads them
//! from its process environment.

use serde_json::json;

use crate::backend::{Credentials, FileSpec};
use crate::layout::{GATEWAY_PORT, HOME, SVC_PORT};
use crate::snapshot::Snapshot;
use crate::templates::{TOOLS_SECTION, Template};

/// The provider name the gateway's config gives svc's LLM proxy.
const PROVIDER: &str = "svc";

/// svc's address as a local sandbox reaches it: the shim's bridge on its loopback.
pub fn local_svc_url() -> String {
    format!("http://127.0.0.1:{SVC_PORT}")
}

/// The files of a sandbox running `template`, with the LLM proxy's `models` (aliases), for a
/// sandbox that reaches svc at `svc_url`; with the account's chat bot when `chat_groups` (the
/// groups it answers in) is given.
pub fn sandbox_files(
    template: &Template,
    models: &[&str],
    catalogue: &svc_catalogue::Catalogue,
    svc_url: &str,
    chat_groups: Option<&[i64]>,
) -> Vec<FileSpec> {
    let workspace = ".openclaw/workspace";
    let skills = svc_catalogue::skills::skill_files(catalogue);
    let mut files = vec![
        FileSpec {
            path: ".openclaw/openclaw.json".into(),
            contents: gateway_config(models, &skills, svc_url, chat_groups).into_bytes(),
        },
        FileSpec { path: format!("{workspace}/IDENTITY.md"), contents: template.identity.as_bytes().to_vec() },
        FileSpec { path: format!("{workspace}/SOUL.md"), contents: template.soul.as_bytes().to_vec() },
        FileSpec {
            path: format!("{workspace}/AGENTS.md"),
            contents: format!("{}{TOOLS_SECTION}", template.rules).into_bytes(),
        },
    ];
    for (name, text) in &skills {
        let filled = svc_catalogue::skills::fill(text, svc_url);
        files.push(FileSpec { path: format!("{workspace}/skills/{name}/SKILL.md"), contents: filled.into_bytes() });
    }
    files
}

/// The agent gateway's config (JSON, which its JSON5 reader takes): loopback only, svc's
/// LLM proxy as its one model provider, its own operator token (random per sandbox, by
/// environment reference), the template's workspace, the generated skills and
/// none of the bundled ones, no idle heartbeat (it would burn credits), no chat channel yet.
fn gateway_config(
    models: &[&str],
    skills: &[(&'static str, String)],
    svc_url: &str,
    chat_groups: Option<&[i64]>,
) -> String {
    let default = models.iter().find(|m| **m == "svc-default").or(models.first()).copied().unwrap_or("svc-default");
    let model_list: Vec<_> =
        models.iter().map(|id| json!({"id": id, "name": id, "contextWindow": 128000, "maxTokens": 4096})).collect();
    let skill_names: Vec<&str> = skills.iter().map(|(name, _)| *name).collect();
    let mut config = json!({
        "gateway": {
            "mode": "local",
            "port": GATEWAY_PORT,
            "bind": "loopback",
            "auth": {"mode": "token", "token": "${SVC_GATEWAY_TOKEN}"},
            // Its OpenAI-compatible chat endpoint, for svc to talk to the agent: on loopback
            // inside the sandbox, reached only through the sandbox's socket on svc's side.
            "http": {"endpoints": {"chatCompletions": {"enabled": true}}},
        },
        "models": {
            "mode": "merge",
            "providers": {
                PROVIDER: {
                    "baseUrl": format!("{svc_url}/api/v1/llm"),
                    "apiKey": "${SVC_LLM_TOKEN}",
                    "api": "openai-completions",
                    "timeoutSeconds": 300,
                    "models": model_list,
                }
            }
        },
        "plugins": {"allow": ["memory-core"], "entries": {"memory-core": {"config": {"dreaming": {"enabled": false}}}}},
        "skills": {"allowBundled": []},
        "agents": {
            "defaults": {
                "model": {"primary": format!("{PROVIDER}/{default}")},
                "workspace": format!("{HOME}/.openclaw/workspace"),
                "skipBootstrap": true,
                "skills": skill_names,
                "heartbeat": {"every": "0m"},
            }
        },
    });
    if let Some(groups) = chat_groups {
        // The bot long-polls svc's Bot-API shim (never the platform, and never a webhook of
        // its own: the platform would post to the sandbox and get 405).
        let groups: serde_json::Map<String, serde_json::Value> =
            groups.iter().map(|id| (id.to_string(), json!({"requireMention": true}))).collect();
        config["channels"] = json!({
            "telegram": {
                "enabled": true,
                "botToken": "${TELEGRAM_BOT_TOKEN}",
                "dmPolicy": "open",
                "allowFrom": ["*"],
                "groupPolicy": "allowlist",
                "groups": groups,
                "streaming": {"mode": "off"},
                "apiRoot": format!("{svc_url}{}", svc_catalogue::routes::agentbox::TELEGRAM_PATH),
            }
        });
        config["plugins"]["allow"] = json!(["memory-core", "telegram"]);
    }
    serde_json::to_string_pretty(&config).unwrap_or_default()
}

/// The gateway's whole environment: svc's address, its credentials (placeholders where the
/// backend swaps them on the way out; by environment only), the agent gateway's own settings.
/// Nothing of svc's environment.
pub(crate) fn environment(
    id: &str,
    template: &str,
    snapshot: &Snapshot,
    svc_url: &str,
    credentials: &Credentials,
) -> Vec<(String, String)> {
    let mut path = snapshot.path.clone();
    path.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(str::to_owned));
    let state = format!("{HOME}/.openclaw");
    [
        ("HOME", HOME.to_owned()),
        ("PATH", path.join(":")),
        ("LANG", "C.UTF-8".to_owned()),
        ("TZ", "UTC".to_owned()),
        ("SVC_API_URL", svc_url.to_owned()),
        (svc_catalogue::skills::API_TOKEN_ENV, credentials.api_key.clone()),
        ("SVC_LLM_TOKEN", credentials.llm_token.clone()),
        ("SVC_LLM_BASE_URL", format!("{svc_url}/api/v1/llm")),
        ("SVC_GATEWAY_ID", id.to_owned()),
        // The gateway's own operator token: only svc (through the sandbox's socket) uses it.
        ("SVC_GATEWAY_TOKEN", format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())),
        ("SVC_TEMPLATE", template.to_owned()),
        ("OPENCLAW_STATE_DIR", state.clone()),
        ("OPENCLAW_CONFIG_PATH", format!("{state}/openclaw.json")),
        ("OPENCLAW_DISABLE_BONJOUR", "1".to_owned()),
        ("OPENCLAW_NO_AUTO_UPDATE", "1".to_owned()),
        ("OPENCLAW_OFFLINE", "1".to_owned()),
        ("OPENCLAW_CONFIG_READONLY", "1".to_owned()),
        ("NO_PROXY", "127.0.0.1,localhost".to_owned()),
    ]
    .into_iter()
    .chain(credentials.bot_token.clone().map(|token| ("TELEGRAM_BOT_TOKEN", token)))
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_name_secrets_by_variable_and_skills_by_the_catalogue() {
        let catalogue = svc_catalogue::catalogue();
        let files = sandbox_files(
            &crate::templates::TEMPLATES[0],
            &["svc-default", "svc-fast"],
            catalogue,
            &local_svc_url(),
            None,
        );
        let config = files.iter().find(|f| f.path.ends_with("openclaw.json")).expect("config");
        let config: serde_json::Value = serde_json::from_slice(&config.contents).expect("json");
        assert_eq!(config["models"]["providers"]["svc"]["apiKey"], "${SVC_LLM_TOKEN}");
        assert_eq!(config["agents"]["defaults"]["model"]["primary"], "svc/svc-default");
        assert_eq!(config["gateway"]["port"], 18789);
        assert_eq!(config["gateway"]["auth"]["token"], "${SVC_GATEWAY_TOKEN}", "its operator token by reference too");
        assert!(config["channels"].is_null(), "no chat channel, so no webhookUrl either");
        let skills = files.iter().filter(|f| f.path.ends_with("SKILL.md")).count();
        assert_eq!(skills, 11, "the eleven skills");
        for file in &files {
            let text = String::from_utf8_lossy(&file.contents);
            assert!(!text.contains("svck_"), "{} holds no key", file.path);
            assert!(!text.contains(svc_catalogue::skills::API_URL_PLACEHOLDER), "{} is filled", file.path);
        }
        let rules = files.iter().find(|f| f.path.ends_with("AGENTS.md")).expect("rules");
        let with_bot = sandbox_files(
            &crate::templates::TEMPLATES[0],
            &["svc-default"],
            catalogue,
            &local_svc_url(),
            Some(&[-100_123]),
        );
        let config: serde_json::Value = serde_json::from_slice(&with_bot[0].contents).expect("json");
        let telegram = &config["channels"]["telegram"];
        assert_eq!(
            (telegram["dmPolicy"].as_str(), telegram["groupPolicy"].as_str()),
            (Some("open"), Some("allowlist"))
        );
        assert_eq!(telegram["botToken"], "${TELEGRAM_BOT_TOKEN}", "the token by reference");
        assert_eq!(telegram["apiRoot"], "http://127.0.0.1:18800/api/agentbox/telegram", "it polls svc");
        assert!(telegram.get("webhookUrl").is_none(), "never a webhook of its own");
        assert!(telegram["groups"].get("-100123").is_some());
        assert!(String::from_utf8_lossy(&rules.contents).contains("$SVC_API_TOKEN"));
    }
}
