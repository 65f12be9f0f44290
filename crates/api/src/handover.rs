//! Telling the paywall that a paid answer reached its client. An answer paid on chain is kept
//! until its body has been handed to the connection; a process killed before that owes it to
//! the payment's retry (see `svc_paywall::Handover`).

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use svc_paywall::Handover;

/// `response`, with `handover` confirmed once its whole body has been written out.
pub(crate) fn on_written(response: Response, handover: Handover) -> Response {
    response.map(|body| Body::new(Written { body, handover: Some(handover) }))
}

/// A body that confirms its handover when its last frame has been taken. A body dropped
/// before then (the client went away) leaves the answer kept.
struct Written {
    body: Body,
    handover: Option<Handover>,
}

impl http_body::Body for Written {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.body).poll_frame(cx);
        let finished = match &polled {
            Poll::Ready(None) => true,
            // The last frame: the connection may not ask again once the body says it ended.
            Poll::Ready(Some(Ok(_))) => this.body.is_end_stream(),
            _ => false,
        };
        if finished && let Some(handover) = this.handover.take() {
            handover.delivered();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
