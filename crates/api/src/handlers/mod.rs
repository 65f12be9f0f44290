//! Route handlers, registered by route id. A handler is a plain async function from the
//! route's validated input to its output; extraction, validation, payment and error mapping
//! happen around it, once, for every route.

mod account;
mod agentbox;
mod chaindata;
mod defi;
mod infra;
mod perps;
mod predmkt;
mod pricing;
mod public;
mod sellers;
mod signals;
mod social;

use std::any::TypeId;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use svc_catalogue::{Catalogue, RouteInput, ValidInput};

use crate::answer::{Answer, Encoded};
use crate::error::ApiError;
use crate::state::AppState;

/// What a handler returns: the serialised 200 body.
pub type HandlerResult = Result<Answer, ApiError>;

type BoxFuture = Pin<Box<dyn Future<Output = HandlerResult> + Send>>;
type ErasedHandler = Arc<dyn Fn(AppState, Caller, ValidInput) -> BoxFuture + Send + Sync>;

/// Who is calling, for the few handlers whose answer depends on it (the account routes);
/// data handlers never see it, so their answers cannot differ by caller.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The account signed in or holding the key, on routes that need one.
    pub account: Option<svc_store::Account>,
    /// The verified paying wallet, on a paid call (EVM lowercase, Solana as is).
    pub payer: Option<String>,
    /// The payment's identity (`network:payer:nonce`), on a paid call: what makes a purchase
    /// happen once per payment.
    pub payment: Option<String>,
}

type PreCheck = Arc<dyn Fn(AppState, &ValidInput) -> Option<BoxCheck> + Send + Sync>;
type BoxCheck = Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send>>;

type SettledHook =
    Arc<dyn Fn(AppState, Bytes) -> Pin<Box<dyn Future<Output = Result<(), ApiError>> + Send>> + Send + Sync>;

struct Entry {
    input: TypeId,
    output: TypeId,
    call: ErasedHandler,
}

/// Handlers by route id.
#[derive(Default)]
pub struct Handlers {
    by_id: HashMap<&'static str, Entry>,
    on_settled: HashMap<&'static str, SettledHook>,
    before_payment: HashMap<&'static str, PreCheck>,
}

/// A handler registered with types other than its route's.
#[derive(Debug, thiserror::Error)]
#[error("handler for route {0:?} does not match the catalogue's input/output types, or names no route")]
pub struct HandlerMismatch(pub &'static str);

impl Handlers {
    /// Registers `handler` for route `id`.
    pub fn add<I, O, F, Fut>(&mut self, id: &'static str, handler: F)
    where
        I: RouteInput,
        O: serde::Serialize + Send + 'static,
        F: Fn(AppState, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ApiError>> + Send + 'static,
    {
        self.add_for_caller(id, move |state, _: Caller, input: I| handler(state, input));
    }

    /// Registers `handler` for route `id`, given who is calling.
    pub fn add_for_caller<I, O, F, Fut>(&mut self, id: &'static str, handler: F)
    where
        I: RouteInput,
        O: serde::Serialize + Send + 'static,
        F: Fn(AppState, Caller, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ApiError>> + Send + 'static,
    {
        self.insert::<I, O, _, _>(id, move |state, caller, input| {
            let answer = handler(state, caller, input);
            async move {
                serde_json::to_vec(&answer.await?)
                    .map(|json| Answer::from(Bytes::from(json)))
                    .map_err(|e| ApiError::Internal(format!("encode {id}: {e}")))
            }
        });
    }

    /// Registers `handler` for route `id`, answering with an output encoded ahead of time
    /// (answers that are the same for every caller until their data changes).
    pub fn add_encoded<I, O, F, Fut>(&mut self, id: &'static str, handler: F)
    where
        I: RouteInput,
        O: 'static,
        F: Fn(AppState, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Encoded<O>, ApiError>> + Send + 'static,
    {
        self.insert::<I, O, _, _>(id, move |state, _, input| {
            let answer = handler(state, input);
            async move { Ok(answer.await?.answer) }
        });
    }

    /// Erases `handler`'s types: the one place a route's input is downcast, and where the
    /// input and output types the catalogue checks are recorded.
    fn insert<I, O, F, Fut>(&mut self, id: &'static str, handler: F)
    where
        I: RouteInput,
        O: 'static,
        F: Fn(AppState, Caller, I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let call: ErasedHandler = Arc::new(move |state, caller, input: ValidInput| {
            let handler = Arc::clone(&handler);
            Box::pin(async move {
                let input = input.downcast::<I>().map_err(|_| ApiError::Internal(format!("input type of {id}")))?;
                handler(state, caller, input).await
            })
        });
        self.by_id.insert(id, Entry { input: TypeId::of::<I>(), output: TypeId::of::<O>(), call });
    }

    /// Registers a handler that answers with JSON bytes directly, under `route`'s own types: a
    /// stand-in for tests of the machinery around handlers (payment, credits) on routes whose
    /// upstream has not landed.
    pub fn add_raw<F, Fut>(&mut self, route: &svc_catalogue::RouteSpec, handler: F)
    where
        F: Fn(AppState, ValidInput) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HandlerResult> + Send + 'static,
    {
        let call: ErasedHandler = Arc::new(move |state, _, input| Box::pin(handler(state, input)));
        self.by_id.insert(route.id, Entry { input: (route.input.type_id)(), output: (route.output.type_id)(), call });
    }

    /// Registers what route `id` delivers once its payment has settled, from the answer its
    /// handler made: for routes that sell something other than data (credits), which must not
    /// be handed over before the money has moved. It must be idempotent: a withheld answer
    /// served later runs it again.
    pub fn on_settled<O, F, Fut>(&mut self, id: &'static str, deliver: F)
    where
        O: serde::de::DeserializeOwned + Send + 'static,
        F: Fn(AppState, O) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), ApiError>> + Send + 'static,
    {
        let deliver = Arc::new(deliver);
        let hook: SettledHook = Arc::new(move |state, body: Bytes| {
            let deliver = Arc::clone(&deliver);
            Box::pin(async move {
                let answer: O =
                    serde_json::from_slice(&body).map_err(|e| ApiError::Internal(format!("answer of {id}: {e}")))?;
                deliver(state, answer).await
            })
        });
        self.on_settled.insert(id, hook);
    }

    /// Registers a check of route `id`'s input that needs more than its schema (svc's limits,
    /// the upstream's rules): it runs before any challenge, debit or preview, so a client is
    /// never asked to pay for a call its handler would refuse. `check` takes what it needs from
    /// the input and returns a future that owns it.
    pub fn check_before_payment<I, F, Fut>(&mut self, id: &'static str, check: F)
    where
        I: RouteInput,
        F: Fn(AppState, &I) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), ApiError>> + Send + 'static,
    {
        let check: PreCheck = Arc::new(move |state, input: &ValidInput| {
            input.get::<I>().map(|input| Box::pin(check(state, input)) as BoxCheck)
        });
        self.before_payment.insert(id, check);
    }

    /// Runs route `id`'s check before payment, if it has one.
    pub(crate) async fn before_payment(
        &self,
        id: &'static str,
        state: &AppState,
        input: &ValidInput,
    ) -> Result<(), ApiError> {
        match self.before_payment.get(id) {
            Some(check) => match check(state.clone(), input) {
                Some(checking) => checking.await,
                None => Err(ApiError::Internal(format!("input type of {id}"))),
            },
            None => Ok(()),
        }
    }

    /// What route `id` delivers once the payment of `payment` (`network:payer:nonce`) has
    /// settled, from the answer its handler made; nothing for data routes. A failed delivery
    /// is logged with the payment, for an operator to repair.
    pub(crate) fn delivery(
        &self,
        id: &'static str,
        state: &AppState,
        answer: &Answer,
        payment: String,
    ) -> Option<svc_paywall::Delivery> {
        let deliver = (self.on_settled.get(id)?)(state.clone(), answer.json.clone());
        Some(Box::pin(async move {
            if let Err(err) = deliver.await {
                tracing::error!(payment, route = id, error = %err, "could not deliver a settled purchase");
            }
        }))
    }

    /// Checks every registration against the catalogue.
    pub fn verify(&self, catalogue: &Catalogue) -> Result<(), HandlerMismatch> {
        for (id, entry) in &self.by_id {
            let route = catalogue.get(id).ok_or(HandlerMismatch(id))?;
            if (route.input.type_id)() != entry.input || (route.output.type_id)() != entry.output {
                return Err(HandlerMismatch(id));
            }
        }
        Ok(())
    }

    /// Runs the handler of route `id`, or answers 501 if it has not landed yet.
    pub(crate) async fn call(&self, id: &'static str, state: AppState, input: ValidInput) -> HandlerResult {
        self.call_as(id, state, Caller::default(), input).await
    }

    /// Runs the handler of route `id` for `caller`.
    pub(crate) async fn call_as(
        &self,
        id: &'static str,
        state: AppState,
        caller: Caller,
        input: ValidInput,
    ) -> HandlerResult {
        match self.by_id.get(id) {
            Some(entry) => (entry.call)(state, caller, input).await,
            None => Err(ApiError::NotImplemented(id)),
        }
    }
}

/// Every handler svc has; tests start from it to add stand-ins.
pub fn all() -> Handlers {
    let mut handlers = Handlers::default();
    public::register(&mut handlers);
    account::register(&mut handlers);
    agentbox::register(&mut handlers);
    infra::register(&mut handlers);
    perps::register(&mut handlers);
    chaindata::register(&mut handlers);
    defi::register(&mut handlers);
    predmkt::register(&mut handlers);
    social::register(&mut handlers);
    signals::register(&mut handlers);
    pricing::register(&mut handlers);
    sellers::register(&mut handlers);
    handlers
}
