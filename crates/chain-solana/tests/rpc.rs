//! The Solana node client against a fake node on loopback that answers like a real one.
#![cfg(feature = "settle")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};
use svc_chain_solana::SendError;
use svc_chain_solana::settle::SolanaRpc;

/// How the fake node treats the transaction.
#[derive(Clone, Copy)]
enum Outcome {
    Confirms,
    PreflightFails,
    FailsOnChain,
    NeverConfirms,
}

async fn node(outcome: Outcome) -> (String, Arc<Mutex<Vec<String>>>) {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let state = (outcome, Arc::clone(&calls));
    let app = axum::Router::new()
        .route(
            "/",
            axum::routing::post(|State((outcome, calls)): State<(Outcome, Arc<Mutex<Vec<String>>>)>, Json(req): Json<Value>| async move {
                let method = req["method"].as_str().unwrap_or_default().to_owned();
                calls.lock().expect("calls").push(method.clone());
                let result = match (method.as_str(), outcome) {
                    ("sendTransaction", Outcome::PreflightFails) => {
                        return Json(json!({"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Transaction simulation failed: insufficient funds"}}));
                    }
                    ("sendTransaction", _) => json!("5ig"),
                    ("getSignatureStatuses", Outcome::Confirms) => {
                        json!({"context":{"slot":1},"value":[{"slot":1,"confirmations":0,"err":null,"confirmationStatus":"confirmed"}]})
                    }
                    ("getSignatureStatuses", Outcome::FailsOnChain) => {
                        json!({"context":{"slot":1},"value":[{"slot":1,"confirmations":0,"err":{"InstructionError":[2,{"Custom":1}]},"confirmationStatus":"confirmed"}]})
                    }
                    ("getSignatureStatuses", _) => json!({"context":{"slot":1},"value":[null]}),
                    _ => json!("ok"),
                };
                Json(json!({"jsonrpc":"2.0","id":1,"result":result}))
            }),
        )
        .with_state(state);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, calls)
}

async fn send(outcome: Outcome) -> (Result<(), SendError>, Vec<String>) {
    let (url, calls) = node(outcome).await;
    let rpc = SolanaRpc::new(&url, Duration::from_millis(900)).expect("client");
    rpc.health().await.expect("healthy");
    let result = rpc.send_and_confirm("AQID", "5ig").await;
    let calls = calls.lock().expect("calls").clone();
    (result, calls)
}

#[tokio::test]
async fn a_confirmed_transfer_is_settled() {
    let (result, calls) = send(Outcome::Confirms).await;
    assert_eq!(result, Ok(()));
    assert_eq!(calls, ["getHealth", "sendTransaction", "getSignatureStatuses"]);
}

#[tokio::test]
async fn a_preflight_failure_sends_nothing() {
    let (result, calls) = send(Outcome::PreflightFails).await;
    assert!(matches!(result, Err(SendError::Rejected(ref m)) if m.contains("insufficient funds")), "{result:?}");
    assert!(!calls.contains(&"getSignatureStatuses".to_owned()));
}

#[tokio::test]
async fn a_transfer_that_fails_on_chain_is_failed() {
    let (result, _) = send(Outcome::FailsOnChain).await;
    assert!(matches!(result, Err(SendError::Failed(_))), "{result:?}");
}

#[tokio::test]
async fn an_unconfirmed_transfer_is_pending_not_failed() {
    let (result, calls) = send(Outcome::NeverConfirms).await;
    assert_eq!(result.as_ref().map_err(SendError::reason), Err("settlement_pending"));
    assert!(calls.iter().filter(|c| *c == "getSignatureStatuses").count() >= 2);
}

/// A node whose every `getBalance` answers `lamports`.
async fn holding(lamports: u64) -> String {
    let app = axum::Router::new().route(
        "/",
        axum::routing::post(move |Json(req): Json<Value>| async move {
            assert_eq!(req["method"], "getBalance");
            Json(json!({"jsonrpc":"2.0","id":1,"result":{"context":{"slot":1},"value":lamports}}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test]
async fn the_fee_payers_sol_is_read_as_enough_low_or_not_enough_for_one_transaction() {
    use svc_chain_solana::settle::Funds;
    for (lamports, expected) in [(5_000_000_000, Funds::Ok), (1_000_000, Funds::Low), (19_999, Funds::Empty)] {
        let rpc = SolanaRpc::new(&holding(lamports).await, Duration::from_secs(1)).expect("client");
        assert_eq!(rpc.funds(), Funds::Ok, "not watched yet");
        rpc.watch_fee_payer("FeePayer1111111111111111111111111111111111".into()).await;
        assert_eq!(rpc.funds(), expected, "{lamports} lamports");
        assert_eq!(rpc.balance("x").await, Ok(lamports));
    }
}
