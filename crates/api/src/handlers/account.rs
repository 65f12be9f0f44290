//! Account routes: sign-in, the account's credits and usage, and its API keys.

use std::collections::HashMap;
use svc_catalogue::ids;

use svc_catalogue::routes::account::{
    AccountView, CreditPurchase, CreditPurchaseResponse, CreditsView, KeyList, KeyPath, KeyScope, KeyView,
    LedgerEntryView, LedgerQuery, LlmCallView, LlmTokenView, LlmTopUpView, LlmUsageView, NewKeyRequest, NewKeyResponse,
    Receipt, ReceiptList, SignInNonce, SignInRequest, SignInResponse, UsageView,
};
use svc_catalogue::routes::common::{NoInput, Timestamp};
use svc_domain::discount::{DISCOUNT_WINDOW_DAYS, DISCOUNT_WINDOW_MS};
use svc_domain::{DiscountTier, Money, rfc3339};
use svc_store::{Account, ApiKeyRecord};

use super::{Caller, Handlers};
use crate::error::ApiError;
use crate::state::AppState;
use svc_accounts::auth;
use svc_accounts::{Scope, issue_key};

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add_for_caller(ids::auth::NONCE, nonce);
    handlers.add_for_caller(ids::auth::VERIFY, verify);
    handlers.add_for_caller(ids::account::SHOW, show);
    handlers.add_for_caller("account.credits", credits);
    handlers.add_for_caller(ids::account::USAGE, usage);
    handlers.add_for_caller(ids::account::KEYS, keys);
    handlers.add_for_caller(ids::account::KEY_CREATE, create_key);
    handlers.add_for_caller(ids::account::KEY_REVOKE, revoke_key);
    handlers.add_for_caller(ids::credits::PURCHASE, purchase);
    handlers.add_for_caller(ids::x402::RECEIPTS, receipts);
    handlers.on_settled(ids::credits::PURCHASE, deliver_purchase);
    handlers.add_for_caller(ids::account::LLM_TOKEN, llm_token);
    handlers.add_for_caller(ids::account::LLM_TOKEN_ROTATE, rotate_llm_token);
    handlers.add_for_caller(ids::account::LLM_TOP_UP, llm_top_up);
    handlers.add_for_caller(ids::account::LLM_TOP_UP_SET, set_llm_top_up);
}

/// `POST /api/auth/nonce`.
async fn nonce(state: AppState, _: Caller, _: NoInput) -> Result<SignInNonce, ApiError> {
    let site = state.config.sign_in.site();
    let (domain, uri) = (site.domain().to_owned(), site.uri().to_owned());
    let (nonce, expires_at) = auth::new_nonce(&state.store, &state.config.sign_in, state.clock.now_ms()).await?;
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

/// `POST /api/auth/verify`.
async fn verify(state: AppState, _: Caller, input: SignInRequest) -> Result<SignInResponse, ApiError> {
    let now = state.clock.now_ms();
    let account = auth::sign_in(&state.store, &state.config.sign_in, &input.message, &input.signature, now)
        .await?
        .map_err(|e| ApiError::SignIn(e.to_string()))?;
    let (token, expires_at) = auth::token_for(&state.config.sign_in, &account.id, now);
    Ok(SignInResponse {
        token,
        token_type: "Bearer".into(),
        expires_at: Timestamp(rfc3339(expires_at)),
        account: account_view(&account),
    })
}

pub(super) fn signed_in(caller: Caller) -> Result<Account, ApiError> {
    caller.account.ok_or(ApiError::Internal("account route reached without an account".into()))
}

fn account_view(account: &Account) -> AccountView {
    AccountView {
        id: account.id.clone(),
        name: account.name.clone(),
        wallet: account.wallet.clone(),
        balance: Money::from_atomic(account.balance),
        created_at: Timestamp(rfc3339(account.created_at)),
    }
}

/// `GET /api/account`.
async fn show(_: AppState, caller: Caller, _: NoInput) -> Result<AccountView, ApiError> {
    Ok(account_view(&signed_in(caller)?))
}

/// `GET /api/account/credits`.
async fn credits(state: AppState, caller: Caller, input: LedgerQuery) -> Result<CreditsView, ApiError> {
    let account = signed_in(caller)?;
    let entries = state.store.ledger(&account.id, input.limit.unwrap_or(50)).await?;
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

/// `GET /api/account/usage`.
async fn usage(state: AppState, caller: Caller, _: NoInput) -> Result<UsageView, ApiError> {
    let account = signed_in(caller)?;
    let now = state.clock.now_ms();
    let (calls, spent) = state.store.credit_calls_since(&account.id, now - DISCOUNT_WINDOW_MS).await?;
    let tier = DiscountTier::for_calls(calls);
    let llm = state.llm.usage(&account.id, now - DISCOUNT_WINDOW_MS).await?;
    let recent = state.store.llm_calls(&account.id, 20).await?;
    let daily_cap = state.llm.daily_cap();
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

/// `POST /api/account/llm-token`.
async fn llm_token(state: AppState, caller: Caller, _: NoInput) -> Result<LlmTokenView, ApiError> {
    let account = signed_in(caller)?;
    let token = state.llm.token(&account.id).await?;
    Ok(LlmTokenView { token, account_id: account.id, base_path: svc_llm::http::BASE_PATH.to_owned() })
}

/// `POST /api/account/llm-token/rotate`.
async fn rotate_llm_token(state: AppState, caller: Caller, _: NoInput) -> Result<LlmTokenView, ApiError> {
    let account = signed_in(caller)?;
    let token = state.llm.rotate(&account.id).await?;
    Ok(LlmTokenView { token, account_id: account.id, base_path: svc_llm::http::BASE_PATH.to_owned() })
}

/// `GET /api/account/llm-top-up`.
async fn llm_top_up(state: AppState, caller: Caller, _: NoInput) -> Result<LlmTopUpView, ApiError> {
    let account = signed_in(caller)?;
    let top_up = state.llm.top_up(&account.id).await?;
    Ok(LlmTopUpView { enabled: top_up.enabled, amount: top_up.amount })
}

/// `PUT /api/account/llm-top-up`.
async fn set_llm_top_up(state: AppState, caller: Caller, input: LlmTopUpView) -> Result<LlmTopUpView, ApiError> {
    let account = signed_in(caller)?;
    let top_up = svc_llm::TopUp { enabled: input.enabled, amount: input.amount };
    let set = state.llm.set_top_up(&account.id, top_up).await?;
    Ok(LlmTopUpView { enabled: set.enabled, amount: set.amount })
}

fn scope_of(scope: KeyScope) -> Scope {
    match scope {
        KeyScope::Data => Scope::Data,
        KeyScope::GatewayRead => Scope::GatewayRead,
        KeyScope::GatewayData => Scope::GatewayData,
        KeyScope::GatewayWalletWrite => Scope::GatewayWalletWrite,
        KeyScope::Gateway => Scope::Gateway,
        KeyScope::Agents => Scope::Agents,
    }
}

fn key_view(key: &ApiKeyRecord) -> KeyView {
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
    }
}

/// `GET /api/account/keys`.
async fn keys(state: AppState, caller: Caller, _: NoInput) -> Result<KeyList, ApiError> {
    let account = signed_in(caller)?;
    let keys = state.store.api_keys(&account.id).await?;
    Ok(KeyList { keys: keys.iter().map(key_view).collect() })
}

/// `POST /api/account/keys`.
async fn create_key(state: AppState, caller: Caller, input: NewKeyRequest) -> Result<NewKeyResponse, ApiError> {
    let account = signed_in(caller)?;
    let now = state.clock.now_ms();
    let scopes: Vec<Scope> = input.scopes.unwrap_or_else(|| vec![KeyScope::Data]).into_iter().map(scope_of).collect();
    let expires_at = input.expires_in_days.map(|days| now + i64::from(days) * 86_400_000);
    let issued = issue_key(&state.store, &account.id, &input.name, &scopes, expires_at, now).await?;
    let record = ApiKeyRecord {
        id: issued.record.id,
        account_id: issued.record.account_id,
        name: issued.record.name,
        prefix: issued.record.prefix,
        scopes: issued.record.scopes,
        created_at: issued.record.created_at,
        expires_at: issued.record.expires_at,
        revoked_at: None,
    };
    Ok(NewKeyResponse { key: issued.secret, details: key_view(&record) })
}

/// `DELETE /api/account/keys/{key_id}`.
async fn revoke_key(state: AppState, caller: Caller, input: KeyPath) -> Result<KeyView, ApiError> {
    let account = signed_in(caller)?;
    state.store.revoke_api_key(&account.id, &input.key_id, state.clock.now_ms()).await?;
    let keys = state.store.api_keys(&account.id).await?;
    // Another account's key is as unknown as a key that never existed.
    let key = keys
        .iter()
        .find(|k| k.id == input.key_id)
        .ok_or_else(|| ApiError::Missing(format!("this account has no API key {}", input.key_id)))?;
    Ok(key_view(key))
}

/// `POST /api/x402/credits/purchase`, before the payment settles: finds (or, for the paying
/// wallet, opens) the account to credit, so a purchase for an unknown account is refused
/// before any money moves. The credits themselves are added once the payment has settled.
async fn purchase(state: AppState, caller: Caller, input: CreditPurchase) -> Result<CreditPurchaseResponse, ApiError> {
    let (Some(payer), Some(payment)) = (caller.payer, caller.payment) else {
        return Err(ApiError::Internal("credit purchase reached without a payment".into()));
    };
    let account_id = match input.account_id {
        Some(id) => {
            let found = state.store.account(&id).await?;
            found.ok_or_else(|| ApiError::Missing(format!("no account {id}; nothing was charged")))?.id
        }
        None => svc_accounts::wallet_account(&state.store, &payer, state.clock.now_ms()).await?.id,
    };
    let reference = svc_accounts::credits::purchase_reference(&payment);
    Ok(CreditPurchaseResponse { account_id, amount: input.amount, reference })
}

/// Adds the credits of a settled purchase, once however often it runs.
async fn deliver_purchase(state: AppState, bought: CreditPurchaseResponse) -> Result<(), ApiError> {
    let now = state.clock.now_ms();
    svc_accounts::credits::add_purchase(&state.store, &bought.account_id, bought.amount, &bought.reference, now)
        .await?;
    Ok(())
}

/// `GET /api/x402/receipts`: the payments of the wallet the caller signed in with. The wallet
/// comes from the sign-in, never from the request, so nobody reads another wallet's receipts.
async fn receipts(state: AppState, caller: Caller, input: LedgerQuery) -> Result<ReceiptList, ApiError> {
    let account = signed_in(caller)?;
    let Some(wallet) = account.wallet else {
        return Err(ApiError::field(
            vec!["header".into(), "authorization".into()],
            "this account has no wallet; sign in with the paying wallet to see its receipts",
            "value_error",
        ));
    };
    let records = state.store.payments_by_payer(&wallet, input.limit.unwrap_or(50)).await?;
    let oldest = records.iter().map(|p| p.created_at).min().unwrap_or(0);
    let rebates: HashMap<String, u64> = state
        .store
        .credits_of_kind_since(&account.id, svc_paywall::rebate::REBATE, oldest)
        .await?
        .into_iter()
        .collect();
    let receipts = records
        .into_iter()
        .map(|p| {
            let list_price = match state.catalogue.get(&p.route_id).map(|r| r.price) {
                Some(svc_catalogue::PriceRule::Fixed(price)) => Some(price),
                _ => None,
            };
            let paid = Money::from_atomic(p.amount);
            Receipt {
                discount: list_price.map(|list| Money::from_atomic(list.atomic().saturating_sub(p.amount))),
                rebate: rebates.get(&svc_paywall::rebate::rebate_reference(&p.id)).map(|r| Money::from_atomic(*r)),
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
