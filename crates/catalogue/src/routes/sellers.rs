//! Sellers: anyone signed in registers an agent of theirs (an HTTPS endpoint that answers
//! JSON), sells its invokes over x402 at a price of their choosing, watches the revenue and
//! withdraws it; agents with paid calls are listed on the marketplace.
//!
//! The seller routes hang off the base address (`/agents/...`), as the contract has them. They
//! take a sign-in token or an API key with the `agents` scope, and every answer is the
//! caller's own: another seller's agent is the same 404 as one that does not exist. The paid
//! invoke (`POST /x402/agents/{agent_id}/invoke`) is served beside the route table, since its
//! price and input schema are the seller's; its OpenAPI entry is
//! [`crate::openapi::invoke_operation`].

use crate::ids;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use svc_domain::Money;

use super::common::{NoInput, Timestamp};
use crate::input::{FieldError, Loc};
use crate::route::{Access, HttpMethod};
use crate::{InputSource, RouteInput, RouteSpec};

/// How every seller agent's id starts (`agt_` and 32 hex digits).
pub const AGENT_ID_PREFIX: &str = "agt_";

/// Where a seller agent's paid invoke hangs.
pub const INVOKE_PATH: &str = "/x402/agents/{agent_id}/invoke";

/// The scope an API key needs on the seller routes.
const AGENTS: &[&str] = &["agents"];

/// The seller and marketplace routes.
pub fn routes() -> Vec<RouteSpec> {
    let seller = |spec: RouteSpec| spec.for_account(Access::Account).key_scopes(AGENTS).tag("sellers");
    let market = |spec: RouteSpec| spec.for_account(Access::Free).tag("marketplace");
    vec![
        seller(RouteSpec::post::<AgentRequest, AgentCreated>(
            ids::sellers::CREATE,
            "/agents",
            "Registers an agent: its listing, the JSON Schema its invokes take (default {query: string}) and the \
             HTTPS endpoint svc forwards paid invokes to, signed with a per-agent secret that this answer shows \
             once. Sell it with PUT /agents/{agent_id}/x402-config.",
        )),
        seller(RouteSpec::get::<NoInput, AgentList>(ids::sellers::LIST, "/agents", "The caller's agents.")),
        seller(RouteSpec::get::<AgentId, AgentView>(
            ids::sellers::GET,
            "/agents/{agent_id}",
            "One of the caller's agents.",
        )),
        seller(RouteSpec::new::<AgentPatch, AgentView>(
            ids::sellers::UPDATE,
            HttpMethod::Patch,
            "/agents/{agent_id}",
            InputSource::Body,
            "Changes an agent's listing, input schema, endpoint or timeout; fields left out stay as they are.",
        )),
        seller(RouteSpec::delete::<AgentId, AgentDeleted>(
            ids::sellers::DELETE,
            "/agents/{agent_id}",
            "Deletes an agent: its invokes and listing end at once. Refused (409) while it holds a balance; \
             withdraw it first. Its payouts and records stay.",
        )),
        seller(
            RouteSpec::post::<AgentId, SecretRotated>(
                ids::sellers::ROTATE_SECRET,
                "/agents/{agent_id}/secret",
                "Replaces the agent's signing secret and shows the new one once; the old one stops signing at once.",
            )
            .source(InputSource::OptionalBody),
        ),
        seller(RouteSpec::get::<AgentId, X402Config>(
            ids::sellers::CONFIG,
            "/agents/{agent_id}/x402-config",
            "The agent's x402 config: whether invokes are sold, the price, the payout wallet, limits and \
             auto-withdraw.",
        )),
        seller(RouteSpec::put::<X402ConfigRequest, X402Config>(
            ids::sellers::CONFIG_SET,
            "/agents/{agent_id}/x402-config",
            "Sets the agent's x402 config: enabled, pricing {model: per_request, amount, currency: USDC}, \
             wallet_address and its network, limits {max_requests_per_day, rate_limit_per_minute} and \
             auto_withdraw {enabled, threshold, destination}.",
        )),
        seller(RouteSpec::get::<AgentId, Revenue>(
            ids::sellers::REVENUE,
            "/agents/{agent_id}/revenue",
            "The agent's revenue, net of the platform fee: total earned, paid calls, today (UTC) and this ISO \
             week, the withdrawable balance, revenue from payments only verified (never withdrawable) and \
             payouts not yet paid.",
        )),
        seller(RouteSpec::post::<WithdrawRequest, WithdrawalView>(
            ids::sellers::WITHDRAW,
            "/agents/{agent_id}/withdrawals",
            "Withdraws part or all of the agent's balance in USDC to the config's wallet (or `destination`). \
             Never more than the balance, however many requests race.",
        )),
        seller(RouteSpec::get::<AgentId, WithdrawalList>(
            ids::sellers::WITHDRAWALS,
            "/agents/{agent_id}/withdrawals",
            "The agent's payouts, newest first, with their status and transaction.",
        )),
        market(RouteSpec::get::<MarketplaceQuery, MarketplacePage>(
            ids::marketplace::AGENTS,
            "/marketplace/agents",
            "Agents for sale: x402 enabled, described, and paid for at least once. Filter by category, tag and \
             text; most called first; paginated.",
        )),
        market(RouteSpec::get::<AgentId, MarketplaceAgent>(
            ids::marketplace::AGENT,
            "/marketplace/agents/{agent_id}",
            "One listed agent: what it does, examples, its input schema, price and where to invoke it.",
        )),
    ]
}

/// An agent named by the path.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct AgentId {
    /// The agent's id.
    #[garde(length(max = 64))]
    pub agent_id: String,
}

impl RouteInput for AgentId {}

/// One example of an agent's work, shown in its listing and previews.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// A body an invoke could send.
    pub input: Value,
    /// What the agent answers to it.
    pub output: Value,
}

/// Input of `POST /agents`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct AgentRequest {
    /// A display name, 1 to 100 characters.
    #[garde(length(chars, min = 1, max = 100))]
    pub name: String,
    /// The HTTPS URL svc POSTs each paid invoke's JSON body to.
    #[garde(length(max = 2048))]
    pub endpoint: String,
    /// What the agent does, for the marketplace (listed from 20 characters; at most 2,000).
    #[serde(default)]
    #[garde(length(chars, max = 2000))]
    pub description: String,
    /// Listing category (e.g. `research`, `trading`).
    #[serde(default)]
    #[garde(length(chars, max = 50))]
    pub category: String,
    /// Listing tags, at most 20 of at most 32 characters.
    #[serde(default)]
    #[garde(length(max = 20), inner(length(chars, min = 1, max = 32)))]
    pub tags: Vec<String>,
    /// Examples `{input, output}`, at most 10.
    #[serde(default)]
    #[garde(length(max = 10))]
    pub examples: Vec<Example>,
    /// What it can do, at most 20 of at most 100 characters.
    #[serde(default)]
    #[garde(length(max = 20), inner(length(chars, min = 1, max = 100)))]
    pub capabilities: Vec<String>,
    /// The JSON Schema an invoke's body must match (an object schema of at most 4 KiB, with no
    /// references to other documents); default `{query: string}`.
    #[serde(default)]
    #[garde(skip)]
    pub input_schema: Option<Value>,
    /// Seconds the endpoint gets to answer, 1 to 60 (default 30).
    #[serde(default)]
    #[garde(range(min = 1, max = 60))]
    pub timeout_secs: Option<u64>,
}

impl RouteInput for AgentRequest {
    fn check(&self) -> Vec<FieldError> {
        let (name, description, category) = (Some(&self.name), Some(&self.description), Some(&self.category));
        seller_text(name, description, category, Some(&self.tags), Some(&self.capabilities))
    }
}

/// What a seller writes is shown to buyers and agents (the marketplace, `llms.txt`, challenges,
/// skills): each piece one line of characters that show ([`svc_domain::text`]), refused with
/// the field named otherwise.
fn seller_text(
    name: Option<&String>,
    description: Option<&String>,
    category: Option<&String>,
    tags: Option<&Vec<String>>,
    capabilities: Option<&Vec<String>>,
) -> Vec<FieldError> {
    let mut texts: Vec<(Vec<Loc>, &String)> = Vec::new();
    for (field, text) in [("name", name), ("description", description), ("category", category)] {
        texts.extend(text.map(|t| (vec![Loc::from(field)], t)));
    }
    for (field, list) in [("tags", tags), ("capabilities", capabilities)] {
        texts.extend(list.into_iter().flatten().enumerate().map(|(i, t)| (vec![Loc::from(field), Loc::Index(i)], t)));
    }
    texts
        .into_iter()
        .filter_map(|(loc, text)| {
            svc_domain::text::check_line(text).err().map(|why| FieldError::new(loc, why.to_string(), "value_error"))
        })
        .collect()
}

/// Input of `PATCH /agents/{agent_id}`: the fields to change.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct AgentPatch {
    /// The agent's id.
    #[garde(length(max = 64))]
    pub agent_id: String,
    /// A new display name, 1 to 100 characters.
    #[garde(length(chars, min = 1, max = 100))]
    pub name: Option<String>,
    /// A new HTTPS URL svc POSTs each paid invoke's JSON body to.
    #[garde(length(max = 2048))]
    pub endpoint: Option<String>,
    /// A new description, for the marketplace (listed from 20 characters; at most 2,000).
    #[garde(length(chars, max = 2000))]
    pub description: Option<String>,
    /// A new listing category (e.g. `research`, `trading`).
    #[garde(length(chars, max = 50))]
    pub category: Option<String>,
    /// New listing tags, at most 20 of at most 32 characters.
    // garde's `inner` on an `Option` reaches the list, schemars' the list's items: each says it its way.
    #[garde(length(max = 20), inner(inner(length(chars, min = 1, max = 32))))]
    #[schemars(inner(length(min = 1, max = 32)))]
    pub tags: Option<Vec<String>>,
    /// New examples `{input, output}`, at most 10.
    #[garde(length(max = 10))]
    pub examples: Option<Vec<Example>>,
    /// What it can do, anew: at most 20 of at most 100 characters.
    // garde's `inner` on an `Option` reaches the list, schemars' the list's items: each says it its way.
    #[garde(length(max = 20), inner(inner(length(chars, min = 1, max = 100))))]
    #[schemars(inner(length(min = 1, max = 100)))]
    pub capabilities: Option<Vec<String>>,
    /// A new JSON Schema an invoke's body must match (an object schema of at most 4 KiB).
    #[garde(skip)]
    pub input_schema: Option<Value>,
    /// New seconds the endpoint gets to answer, 1 to 60.
    #[garde(range(min = 1, max = 60))]
    pub timeout_secs: Option<u64>,
}

impl RouteInput for AgentPatch {
    fn check(&self) -> Vec<FieldError> {
        let (name, description, category) = (self.name.as_ref(), self.description.as_ref(), self.category.as_ref());
        seller_text(name, description, category, self.tags.as_ref(), self.capabilities.as_ref())
    }
}

/// What the marketplace shows of an agent, as its seller wrote it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Listing {
    /// Display name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Category.
    pub category: String,
    /// Tags.
    pub tags: Vec<String>,
    /// Examples of its work.
    pub examples: Vec<Example>,
    /// What it can do.
    pub capabilities: Vec<String>,
    /// The JSON Schema an invoke's body must match.
    pub input_schema: Value,
}

/// An agent, as its seller sees it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgentView {
    /// Opaque id.
    pub id: String,
    /// What it is, as its listing says.
    #[serde(flatten)]
    pub about: Listing,
    /// Where paid invokes are forwarded.
    pub endpoint: String,
    /// Seconds the endpoint gets to answer.
    pub timeout_secs: u64,
    /// The x402 config, once set.
    pub x402: Option<X402Config>,
    /// Where buyers invoke it.
    pub invoke_url: String,
    /// Whether the marketplace lists it now, and if not, why not.
    pub listing: ListingStatus,
    /// When it was registered.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// Whether an agent is listed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ListingStatus {
    /// Listed on the marketplace now.
    pub listed: bool,
    /// What is missing, when not (x402 off, description too short or long, no paid call yet).
    pub missing: Vec<String>,
}

/// The answer to `POST /agents`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgentCreated {
    /// The agent.
    pub agent: AgentView,
    /// How svc signs what it forwards, and the secret to check it with (shown only here).
    pub signing: Signing,
}

/// The answer to `POST /agents/{agent_id}/secret`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SecretRotated {
    /// The agent's id.
    pub agent_id: String,
    /// The new secret (shown only here) and how it signs.
    pub signing: Signing,
}

/// How svc signs a forwarded invoke.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Signing {
    /// The secret (`whsec_...`): keep it; it is never shown again.
    pub secret: String,
    /// The header the signature comes in.
    pub header: String,
    /// How to check it.
    pub scheme: String,
}

/// The caller's agents.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgentList {
    /// Oldest first.
    pub agents: Vec<AgentView>,
}

/// The answer to `DELETE /agents/{agent_id}`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgentDeleted {
    /// The agent's id.
    pub id: String,
    /// Always true.
    pub deleted: bool,
}

/// How an invoke is priced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PricingModel {
    /// One price per invoke.
    PerRequest,
}

/// The currency of a price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Currency {
    /// USD Coin.
    #[serde(rename = "USDC")]
    Usdc,
}

/// An agent's price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pricing {
    /// `per_request`.
    pub model: PricingModel,
    /// The price of one invoke, a decimal string with at most 6 places (e.g. `"0.05"`).
    pub amount: Money,
    /// `USDC`.
    pub currency: Currency,
}

/// An agent's limits, checked before any payment is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct SellerLimits {
    /// Invokes per UTC day, across every buyer (at least 1).
    #[garde(range(min = 1, max = 100_000_000))]
    pub max_requests_per_day: u64,
    /// Invokes per minute, across every buyer (at least 1).
    #[garde(range(min = 1, max = 1_000_000))]
    pub rate_limit_per_minute: u32,
}

impl Default for SellerLimits {
    /// The contract's example values.
    fn default() -> Self {
        SellerLimits { max_requests_per_day: 10_000, rate_limit_per_minute: 60 }
    }
}

/// Automatic payouts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AutoWithdraw {
    /// On or off.
    pub enabled: bool,
    /// Once the balance passes this (USDC), all of it is paid out.
    pub threshold: Money,
    /// Where to (default: the config's wallet).
    #[serde(default)]
    pub destination: Option<String>,
}

/// Input of `PUT /agents/{agent_id}/x402-config`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct X402ConfigRequest {
    /// The agent's id.
    #[garde(length(max = 64))]
    pub agent_id: String,
    /// Whether invokes are sold (and the agent can be listed).
    #[garde(skip)]
    pub enabled: bool,
    /// The price.
    #[garde(skip)]
    pub pricing: Pricing,
    /// The wallet payouts go to: a checksummed or lower-case `0x` address.
    #[garde(length(max = 64))]
    pub wallet_address: String,
    /// The wallet's network: `ethereum` (the EVM network svc pays out on), a configured network's
    /// name (`base`, `base-sepolia`) or its CAIP-2 id. Default: the EVM network svc pays out on.
    #[serde(default)]
    #[garde(length(max = 64))]
    pub network: Option<String>,
    /// Limits (default: 10,000 a day, 60 a minute).
    #[serde(default)]
    #[garde(dive)]
    pub limits: Option<SellerLimits>,
    /// Automatic payouts (default: off).
    #[serde(default)]
    #[garde(skip)]
    pub auto_withdraw: Option<AutoWithdraw>,
}

impl RouteInput for X402ConfigRequest {
    fn check(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if self.pricing.amount == Money::ZERO {
            errors.push(FieldError::new(
                vec!["pricing".into(), "amount".into()],
                "the price must be more than 0",
                "greater_than",
            ));
        }
        if let Some(auto) = &self.auto_withdraw
            && auto.enabled
            && auto.threshold == Money::ZERO
        {
            errors.push(FieldError::new(
                vec!["auto_withdraw".into(), "threshold".into()],
                "the threshold must be more than 0",
                "greater_than",
            ));
        }
        errors
    }
}

/// An agent's x402 config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct X402Config {
    /// Whether invokes are sold.
    pub enabled: bool,
    /// The price.
    pub pricing: Pricing,
    /// The payout wallet.
    pub wallet_address: String,
    /// Its network, CAIP-2.
    pub network: String,
    /// Limits.
    pub limits: SellerLimits,
    /// Automatic payouts.
    pub auto_withdraw: AutoWithdraw,
}

/// An agent's revenue. Amounts are net of the platform fee, decimal strings.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Revenue {
    /// Everything earned, settled or not.
    pub total_earned: Money,
    /// `USDC`.
    pub currency: String,
    /// Paid invokes that earned.
    pub transactions_count: u64,
    /// Earned today (UTC).
    pub today: Money,
    /// Earned this ISO week (from Monday, UTC).
    pub this_week: Money,
    /// Settled revenue not yet withdrawn: what can be withdrawn.
    pub balance: Money,
    /// Revenue from payments that were only verified, never settled on chain (svc running
    /// verify-only): shown apart, never withdrawable.
    pub unsettled: Money,
    /// Payouts asked for and not yet paid.
    pub pending_payouts: Money,
    /// The platform's fee, basis points of each price.
    pub fee_bps: u32,
}

/// Input of `POST /agents/{agent_id}/withdrawals`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct WithdrawRequest {
    /// The agent's id.
    #[garde(length(max = 64))]
    pub agent_id: String,
    /// How much, USDC (at most the balance).
    #[garde(skip)]
    pub amount: Money,
    /// Where to (default: the config's wallet).
    #[serde(default)]
    #[garde(length(max = 64))]
    pub destination: Option<String>,
}

impl RouteInput for WithdrawRequest {
    fn check(&self) -> Vec<FieldError> {
        if self.amount == Money::ZERO {
            return vec![FieldError::new(vec!["amount".into()], "the amount must be more than 0", "greater_than")];
        }
        Vec::new()
    }
}

/// A payout.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WithdrawalView {
    /// Its id.
    pub id: String,
    /// USDC.
    pub amount: Money,
    /// Where it goes.
    pub destination: String,
    /// The network, CAIP-2.
    pub network: String,
    /// `queued` (waiting for svc's sender, or an operator where svc sends nothing on chain),
    /// `sending`, `sent` (transaction known), `paid`, or `failed` (the amount is back in the
    /// balance).
    pub status: String,
    /// Made by auto-withdraw.
    pub automatic: bool,
    /// The transaction, once known.
    pub transaction: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// When it was asked for.
    pub created_at: Timestamp,
    /// When its status last moved.
    pub updated_at: Timestamp,
}

/// An agent's payouts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WithdrawalList {
    /// Newest first (the latest 100).
    pub withdrawals: Vec<WithdrawalView>,
}

/// Input of `GET /marketplace/agents`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct MarketplaceQuery {
    /// Only this category.
    #[serde(default)]
    #[garde(length(max = 50))]
    pub category: Option<String>,
    /// Only agents with this tag.
    #[serde(default)]
    #[garde(length(max = 32))]
    pub tag: Option<String>,
    /// Words the name, description or capabilities must contain (any case).
    #[serde(default)]
    #[garde(length(max = 200))]
    pub q: Option<String>,
    /// Page, from 1.
    #[serde(default)]
    #[garde(range(min = 1, max = 10_000))]
    pub page: Option<u32>,
    /// Agents per page, 1 to 100 (default 20).
    #[serde(default)]
    #[garde(range(min = 1, max = 100))]
    pub per_page: Option<u32>,
}

impl RouteInput for MarketplaceQuery {}

/// A page of listed agents.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MarketplacePage {
    /// Most called first.
    pub agents: Vec<MarketplaceAgent>,
    /// This page.
    pub page: u32,
    /// Agents per page.
    pub per_page: u32,
    /// Agents matching, on every page.
    pub total: u64,
}

/// A listed agent, as buyers see it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MarketplaceAgent {
    /// Its id.
    pub id: String,
    /// What it is, as its listing says.
    #[serde(flatten)]
    pub about: Listing,
    /// The price of one invoke.
    pub price: Pricing,
    /// Paid invokes so far.
    pub paid_calls: u64,
    /// Where to invoke it (x402: 402 first, then pay).
    pub invoke_url: String,
}
