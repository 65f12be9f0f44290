//! LLM-proxy wiring: the token secret, the providers and the model table.

use std::collections::BTreeMap;

use anyhow::Context as _;
use svc_domain::Money;
use svc_llm::{LlmConfig, ModelTable, ProviderConfig, ProviderKind, TokenKey};

use crate::upstreams::SimulatedMarket;

/// The `[llm]` table: the LLM proxy's limits, providers and models. The built-in providers
/// `openai` and `anthropic` are set from the environment (`SVC_LLM_OPENAI_URL`, ...).
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmFile {
    /// Calls per account per minute; 0 turns the limit off.
    #[schemars(extend("default" = defaults().rate_per_minute))]
    pub rate_per_minute: Option<u32>,
    /// USD one account may spend on proxied calls per UTC day; "0" turns the cap off.
    #[schemars(extend("default" = defaults().daily_cap))]
    pub daily_cap_usd: Option<Money>,
    /// USD an automatic top-up buys when the account chose no amount.
    #[schemars(extend("default" = defaults().default_top_up))]
    pub default_top_up_usd: Option<Money>,
    /// Providers added to (or replacing) `openai` and `anthropic`, by name.
    #[serde(default)]
    #[schemars(example = serde_json::json!({"local": {
        "kind": "openai", "base_url": "http://127.0.0.1:8000/v1", "key_env": "LOCAL_LLM_KEY"
    }}))]
    pub providers: BTreeMap<String, ProviderFile>,
    /// The whole model table, by the alias clients ask for; when given it replaces the
    /// default table (shown here) entirely.
    #[schemars(with = "Option<BTreeMap<String, ModelFields>>", example = ModelTable::default())]
    pub models: Option<ModelTable>,
}

/// The proxy's defaults, for the configuration reference.
fn defaults() -> LlmConfig {
    LlmConfig::new(BTreeMap::new())
}

/// One `[llm.models.<alias>]`: what one model costs and allows.
// The table is read as `svc_llm::ModelTable`; this describes it for the configuration
// reference, and a test keeps the two key for key.
#[derive(schemars::JsonSchema)]
#[expect(dead_code, reason = "a description of svc_llm::Model's keys, never built")]
pub struct ModelFields {
    /// The provider (a name in the provider table) that serves it.
    provider: String,
    /// The provider's own name for the model.
    upstream_model: String,
    /// USD per million uncached prompt tokens.
    input_per_million: Money,
    /// USD per million prompt tokens read from the provider's cache.
    cached_input_per_million: Money,
    /// USD per million completion tokens.
    output_per_million: Money,
    /// The most completion tokens one call may produce: what a call that names no limit
    /// holds credits for.
    max_output: u64,
    /// The context window, in tokens.
    context: u64,
}

/// The API a provider speaks.
// Read as `svc_llm::ProviderKind`; this names its values for the configuration reference, and a
// test keeps the two name for name.
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[expect(dead_code, reason = "a description of svc_llm::ProviderKind's names, never built")]
pub enum ProviderKindName {
    /// Any OpenAI-compatible chat-completions API.
    Openai,
    /// Anthropic's Messages API, translated both ways.
    Anthropic,
}

/// One `[llm.providers.<name>]`: a provider beside (or instead of) the built-in ones.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
    /// `openai` (any OpenAI-compatible API) or `anthropic`.
    #[schemars(with = "ProviderKindName")]
    pub kind: ProviderKind,
    /// Base URL, up to and including the version (`…/v1`).
    pub base_url: String,
    /// The environment variable holding its key (keys never sit in the file).
    pub key_env: Option<String>,
}

/// The built-in providers: name, kind, the environment variables of URL and key, and the
/// public address used in production when no URL is set.
const BUILT_IN: [(&str, ProviderKind, &str, &str, &str); 2] = [
    ("openai", ProviderKind::Openai, "SVC_LLM_OPENAI_URL", "SVC_LLM_OPENAI_KEY", "https://openrouter.ai/api/v1"),
    (
        "anthropic",
        ProviderKind::Anthropic,
        "SVC_LLM_ANTHROPIC_URL",
        "SVC_LLM_ANTHROPIC_KEY",
        "https://api.anthropic.com/v1",
    ),
];

/// The proxy's configuration: built-in providers from the environment (the simulated market
/// when their URL is unset, off production), the file's providers and model table, and the
/// token secret `SVC_LLM_TOKEN_SECRET` (environment only; random per process when unset,
/// which `--production` refuses).
pub async fn build(file: LlmFile, production: bool, market: &mut SimulatedMarket) -> anyhow::Result<LlmConfig> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let mut providers = BTreeMap::new();
    let mut simulated = Vec::new();
    for (name, kind, url_var, key_var, public) in BUILT_IN {
        let provider = match (env(url_var), production) {
            (Some(url), _) => ProviderConfig { kind, base_url: url, key: env(key_var) },
            (None, true) => ProviderConfig { kind, base_url: public.to_owned(), key: env(key_var) },
            // The simulated market is started only for a provider left to it.
            (None, false) => {
                simulated.push(name);
                let mut fakes = svc_llm::simulated_providers(&market.base().await?);
                fakes.remove(name).with_context(|| format!("the simulated market has no {name} provider"))?
            }
        };
        providers.insert(name.to_owned(), provider);
    }
    let mut config = LlmConfig::new(providers);
    if !simulated.is_empty() {
        tracing::warn!(providers = ?simulated, "SIMULATED LLM: these providers answer from the simulated market; set SVC_LLM_<PROVIDER>_URL and _KEY for real models");
    }
    for (name, provider) in file.providers {
        let key = match &provider.key_env {
            Some(var) => Some(
                env(var).with_context(|| format!("[llm.providers.{name}] key_env names {var}, which is not set"))?,
            ),
            None => None,
        };
        config.providers.insert(name, ProviderConfig { kind: provider.kind, base_url: provider.base_url, key });
    }
    if let Some(models) = file.models {
        config.models = models;
    }
    if production {
        for (alias, model) in config.models.iter() {
            let keyless = config.providers.get(&model.provider).is_some_and(|p| p.key.is_none());
            anyhow::ensure!(!keyless, "--production: model {alias} uses provider {}, which has no key", model.provider);
        }
    }
    config.token_key = token_key(production)?;
    config.rate_per_minute = file.rate_per_minute.unwrap_or(config.rate_per_minute);
    config.daily_cap = file.daily_cap_usd.unwrap_or(config.daily_cap);
    config.default_top_up = file.default_top_up_usd.unwrap_or(config.default_top_up);
    Ok(config)
}

/// `SVC_LLM_TOKEN_SECRET`, at least 32 bytes.
fn token_key(production: bool) -> anyhow::Result<TokenKey> {
    match std::env::var("SVC_LLM_TOKEN_SECRET") {
        Ok(secret) if secret.len() >= 32 => Ok(TokenKey::new(secret)),
        Ok(_) => anyhow::bail!("SVC_LLM_TOKEN_SECRET must be at least 32 bytes"),
        Err(_) if production => {
            anyhow::bail!("--production needs SVC_LLM_TOKEN_SECRET (at least 32 bytes) for LLM tokens")
        }
        Err(_) => {
            tracing::warn!(
                "SVC_LLM_TOKEN_SECRET is not set: LLM tokens are signed with a random key and end with this process"
            );
            Ok(TokenKey::ephemeral())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `[llm]` example of `docs/llm-proxy.md`, as a reader would copy it.
    fn readme_example() -> &'static str {
        let page = include_str!("../../../docs/llm-proxy.md");
        let section = page.split("\n## Configuration\n").nth(1).expect("a configuration section");
        let block = section.split("```toml\n").nth(1).expect("a TOML example");
        block.split("```").next().expect("a closed block")
    }

    #[test]
    fn the_llm_pages_example_is_a_valid_config() {
        let file: crate::config::FileConfig = toml::from_str(readme_example()).expect("the example parses");
        let llm = file.llm;
        assert_eq!(llm.rate_per_minute, Some(600));
        let models = llm.models.expect("a model table");
        let mut providers: Vec<&str> = BUILT_IN.iter().map(|p| p.0).collect();
        providers.extend(llm.providers.keys().map(String::as_str));
        assert_eq!(models.check(&providers), Ok(()));
        assert_eq!(models.get("svc-default").map(|m| m.provider.as_str()), Some("local"));
    }

    #[test]
    fn the_documented_model_keys_are_the_keys_a_model_has() {
        let table = serde_json::to_value(ModelTable::default()).expect("serializes");
        let model = table.as_object().and_then(|m| m.values().next()).and_then(|m| m.as_object()).expect("a model");
        let schema = schemars::schema_for!(ModelFields).to_value();
        let documented = schema["properties"].as_object().expect("properties");
        let keys = |m: &serde_json::Map<String, serde_json::Value>| m.keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(documented), keys(model));
    }

    #[test]
    fn the_documented_provider_kinds_are_the_ones_the_file_reads() {
        let schema = schemars::schema_for!(ProviderKindName).to_value();
        let names: Vec<serde_json::Value> = schema["oneOf"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.get("const").cloned()).collect())
            .or_else(|| schema["enum"].as_array().cloned())
            .expect("names");
        assert_eq!(names.len(), 2);
        for name in names {
            assert!(serde_json::from_value::<ProviderKind>(name.clone()).is_ok(), "{name}");
        }
    }

    #[test]
    fn a_model_on_an_unknown_provider_is_refused_at_start() {
        let text = readme_example().replace("provider = \"local\"", "provider = \"nowhere\"");
        let file: crate::config::FileConfig = toml::from_str(&text).expect("parses");
        let models = file.llm.models.expect("models");
        assert!(models.check(&["openai", "anthropic", "local"]).is_err());
    }
}
