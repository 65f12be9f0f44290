//! Account routes: sign-in, the account's credits and usage, and its API keys.

use svc_catalogue::ids;

use svc_catalogue::routes::account::{
    AccountView, CreditPurchase, CreditPurchaseResponse, CreditsView, KeyList, KeyPath, KeyView, LedgerQuery,
    LlmTokenView, LlmTopUpRequest, LlmTopUpView, NewKeyRequest, NewKeyResponse, ReceiptList, SignInNonce,
    SignInRequest, SignInResponse, UsageView,
};
use svc_catalogue::routes::common::NoInput;
use svc_domain::discount::DISCOUNT_WINDOW_MS;
use svc_store::Account;

use super::{Caller, Handlers};
use crate::error::ApiError;
use crate::state::AppState;
use svc_accounts::{auth, views};

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
    Ok(views::sign_in_nonce(&state.store, &state.config.sign_in, state.clock.now_ms()).await?)
}

/// `POST /api/auth/verify`.
async fn verify(state: AppState, _: Caller, input: SignInRequest) -> Result<SignInResponse, ApiError> {
    let now = state.clock.now_ms();
    let account = auth::sign_in(&state.store, &state.config.sign_in, &input.message, &input.signature, now)
        .await?
        .map_err(|e| ApiError::SignIn(e.to_string()))?;
    Ok(views::signed_in(&state.config.sign_in, &account, now))
}

pub(super) fn signed_in(caller: Caller) -> Result<Account, ApiError> {
    caller.account.ok_or(ApiError::Internal("account route reached without an account".into()))
}

/// `GET /api/account`.
async fn show(_: AppState, caller: Caller, _: NoInput) -> Result<AccountView, ApiError> {
    Ok(views::account(&signed_in(caller)?))
}

/// `GET /api/account/credits`.
async fn credits(state: AppState, caller: Caller, input: LedgerQuery) -> Result<CreditsView, ApiError> {
    Ok(views::credits(&state.store, &signed_in(caller)?, input.limit).await?)
}

/// `GET /api/account/usage`.
async fn usage(state: AppState, caller: Caller, _: NoInput) -> Result<UsageView, ApiError> {
    let account = signed_in(caller)?;
    let now = state.clock.now_ms();
    let llm = state.llm.usage(&account.id, now - DISCOUNT_WINDOW_MS).await?;
    Ok(views::usage(&state.store, &account.id, now, llm, state.llm.daily_cap()).await?)
}

/// `POST /api/account/llm-token`.
async fn llm_token(state: AppState, caller: Caller, _: NoInput) -> Result<LlmTokenView, ApiError> {
    let account = signed_in(caller)?;
    let token = state.llm.token(&account.id).await?;
    Ok(LlmTokenView { token, account_id: account.id, base_path: svc_catalogue::routes::llm::BASE_PATH.to_owned() })
}

/// `POST /api/account/llm-token/rotate`.
async fn rotate_llm_token(state: AppState, caller: Caller, _: NoInput) -> Result<LlmTokenView, ApiError> {
    let account = signed_in(caller)?;
    let token = state.llm.rotate(&account.id).await?;
    Ok(LlmTokenView { token, account_id: account.id, base_path: svc_catalogue::routes::llm::BASE_PATH.to_owned() })
}

/// `GET /api/account/llm-top-up`.
async fn llm_top_up(state: AppState, caller: Caller, _: NoInput) -> Result<LlmTopUpView, ApiError> {
    let account = signed_in(caller)?;
    let top_up = state.llm.top_up(&account.id).await?;
    Ok(LlmTopUpView { enabled: top_up.enabled, amount: top_up.amount })
}

/// `PUT /api/account/llm-top-up`.
async fn set_llm_top_up(state: AppState, caller: Caller, input: LlmTopUpRequest) -> Result<LlmTopUpView, ApiError> {
    let account = signed_in(caller)?;
    let set = state.llm.set_top_up(&account.id, input.enabled, input.amount).await?;
    Ok(LlmTopUpView { enabled: set.enabled, amount: set.amount })
}

/// `GET /api/account/keys`.
async fn keys(state: AppState, caller: Caller, _: NoInput) -> Result<KeyList, ApiError> {
    Ok(views::keys(&state.store, &signed_in(caller)?.id).await?)
}

/// `POST /api/account/keys`.
async fn create_key(state: AppState, caller: Caller, input: NewKeyRequest) -> Result<NewKeyResponse, ApiError> {
    let account = signed_in(caller)?;
    Ok(views::create_key(&state.store, &account.id, input, state.clock.now_ms()).await?)
}

/// `DELETE /api/account/keys/{key_id}`.
async fn revoke_key(state: AppState, caller: Caller, input: KeyPath) -> Result<KeyView, ApiError> {
    let account = signed_in(caller)?;
    let revoked = views::revoke_key(&state.store, &account.id, &input.key_id, state.clock.now_ms()).await?;
    revoked.ok_or_else(|| ApiError::Missing(format!("this account has no API key {}", input.key_id)))
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
    Ok(views::receipts(&state.store, state.catalogue, &account.id, wallet, input.limit).await?)
}
