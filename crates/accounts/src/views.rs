//! The account routes' answers, as the catalogue defines them: an account, its ledger, its
//! API keys, its usage, its wallet's receipts and the sign-in steps, each read or made here so a handler only passes them on.

use std::collections::HashMap;

use svc_catalogue::routes::account::{
    AccountView, CreditsView, KeyList, KeyScope, KeyView, LedgerEntryView, LlmCallView, LlmUsageView, NewKeyRequest,
    NewKeyResponse, Receipt, ReceiptList, SignInNonce, SignInResponse, UsageView,
};
use svc_catalogue::routes::common::Timestamp;
use svc_catalogue::{Catalogue, PriceRule};
use svc_domain::discount::{DISCOUNT_WINDOW_DAYS, DISCOUNT_WINDOW_MS};
use svc_domain::{DiscountTier, Money, rfc3339};
use svc_store::{Account, ApiKeyRecord, LlmUsage, Store, StoreError};

use crate::Scope;
use crate::auth::{self, SignInConfig};
use crate::credits::{REBATE, rebate_reference};

/// Ledger entries shown when the request names no limit.
const DEFAULT_ENTRIES: u32 = 50;

/// An account as its owner sees it.
pub fn account(account: &Account) -> AccountView {
    AccountView {
        id: account.id.clone(),
        name: account.name.clone(),
        wallet: account.wallet.clone(),
        balance: Money::from_atomic(account.balance),
        created_at: Timestamp(rfc3339(account.created_at)),
    }
}

/// A new sign-in nonce, with the message a wallet signs for it.
pub async fn sign_in_nonce(store: &Store, config: &SignInConfig, now_ms: i64) -> Result<SignInNonce, StoreError> {
    let site = config.site();
    let (domain, uri) = (site.domain().to_owned(), site.uri().to_owned());
    let (nonce, expires_at) = auth::new_nonce(store, config, now_ms).await?;
    Ok(SignInNonce {
        message_template: auth::message_template(&domain, &uri, &nonce),
        nonce,
        expires_at: Timestamp(rfc3339(expires_at)),
        domain,
        uri,
        chain_id: auth::CHAIN_ID,
        statement: auth::STATEMENT.to_owned(),
    })
}

/// The answer to a sign-in that held: a token for the account `found`, and the account.
pub fn signed_in(config: &SignInConfig, found: &Account, now_ms: i64) -> SignInResponse {
    let (token, expires_at) = auth::token_for(config, &found.id, now_ms);
    SignInResponse {
        token,
        token_type: "Bearer".into(),
        expires_at: Timestamp(rfc3339(expires_at)),
        account: account(found),
    }
}

/// The account's balance and its newest `limit` ledger entries (50 when not given).
pub async fn credits(store: &Store, account: &Account, limit: Option<u32>) -> Result<CreditsView, StoreError> {
    let entries = store.ledger(&account.id, limit.unwrap_or(DEFAULT_ENTRIES)).await?;
    let entries = entries
        .into_iter()
        .map(|e| LedgerEntryView {
            amount: signed_usd(e.delta),
            id: e.id,
            kind: e.kind,
            route: e.route_id,
            reference: e.reference,
            created_at: Timestamp(rfc3339(e.created_at)),
        })
        .collect();
    Ok(CreditsView { balance: Money::from_atomic(account.balance), entries })
}

/// A ledger delta in USD with its sign: `-0.005`, `10`.
fn signed_usd(delta: i64) -> String {
    let amount = Money::from_atomic(delta.unsigned_abs());
    if delta < 0 { format!("-{amount}") } else { amount.to_string() }
}

impl From<KeyScope> for Scope {
    fn from(scope: KeyScope) -> Self {
        match scope {
            KeyScope::Data => Scope::Data,
            KeyScope::GatewayRead => Scope::GatewayRead,
            KeyScope::GatewayData => Scope::GatewayData,
            KeyScope::GatewayWalletWrite => Scope::GatewayWalletWrite,
            KeyScope::Gateway => Scope::Gateway,
            KeyScope::Agents => Scope::Agents,
        }
    }
}

/// A key as its owner sees it: never its secret or its hash.
fn key(key: &ApiKeyRecord) -> KeyView {
    let scopes = key
        .scopes
        .split_whitespace()
        .filter_map(|name| serde_json::from_value(serde_json::Value::from(name)).ok())
        .collect();
    KeyView {
        id: key.id.clone(),
        name: key.name.clone(),
        prefix: key.prefix.clone(),
        scopes,
        created_at: Timestamp(rfc3339(key.created_at)),
        expires_at: key.expires_at.map(|at| Timestamp(rfc3339(at))),
        revoked_at: key.revoked_at.map(|at| Timestamp(rfc3339(at))),
        last_used_at: key.last_used_at.map(|at| Timestamp(rfc3339(at))),
    }
}

/// The account's keys, revoked ones included.
pub async fn keys(store: &Store, account_id: &str) -> Result<KeyList, StoreError> {
    let keys = store.api_keys(account_id).await?;
    Ok(KeyList { keys: keys.iter().map(key).collect() })
}

/// Makes the key `request` asks for (data scope when it names none), with its secret shown
/// this once.
pub async fn create_key(
    store: &Store,
    account_id: &str,
    request: NewKeyRequest,
    now_ms: i64,
) -> Result<NewKeyResponse, StoreError> {
    let scopes: Vec<Scope> =
        request.scopes.unwrap_or_else(|| vec![KeyScope::Data]).into_iter().map(Scope::from).collect();
    let expires_at = request.expires_in_days.map(|days| now_ms + i64::from(days) * 86_400_000);
    let issued = crate::issue_key(store, account_id, &request.name, &scopes, expires_at, now_ms).await?;
    let record = ApiKeyRecord {
        id: issued.record.id,
        account_id: issued.record.account_id,
        name: issued.record.name,
        prefix: issued.record.prefix,
        scopes: issued.record.scopes,
        created_at: issued.record.created_at,
        expires_at: issued.record.expires_at,
        revoked_at: None,
        last_used_at: None,
    };
    Ok(NewKeyResponse { key: issued.secret, details: key(&record) })
}

/// Revokes the account's key `key_id` and shows it; `None` when the account has no such key
/// (another account's key is as unknown as a key that never existed).
pub async fn revoke_key(
    store: &Store,
    account_id: &str,
    key_id: &str,
    now_ms: i64,
) -> Result<Option<KeyView>, StoreError> {
    store.revoke_api_key(account_id, key_id, now_ms).await?;
    let keys = store.api_keys(account_id).await?;
    Ok(keys.iter().find(|k| k.id == key_id).map(key))
}

/// LLM calls listed in the account's usage.
const RECENT_LLM_CALLS: u32 = 20;

/// The account's credit-billed calls in the discount window and the tier they earn, beside
/// its use of the LLM proxy: `llm`, summed over the same window, its newest calls, and the
/// proxy's daily cap (none when zero).
pub async fn usage(
    store: &Store,
    account_id: &str,
    now_ms: i64,
    llm: LlmUsage,
    daily_cap: Money,
) -> Result<UsageView, StoreError> {
    let (calls, spent) = store.credit_calls_since(account_id, now_ms - DISCOUNT_WINDOW_MS).await?;
    let tier = DiscountTier::for_calls(calls);
    let recent = store.llm_calls(account_id, RECENT_LLM_CALLS).await?;
    Ok(UsageView {
        calls,
        spent: Money::from_atomic(spent),
        window_days: DISCOUNT_WINDOW_DAYS,
        tier,
        percent_off: tier.percent_off(),
        calls_to_next_tier: DiscountTier::calls_to_next(calls),
        llm: LlmUsageView {
            calls: llm.calls,
            prompt_tokens: llm.prompt_tokens,
            completion_tokens: llm.completion_tokens,
            spent: Money::from_atomic(llm.spent),
            daily_cap: (daily_cap > Money::ZERO).then_some(daily_cap),
            recent: recent
                .into_iter()
                .map(|c| LlmCallView {
                    id: c.id,
                    model: c.alias,
                    upstream_model: c.upstream_model,
                    status: c.status,
                    prompt_tokens: c.prompt_tokens,
                    completion_tokens: c.completion_tokens,
                    cost: Money::from_atomic(c.cost),
                    latency_ms: c.latency_ms,
                    created_at: Timestamp(rfc3339(c.created_at)),
                })
                .collect(),
        },
    })
}

/// The newest `limit` payments (50 when not given) of `wallet`, the account's own (from its
/// sign-in, never from the request, so nobody reads another wallet's receipts), each with its
/// route's list price in `catalogue`, the discount it got and any rebate credited for it.
pub async fn receipts(
    store: &Store,
    catalogue: &Catalogue,
    account_id: &str,
    wallet: String,
    limit: Option<u32>,
) -> Result<ReceiptList, StoreError> {
    let records = store.payments_by_payer(&wallet, limit.unwrap_or(DEFAULT_ENTRIES)).await?;
    let oldest = records.iter().map(|p| p.created_at).min().unwrap_or(0);
    let rebates: HashMap<String, u64> =
        store.credits_of_kind_since(account_id, REBATE, oldest).await?.into_iter().collect();
    let receipts = records
        .into_iter()
        .map(|p| {
            let list_price = match catalogue.get(&p.route_id).map(|r| r.price) {
                Some(PriceRule::Fixed(price)) => Some(price),
                _ => None,
            };
            let paid = Money::from_atomic(p.amount);
            Receipt {
                discount: list_price.map(|list| Money::from_atomic(list.atomic().saturating_sub(p.amount))),
                rebate: rebates.get(&rebate_reference(&p.id)).map(|r| Money::from_atomic(*r)),
                list_price,
                paid,
                id: p.id,
                route: p.route_id,
                network: p.network,
                transaction: p.tx_hash.filter(|t| !t.is_empty()),
                status: p.status.to_string(),
                created_at: Timestamp(rfc3339(p.created_at)),
                updated_at: Timestamp(rfc3339(p.updated_at)),
            }
        })
        .collect();
    Ok(ReceiptList { wallet, receipts })
}
