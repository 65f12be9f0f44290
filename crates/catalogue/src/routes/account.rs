//! Accounts: sign-in with a wallet, the account's credits and usage, and its API keys.
//!
//! These routes are free; they say who is calling. Sign-in gives a short-lived token; keys
//! (long-lived, scoped, revocable) are made with that token and spend the account's credits
//! on the `/api/svc-tools/*` twins of the paid routes.

use crate::ids;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_domain::{DiscountTier, Money};

use super::common::{NoInput, Timestamp};
use crate::route::Access;
use crate::{InputSource, RouteInput, RouteSpec, input::FieldError};

/// Scopes of the keys an owner makes for their own tools. A sandbox's key holds none of them,
/// so an agent cannot change its owner's billing or read its owner's secrets.
const OWNER: &[&str] = &["data", "gateway", "agents"];
/// Scopes that may read the account: the owner's, and a sandbox's `gateway:read` (an agent may
/// see the balance it spends).
const READ: &[&str] = &["data", "gateway", "agents", "gateway:read"];

/// The account routes.
pub fn routes() -> Vec<RouteSpec> {
    let route = |spec: RouteSpec, access| spec.for_account(access).tag("account");
    let read = |spec: RouteSpec| route(spec.key_scopes(READ), Access::Account);
    let owner = |spec: RouteSpec| route(spec.key_scopes(OWNER), Access::Account);
    vec![
        RouteSpec::post::<NoInput, SignInNonce>(
            ids::auth::NONCE,
            "/api/auth/nonce",
            "A one-time nonce and the fields of the sign-in-with-Ethereum (EIP-4361) message to sign with it. Free.",
        )
        .source(InputSource::OptionalBody)
        .group(crate::Group::Free)
        .tag("account"),
        RouteSpec::post::<SignInRequest, SignInResponse>(
            ids::auth::VERIFY,
            "/api/auth/verify",
            "Exchanges a signed sign-in message for a short-lived token; opens the wallet's account on first sign-in. Free.",
        )
        .group(crate::Group::Free)
        .tag("account"),
        RouteSpec::post::<CreditPurchase, CreditPurchaseResponse>(
            ids::credits::PURCHASE,
            "/api/x402/credits/purchase",
            "Buys account credits over x402: the price is the amount. Credits go to account_id, or to the paying \
             wallet's account (opened on first purchase). One payment buys once. Amounts above the 1 USD a call \
             x402 clients pay by default need a client told to pay them.",
        )
        .group(crate::Group::Infrastructure)
        .not_data()
        .preview(crate::PreviewPolicy::QuoteOnly)
        .tag("account"),
        read(
            RouteSpec::get::<LedgerQuery, ReceiptList>(
                ids::x402::RECEIPTS,
                "/api/x402/receipts",
                "The signed-in wallet's own paid calls: route, price, discount, network, transaction and status. \
                 Sign in with the paying wallet (POST /api/auth/nonce, then /api/auth/verify).",
            )
        ),
        read(
            RouteSpec::get::<NoInput, AccountView>(
                ids::account::SHOW,
                "/api/account",
                "The calling account: id, wallet and credit balance.",
            )
        ),
        read(
            RouteSpec::get::<LedgerQuery, CreditsView>(
                "account.credits",
                "/api/account/credits",
                "The account's credit balance and its latest ledger entries (grants, purchases, calls, refunds).",
            )
        ),
        read(
            RouteSpec::get::<NoInput, UsageView>(
                ids::account::USAGE,
                "/api/account/usage",
                "The account's credit-billed calls and spend over the trailing 30 days, and its discount tier.",
            )
        ),
        route(
            RouteSpec::get::<NoInput, KeyList>(
                ids::account::KEYS,
                "/api/account/keys",
                "The account's API keys: name, visible prefix, scopes, expiry and revocation. Never the secrets.",
            ),
            Access::SignedIn,
        ),
        route(
            RouteSpec::post::<NewKeyRequest, NewKeyResponse>(
                ids::account::KEY_CREATE,
                "/api/account/keys",
                "Makes an API key. The secret is in this answer only; it is stored as a hash and cannot be shown again.",
            ),
            Access::SignedIn,
        ),
        route(
            RouteSpec::delete::<KeyPath, KeyView>(
                ids::account::KEY_REVOKE,
                "/api/account/keys/{key_id}",
                "Revokes an API key of the account at once.",
            ),
            Access::SignedIn,
        ),
        owner(
            RouteSpec::post::<NoInput, LlmTokenView>(
                ids::account::LLM_TOKEN,
                "/api/account/llm-token",
                "The account's LLM-proxy token, for OpenAI SDKs (api_key) against base_url /api/v1/llm. The same \
                 token every time until it is rotated.",
            )
            .source(InputSource::OptionalBody)
        ),
        route(
            RouteSpec::post::<NoInput, LlmTokenView>(
                ids::account::LLM_TOKEN_ROTATE,
                "/api/account/llm-token/rotate",
                "A new LLM-proxy token for the account; every earlier one stops working at once. Sign-in token \
                 only: a key given to an agent cannot lock its owner out.",
            )
            .source(InputSource::OptionalBody),
            Access::SignedIn,
        ),
        read(
            RouteSpec::get::<NoInput, LlmTopUpView>(
                ids::account::LLM_TOP_UP,
                "/api/account/llm-top-up",
                "The account's automatic top-up for the LLM proxy: whether a payment sent with a proxied call buys \
                 credits, and how many.",
            )
        ),
        owner(
            RouteSpec::put::<LlmTopUpRequest, LlmTopUpView>(
                ids::account::LLM_TOP_UP_SET,
                "/api/account/llm-top-up",
                "Turns automatic top-up on or off and sets its amount. With it on, a proxied call that finds the \
                 credits exhausted is answered 402 with an x402 challenge for that amount; paying it buys the \
                 credits and the call proceeds.",
            )
        ),
    ]
}

/// `POST /api/account/llm-token` and its rotation.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LlmTokenView {
    /// The token: `Authorization: Bearer <token>` on the LLM proxy. A secret; shown to the
    /// account only.
    pub token: String,
    /// The account it bills.
    pub account_id: String,
    /// The OpenAI-compatible base path (`base_url` is this under the service's address).
    pub base_path: String,
}

/// The account's automatic top-up for the LLM proxy.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LlmTopUpView {
    /// Whether a payment sent with a proxied call buys credits for it.
    pub enabled: bool,
    /// Credits one top-up buys, USD.
    pub amount: Money,
}

/// Input of `PUT /api/account/llm-top-up`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct LlmTopUpRequest {
    /// Whether a payment sent with a proxied call buys credits for it.
    #[garde(skip)]
    pub enabled: bool,
    /// Credits one top-up buys, USD (1 to 1000, at most 6 decimals); left out, the amount stays
    /// as it was (at first the server's default, 1 USD unless configured). x402 clients cap what
    /// they pay per call (the official TypeScript client at 1 USD by default), so a larger
    /// top-up needs a client configured to pay it.
    #[serde(default)]
    #[garde(skip)]
    pub amount: Option<Money>,
}

impl RouteInput for LlmTopUpRequest {
    fn check(&self) -> Vec<FieldError> {
        match self.amount {
            Some(amount) if amount < MIN_PURCHASE || amount > MAX_PURCHASE => vec![FieldError::new(
                vec!["amount".into()],
                format!("top up between {MIN_PURCHASE} and {MAX_PURCHASE} USD at a time"),
                "value_error",
            )],
            _ => Vec::new(),
        }
    }
}

/// The LLM proxy's share of `GET /api/account/usage`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LlmUsageView {
    /// Proxied calls charged in the window (running ones included).
    pub calls: u64,
    /// Their prompt tokens.
    pub prompt_tokens: u64,
    /// Their completion tokens.
    pub completion_tokens: u64,
    /// Credits they took, USD (a running call counts what it holds).
    pub spent: Money,
    /// Credits one account may spend on proxied calls per UTC day, USD; absent when uncapped.
    pub daily_cap: Option<Money>,
    /// The latest calls, newest first.
    pub recent: Vec<LlmCallView>,
}

/// One proxied call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LlmCallView {
    /// Call id.
    pub id: String,
    /// The model alias asked for.
    pub model: String,
    /// The provider's model it ran on.
    pub upstream_model: String,
    /// `ok`, `failed` (not charged), `estimated` (the client left before usage came),
    /// `insufficient` (refused: credits), `abandoned` (released unfinished) or `reserved`
    /// (running).
    pub status: String,
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// What it cost, USD.
    pub cost: Money,
    /// From the call to its end, ms.
    pub latency_ms: u64,
    /// When it began.
    pub created_at: Timestamp,
}

/// What a wallet signs to sign in.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SignInNonce {
    /// Put in the message's `Nonce:` line; usable once, until `expires_at`.
    pub nonce: String,
    /// When the nonce stops being accepted.
    pub expires_at: Timestamp,
    /// The message's first line names this domain (`{domain} wants you to sign in ...`).
    pub domain: String,
    /// The message's `URI:` line.
    pub uri: String,
    /// The message's `Chain ID:` line.
    pub chain_id: u64,
    /// The message's statement line.
    pub statement: String,
    /// The whole message for this nonce with `{address}` and `{issued_at}` to fill in, for
    /// clients that do not build EIP-4361 messages themselves.
    pub message_template: String,
}

/// Input of `POST /api/auth/verify`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct SignInRequest {
    /// The EIP-4361 message as signed.
    #[garde(length(min = 1, max = 4096))]
    pub message: String,
    /// The EIP-191 `personal_sign` signature of `message`, 65 bytes as `0x` hex.
    #[garde(length(min = 1, max = 200))]
    pub signature: String,
}

impl RouteInput for SignInRequest {
    fn check(&self) -> Vec<FieldError> {
        let hex = self.signature.strip_prefix("0x").unwrap_or(&self.signature);
        if hex.len() == 130 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            Vec::new()
        } else {
            vec![FieldError::new(
                vec!["signature".into()],
                "a 65-byte signature as 0x and 130 hex digits",
                "value_error",
            )]
        }
    }
}

/// A sign-in token.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SignInResponse {
    /// Send as `Authorization: Bearer <token>` to the account routes.
    pub token: String,
    /// Always `Bearer`.
    pub token_type: String,
    /// When the token stops working; sign in again after.
    pub expires_at: Timestamp,
    /// The account signed in to.
    pub account: AccountView,
}

/// An account as its owner sees it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AccountView {
    /// Account id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// The wallet that signs in for it, lowercase; absent for operator-made accounts.
    pub wallet: Option<String>,
    /// Credits left, USD.
    pub balance: Money,
    /// When the account was opened.
    pub created_at: Timestamp,
}

/// Query of `GET /api/account/credits`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct LedgerQuery {
    /// Entries to list, newest first (1–200, default 50).
    #[serde(default)]
    #[garde(range(min = 1, max = 200))]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
}

impl RouteInput for LedgerQuery {}

/// `GET /api/account/credits`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CreditsView {
    /// Credits left, USD.
    pub balance: Money,
    /// Latest entries, newest first.
    pub entries: Vec<LedgerEntryView>,
}

/// One movement of credits.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LedgerEntryView {
    /// Entry id.
    pub id: String,
    /// `grant`, `purchase`, `call`, `refund` or `rebate`.
    pub kind: String,
    /// Signed amount, USD: positive adds, negative takes.
    pub amount: String,
    /// The route a call or refund was for.
    pub route: Option<String>,
    /// What the entry answers to: the refunded call, the paying transaction, the grant.
    pub reference: Option<String>,
    /// When it was written.
    pub created_at: Timestamp,
}

/// `GET /api/account/usage`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct UsageView {
    /// Credit-billed calls in the window, refunded ones excluded.
    pub calls: u64,
    /// Credits those calls took, USD.
    pub spent: Money,
    /// The window, in days.
    pub window_days: u32,
    /// The discount tier these calls earn.
    pub tier: DiscountTier,
    /// Percent off list prices at this tier.
    pub percent_off: u8,
    /// Calls still needed for the next tier; absent at the top tier.
    pub calls_to_next_tier: Option<u64>,
    /// Calls to the LLM proxy in the same window (billed by token, outside the tiers).
    pub llm: LlmUsageView,
}

/// `GET /api/account/keys`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct KeyList {
    /// Every key of the account, newest first.
    pub keys: Vec<KeyView>,
}

/// An API key without its secret.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct KeyView {
    /// Key id, for revoking.
    pub id: String,
    /// The owner's name for it.
    pub name: String,
    /// Its first characters, to recognise it.
    pub prefix: String,
    /// What it may be used for.
    pub scopes: Vec<KeyScope>,
    /// When it was made.
    pub created_at: Timestamp,
    /// When it stops working, if ever.
    pub expires_at: Option<Timestamp>,
    /// When it was revoked.
    pub revoked_at: Option<Timestamp>,
    /// When it last authorized a call, to the minute; absent if never.
    pub last_used_at: Option<Timestamp>,
}

/// What a key may be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum KeyScope {
    /// The credit-billed data routes (`/api/svc-tools/*`).
    #[serde(rename = "data")]
    Data,
    /// An agent sandbox reading its gateway.
    #[serde(rename = "gateway:read")]
    GatewayRead,
    /// An agent sandbox calling data routes through its gateway.
    #[serde(rename = "gateway:data")]
    GatewayData,
    /// An agent sandbox moving funds from its wallet.
    #[serde(rename = "gateway:wallet_write")]
    GatewayWalletWrite,
    /// Starting, stopping and watching the account's agent gateway.
    #[serde(rename = "gateway")]
    Gateway,
    /// Managing the account's seller agents: configs, revenue, withdrawals.
    #[serde(rename = "agents")]
    Agents,
}

/// Input of `POST /api/account/keys`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct NewKeyRequest {
    /// A name to tell it apart (1–64 characters).
    #[garde(length(chars, min = 1, max = 64))]
    pub name: String,
    /// Scopes; default `["data"]`.
    #[serde(default)]
    #[garde(length(min = 1, max = 5))]
    pub scopes: Option<Vec<KeyScope>>,
    /// Days until it expires (1–365); never when absent.
    #[serde(default)]
    #[garde(range(min = 1, max = 365))]
    pub expires_in_days: Option<u32>,
}

impl RouteInput for NewKeyRequest {}

/// `POST /api/account/keys`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NewKeyResponse {
    /// The whole key. Shown this once; keep it secret.
    pub key: String,
    /// The key as listed from now on.
    pub details: KeyView,
}

/// Path of `DELETE /api/account/keys/{key_id}`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct KeyPath {
    /// The key's id.
    #[garde(length(min = 1, max = 64), pattern(r"^key_[0-9a-f]+$"))]
    pub key_id: String,
}

impl RouteInput for KeyPath {}

/// Input of `POST /api/x402/credits/purchase`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
#[serde(deny_unknown_fields)]
pub struct CreditPurchase {
    /// Credits to buy, in USD (1 to 1000, at most 6 decimals); also the price.
    #[garde(skip)]
    pub amount: Money,
    /// The account to credit; default: the paying wallet's own account.
    #[serde(default)]
    #[garde(length(min = 1, max = 64), pattern(r"^acct_[0-9a-f]+$"))]
    pub account_id: Option<String>,
}

/// Smallest purchase: below it the payment's fees would outweigh the credits.
pub const MIN_PURCHASE: Money = svc_domain::money::MIN_CREDIT_PURCHASE;
/// Largest purchase in one payment.
pub const MAX_PURCHASE: Money = svc_domain::money::MAX_CREDIT_PURCHASE;

impl RouteInput for CreditPurchase {
    fn check(&self) -> Vec<FieldError> {
        if self.amount < MIN_PURCHASE || self.amount > MAX_PURCHASE {
            return vec![FieldError::new(
                vec!["amount".into()],
                format!("buy between {MIN_PURCHASE} and {MAX_PURCHASE} USD of credits"),
                "value_error",
            )];
        }
        Vec::new()
    }

    fn price_units(&self) -> u64 {
        self.amount.atomic()
    }
}

/// `POST /api/x402/credits/purchase`: what the payment bought. It is answered only once the
/// payment has settled, with the credits already on the account.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CreditPurchaseResponse {
    /// The account credited.
    pub account_id: String,
    /// Credits bought, USD.
    pub amount: Money,
    /// The ledger reference of this purchase: the payment, so one payment buys once.
    pub reference: String,
}

/// `GET /api/x402/receipts`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReceiptList {
    /// The wallet whose payments these are.
    pub wallet: String,
    /// Its payments, newest first.
    pub receipts: Vec<Receipt>,
}

/// One paid call.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Receipt {
    /// Payment id.
    pub id: String,
    /// The route paid for.
    pub route: String,
    /// What was paid, USDC.
    pub paid: Money,
    /// The route's list price, where it is one price for every call.
    pub list_price: Option<Money>,
    /// List price less what was paid: the volume discount.
    pub discount: Option<Money>,
    /// Credits given back to the wallet's account because its volume tier earned a discount
    /// on a call paid at list price.
    pub rebate: Option<Money>,
    /// CAIP-2 network.
    pub network: String,
    /// The settlement transaction, once there is one.
    pub transaction: Option<String>,
    /// `reserved`, `settled`, `pending`, `failed`, `released` or `unsettled` (verify-only mode).
    pub status: String,
    /// When the call was paid for.
    pub created_at: Timestamp,
    /// Last change of status.
    pub updated_at: Timestamp,
}
