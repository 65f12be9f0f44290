//! The HTTP facilitator client against a facilitator double on loopback: each way real
//! facilitators answer (200 or 4xx for invalid, pending settlements, garbage, slowness).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use svc_x402::facilitator::PaymentRequest;
use svc_x402::{Facilitator, FacilitatorError, HttpFacilitator, PaymentRequirements, Settled};

#[derive(Default)]
struct Calls {
    settle: AtomicUsize,
    supported: AtomicUsize,
}

/// A client's message, as the paywall forwards it.
fn message() -> Box<RawValue> {
    RawValue::from_string(r#"{"x402Version":2}"#.to_owned()).expect("json")
}

fn amount(body: &Value) -> &str {
    body["paymentRequirements"]["amount"].as_str().unwrap_or_default()
}

async fn verify(Json(body): Json<Value>) -> Response {
    // The client's message travels as it came.
    if body["paymentPayload"] != json!({"x402Version": 2}) {
        return StatusCode::UNPROCESSABLE_ENTITY.into_response();
    }
    match amount(&body) {
        "1" | "6" | "7" => Json(json!({"isValid": true, "payer": "0xPayer"})).into_response(),
        "2" => Json(json!({"isValid": false, "invalidReason": "invalid_exact_evm_signature"})).into_response(),
        "3" => (
            StatusCode::BAD_REQUEST,
            Json(json!({"isValid": false, "invalidReason": "invalid_signature", "payer": ""})),
        )
            .into_response(),
        "5" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Json(json!({"isValid": true, "payer": "0xPayer"})).into_response()
        }
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "oops").into_response(),
    }
}

async fn settle(State(calls): State<Arc<Calls>>, Json(body): Json<Value>) -> Response {
    let n = calls.settle.fetch_add(1, Ordering::SeqCst);
    let ok = json!({"success": true, "payer": "0xPayer", "transaction": "0xabc", "network": "eip155:8453"});
    match (amount(&body), n) {
        ("6", 0) => Json(json!({"success": false, "errorReason": "settlement_pending", "transaction": "0xabc",
            "network": "eip155:8453"}))
        .into_response(),
        ("8", _) => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Json(ok).into_response()
        }
        ("7", _) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"success": false, "errorReason": "insufficient_funds",
            "transaction": "", "network": ""})),
        )
            .into_response(),
        _ => Json(ok).into_response(),
    }
}

async fn supported(State(calls): State<Arc<Calls>>) -> Response {
    if calls.supported.fetch_add(1, Ordering::SeqCst) == 0 {
        return (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "0")], "slow down").into_response();
    }
    Json(json!({"kinds": [{"x402Version": 2, "scheme": "exact", "network": "eip155:8453"}], "extensions": [],
        "signers": {"eip155:*": ["0x1111111111111111111111111111111111111111"]}}))
    .into_response()
}

async fn facilitator() -> (HttpFacilitator, Arc<Calls>) {
    let calls = Arc::new(Calls::default());
    let app = axum::Router::new()
        .route("/x402/verify", post(verify))
        .route("/x402/settle", post(settle))
        .route("/x402/supported", get(supported))
        .with_state(Arc::clone(&calls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = HttpFacilitator::new(&format!("http://{addr}/x402/"), Duration::from_millis(800)).expect("client");
    (client, calls)
}

fn requirement(amount: &str) -> PaymentRequirements {
    serde_json::from_value(json!({"scheme": "exact", "network": "eip155:8453", "amount": amount, "asset": "0xa",
        "payTo": "0xb", "maxTimeoutSeconds": 300}))
    .expect("requirement")
}

#[tokio::test]
async fn verify_reads_valid_and_both_forms_of_invalid() {
    let (f, _) = facilitator().await;
    let payment = message();
    let check = |amount: &'static str| {
        let f = f.clone();
        let payment = payment.clone();
        async move {
            f.verify(PaymentRequest { message: &payment, payload: &Value::Null, requirements: &requirement(amount) })
                .await
        }
    };
    assert_eq!(check("1").await.expect("valid").payer, "0xPayer");
    assert_eq!(check("2").await.expect_err("invalid").reason(), "invalid_exact_evm_signature");
    assert_eq!(check("3").await.expect_err("invalid").reason(), "invalid_signature");
    assert!(matches!(check("4").await, Err(FacilitatorError::Unavailable(_))), "5xx without JSON");
    let slow = check("5").await.expect_err("timeout");
    assert!(matches!(&slow, FacilitatorError::Unavailable(m) if m.contains("timed out")), "{slow:?}");
}

#[tokio::test]
async fn settle_retries_a_pending_settlement_once_and_reports_failures() {
    let (f, calls) = facilitator().await;
    let payment = message();
    let pending = requirement("6");
    let settled = f
        .settle(PaymentRequest { message: &payment, payload: &Value::Null, requirements: &pending })
        .await
        .expect("settled");
    assert_eq!(settled, Settled::OnChain { payer: "0xPayer".into(), transaction: "0xabc".into() });
    assert_eq!(calls.settle.load(Ordering::SeqCst), 2, "one retry");
    let refused = requirement("7");
    let failed = f
        .settle(PaymentRequest { message: &payment, payload: &Value::Null, requirements: &refused })
        .await
        .expect_err("failed");
    assert_eq!(failed.reason(), "insufficient_funds");
}

/// A settlement the facilitator may have carried out (it went silent after the request
/// left) must not read as "nothing taken"; one that never reached it must.
#[tokio::test]
async fn settle_tells_a_silent_facilitator_from_an_unreachable_one() {
    let (f, _) = facilitator().await;
    let payment = message();
    let silent = requirement("8");
    let err = f
        .settle(PaymentRequest { message: &payment, payload: &Value::Null, requirements: &silent })
        .await
        .expect_err("timeout");
    assert!(err.may_have_moved(), "{err:?}");

    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let closed = listener.local_addr().expect("addr");
    drop(listener);
    let unreachable = HttpFacilitator::new(&format!("http://{closed}/"), Duration::from_millis(800)).expect("client");
    let err = unreachable
        .settle(PaymentRequest { message: &payment, payload: &Value::Null, requirements: &requirement("1") })
        .await
        .expect_err("refused");
    assert!(!err.may_have_moved(), "{err:?}");
    assert_eq!(err.reason(), "unexpected_settle_error");
}

#[tokio::test]
async fn supported_waits_out_a_rate_limit() {
    let (f, calls) = facilitator().await;
    let supported = f.supported().await.expect("supported");
    assert_eq!(supported.kinds[0].network, "eip155:8453");
    assert_eq!(calls.supported.load(Ordering::SeqCst), 2);
}

/// A Base node whose token has consumed every authorization asked about.
#[derive(Debug)]
struct SpentEverything;

impl svc_x402::EvmLedger for SpentEverything {
    fn authorization_used<'a>(
        &'a self,
        _: svc_chain_evm::Address,
        _: svc_chain_evm::B256,
    ) -> futures::future::BoxFuture<'a, Result<bool, svc_chain_evm::EvmError>> {
        Box::pin(std::future::ready(Ok(true)))
    }

    fn receipt<'a>(
        &'a self,
        _: svc_chain_evm::B256,
    ) -> futures::future::BoxFuture<'a, Result<Option<bool>, svc_chain_evm::EvmError>> {
        Box::pin(std::future::ready(Ok(None)))
    }

    fn block_time(&self) -> futures::future::BoxFuture<'_, Result<u64, svc_chain_evm::EvmError>> {
        Box::pin(std::future::ready(Ok(0)))
    }
}

/// The standard API cannot say what became of a settlement whose answer was lost; a node
/// configured beside the facilitator can.
#[tokio::test]
async fn a_lost_settlement_is_undecided_without_a_node_and_read_from_one_with_it() {
    let lost = svc_x402::Unresolved {
        network: "eip155:8453",
        payer: "0x2c7536e3605d9c16a7a3d7b1898e529396a65c23",
        nonce: "0x00000000000000000000000000000000000000000000000000000000000000aa",
        transaction: None,
        abandoned: false,
        valid_before: Some(u64::MAX),
        now_secs: 0,
    };
    let (alone, _) = facilitator().await;
    assert_eq!(alone.resolve(lost).await, Ok(svc_x402::Resolution::Unknown));
    let (with_node, calls) = facilitator().await;
    let with_node =
        with_node.with_ledgers(svc_x402::Ledgers::default().with_evm("eip155:8453", Arc::new(SpentEverything)));
    assert_eq!(with_node.resolve(lost).await, Ok(svc_x402::Resolution::Settled { transaction: None }));
    let other_network = svc_x402::Unresolved { network: "eip155:84532", ..lost };
    assert_eq!(with_node.resolve(other_network).await, Ok(svc_x402::Resolution::Unknown));
    assert_eq!(calls.settle.load(Ordering::SeqCst), 0, "nothing is sent to decide a payment");
}
