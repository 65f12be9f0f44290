//! The model table: the aliases clients ask for, the provider model each maps to, and what a
//! token of it costs.
//!
//! Prices are USD per million tokens, held as USDC atomic units per million tokens, so a
//! call's cost is integer arithmetic: `ceil(Σ tokens × price / 1,000,000)` atomic units,
//! never a float, never rounded in the house's favour by more than one unit.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use svc_domain::Money;

/// What one model costs and allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    /// The provider (a name in the provider table) that serves it.
    pub provider: String,
    /// The provider's own name for the model.
    pub upstream_model: String,
    /// USD per million uncached prompt tokens.
    pub input_per_million: Money,
    /// USD per million prompt tokens read from the provider's cache.
    pub cached_input_per_million: Money,
    /// USD per million completion tokens.
    pub output_per_million: Money,
    /// The most completion tokens one call may produce: what a call that names no limit
    /// holds credits for.
    pub max_output: u64,
    /// The context window, in tokens.
    pub context: u64,
}

/// Token counts of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    /// Prompt tokens, cached ones included (as OpenAI counts them).
    pub prompt: u64,
    /// Prompt tokens read from the cache.
    pub cached: u64,
    /// Completion tokens.
    pub completion: u64,
}

impl Model {
    /// What `tokens` cost, atomic units, rounded up.
    pub fn cost(&self, tokens: Tokens) -> u64 {
        let cached = tokens.cached.min(tokens.prompt);
        let uncached = tokens.prompt - cached;
        let micro = u128::from(uncached) * u128::from(self.input_per_million.atomic())
            + u128::from(cached) * u128::from(self.cached_input_per_million.atomic())
            + u128::from(tokens.completion) * u128::from(self.output_per_million.atomic());
        u64::try_from(micro.div_ceil(1_000_000)).unwrap_or(u64::MAX)
    }

    /// The most a call can cost: every prompt token uncached, and `max_output` completion
    /// tokens (the request's own limit when it names a lower one) for each of its `choices`.
    pub fn most(&self, prompt_tokens: u64, requested_output: Option<u64>, choices: u64) -> u64 {
        let output = requested_output.map_or(self.max_output, |n| n.min(self.max_output));
        self.cost(Tokens { prompt: prompt_tokens, cached: 0, completion: output.saturating_mul(choices) })
    }
}

/// Aliases and the models they name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ModelTable(BTreeMap<String, Model>);

/// Why a model table cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    /// No model at all.
    #[error("[llm.models] is empty: name at least one model")]
    Empty,
    /// A model names a provider the provider table does not have.
    #[error("[llm.models.{alias}] names provider {provider:?}, which is not configured (known: {known})")]
    UnknownProvider {
        /// The alias.
        alias: String,
        /// The provider named.
        provider: String,
        /// The providers there are.
        known: String,
    },
    /// A limit of zero would make every call fail.
    #[error("[llm.models.{0}] needs max_output and context above 0")]
    ZeroLimit(String),
}

impl ModelTable {
    /// A table of `models` by alias.
    pub fn new(models: BTreeMap<String, Model>) -> Self {
        ModelTable(models)
    }

    /// The model an alias names.
    pub fn get(&self, alias: &str) -> Option<&Model> {
        self.0.get(alias)
    }

    /// Every alias and its model, by alias.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Model)> {
        self.0.iter().map(|(alias, model)| (alias.as_str(), model))
    }

    /// Checks the table against the providers there are.
    pub fn check(&self, providers: &[&str]) -> Result<(), TableError> {
        if self.0.is_empty() {
            return Err(TableError::Empty);
        }
        for (alias, model) in &self.0 {
            if !providers.contains(&model.provider.as_str()) {
                return Err(TableError::UnknownProvider {
                    alias: alias.clone(),
                    provider: model.provider.clone(),
                    known: providers.join(", "),
                });
            }
            if model.max_output == 0 || model.context == 0 {
                return Err(TableError::ZeroLimit(alias.clone()));
            }
        }
        Ok(())
    }
}

impl Default for ModelTable {
    /// Six aliases: four of svc's own and two bare vendor names. Upstream names are as an
    /// OpenAI-compatible gateway spells them (`vendor/model`) for the `openai` provider, and
    /// as the vendor does for the `anthropic` provider; prices are the vendors' list prices.
    fn default() -> Self {
        // Prices per million tokens (input, cached input, output) in atomic units: constants,
        // not text parsed here, so a typo cannot quietly make a model free.
        let model = |provider: &str, upstream: &str, prices: [u64; 3], max_output: u64, context: u64| Model {
            provider: provider.to_owned(),
            upstream_model: upstream.to_owned(),
            input_per_million: Money::from_atomic(prices[0]),
            cached_input_per_million: Money::from_atomic(prices[1]),
            output_per_million: Money::from_atomic(prices[2]),
            max_output,
            context,
        };
        let mini = model("openai", "openai/gpt-4.1-mini", [400_000, 100_000, 1_600_000], 16_384, 1_047_576);
        let nano = model("openai", "openai/gpt-4.1-nano", [100_000, 25_000, 400_000], 16_384, 1_047_576);
        let reasoning = model("openai", "openai/o4-mini", [1_100_000, 275_000, 4_400_000], 32_768, 200_000);
        let sonnet = model("anthropic", "claude-sonnet-4-5", [3_000_000, 300_000, 15_000_000], 16_384, 200_000);
        let table = [
            ("svc-default", mini.clone()),
            ("svc-fast", nano),
            ("svc-reasoning", reasoning),
            ("svc-smart", sonnet.clone()),
            ("gpt-4.1-mini", mini),
            ("claude-sonnet-4-5", sonnet),
        ];
        let table = table.into_iter().map(|(alias, model)| (alias.to_owned(), model)).collect();
        ModelTable(table)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn model(input: u64, cached: u64, output: u64) -> Model {
        Model {
            provider: "openai".into(),
            upstream_model: "m".into(),
            input_per_million: Money::from_atomic(input),
            cached_input_per_million: Money::from_atomic(cached),
            output_per_million: Money::from_atomic(output),
            max_output: 1000,
            context: 10_000,
        }
    }

    #[test]
    fn a_million_tokens_cost_the_listed_price_and_one_token_rounds_up_to_a_unit() {
        let m = model(400_000, 100_000, 1_600_000);
        assert_eq!(m.cost(Tokens { prompt: 1_000_000, cached: 0, completion: 0 }), 400_000);
        assert_eq!(m.cost(Tokens { prompt: 1_000_000, cached: 1_000_000, completion: 0 }), 100_000);
        assert_eq!(m.cost(Tokens { prompt: 0, cached: 0, completion: 1_000_000 }), 1_600_000);
        assert_eq!(m.cost(Tokens { prompt: 1, cached: 0, completion: 0 }), 1);
        assert_eq!(m.cost(Tokens::default()), 0);
    }

    #[test]
    fn the_most_a_call_can_cost_uses_the_lower_of_its_limit_and_the_models() {
        let m = model(1_000_000, 0, 2_000_000);
        assert_eq!(m.most(0, None, 1), 2_000);
        assert_eq!(m.most(0, None, 3), 6_000);
        assert_eq!(m.most(0, Some(10), 1), 20);
        assert_eq!(m.most(0, Some(1_000_000), 1), 2_000);
    }

    #[test]
    fn the_default_table_has_six_aliases_four_of_them_svc_and_all_on_known_providers() {
        let table = ModelTable::default();
        assert_eq!(table.iter().count(), 6);
        assert_eq!(table.iter().filter(|(a, _)| a.starts_with("svc-")).count(), 4);
        assert_eq!(table.check(&["openai", "anthropic"]), Ok(()));
        assert!(table.iter().all(|(_, m)| m.input_per_million > Money::ZERO));
    }

    proptest! {
        #[test]
        fn cost_never_falls_below_the_exact_price_nor_exceeds_it_by_a_unit(
            prompt in 0u64..10_000_000, cached in 0u64..10_000_000, completion in 0u64..10_000_000,
            input in 0u64..100_000_000, cached_price in 0u64..100_000_000, output in 0u64..100_000_000,
        ) {
            let m = model(input, cached_price, output);
            let tokens = Tokens { prompt, cached, completion };
            let cached = cached.min(prompt);
            let exact = u128::from(prompt - cached) * u128::from(input)
                + u128::from(cached) * u128::from(cached_price)
                + u128::from(completion) * u128::from(output);
            let cost = u128::from(m.cost(tokens));
            prop_assert!(cost * 1_000_000 >= exact);
            prop_assert!(cost * 1_000_000 < exact + 1_000_000);
        }

        #[test]
        fn a_call_never_costs_more_than_its_reservation(
            prompt in 0u64..1_000_000, completion in 0u64..2000, limit in proptest::option::of(0u64..5000),
        ) {
            let m = model(3_000_000, 300_000, 15_000_000);
            let allowed = limit.map_or(m.max_output, |l| l.min(m.max_output));
            let completion = completion.min(allowed);
            let cost = m.cost(Tokens { prompt, cached: 0, completion });
            prop_assert!(cost <= m.most(prompt, limit, 1));
        }
    }
}
