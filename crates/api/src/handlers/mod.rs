//! Route handlers, registered by route id. A handler is a plain async function from the
//! route's validated input to its output; extraction, validation, payment and error mapping
//! happen around it, once, for every route.

mod infra;
mod predmkt;
mod pricing;
mod public;
mod social;

use std::any::TypeId;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use svc_catalogue::{Catalogue, RouteInput, ValidInput};

use crate::error::ApiError;
use crate::state::AppState;

/// What a handler returns: the serialised 200 body.
pub type HandlerResult = Result<Bytes, ApiError>;
type BoxFuture = Pin<Box<dyn Future<Output = HandlerResult> + Send>>;
type ErasedHandler = Arc<dyn Fn(AppState, ValidInput) -> BoxFuture + Send + Sync>;

struct Entry {
    input: TypeId,
    output: TypeId,
    call: ErasedHandler,
}

/// Handlers by route id.
#[derive(Default)]
pub struct Handlers {
    by_id: HashMap<&'static str, Entry>,
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
        let handler = Arc::new(handler);
        let call: ErasedHandler = Arc::new(move |state, input: ValidInput| {
            let handler = Arc::clone(&handler);
            Box::pin(async move {
                let input = input.downcast::<I>().map_err(|_| ApiError::Internal(format!("input type of {id}")))?;
                let output = handler(state, input).await?;
                serde_json::to_vec(&output)
                    .map(Bytes::from)
                    .map_err(|e| ApiError::Internal(format!("encode {id}: {e}")))
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
        let call: ErasedHandler = Arc::new(move |state, input| Box::pin(handler(state, input)));
        self.by_id.insert(route.id, Entry { input: (route.input.type_id)(), output: (route.output.type_id)(), call });
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
        match self.by_id.get(id) {
            Some(entry) => (entry.call)(state, input).await,
            None => Err(ApiError::NotImplemented(id)),
        }
    }
}

/// Every handler svc has; tests start from it to add stand-ins.
pub fn all() -> Handlers {
    let mut handlers = Handlers::default();
    public::register(&mut handlers);
    infra::register(&mut handlers);
    predmkt::register(&mut handlers);
    social::register(&mut handlers);
    pricing::register(&mut handlers);
    handlers
}
