//! The Solana node adapter against a node's wire format and against the simulator's node.

use svc_domain::Chain;
use svc_simulator::Fault;
use svc_simulator::world::Scenario;
use svc_upstream::solana_rpc::{MintAuthorities, WireAccounts, WireReply, authorities_of};
use svc_upstream::{UpstreamError, Vendor};

use crate::support::fixture;

#[test]
fn revoked_authorities_decode_whether_null_or_left_out() {
    let reply: WireReply<WireAccounts> =
        serde_json::from_str(include_str!("../fixtures/solana-rpc/get-multiple-accounts.json")).expect("decodes");
    let found: Vec<Option<MintAuthorities>> =
        reply.result.expect("result").value.into_iter().map(authorities_of).collect();
    let live = MintAuthorities {
        mint_authority: Some("BJE5MMbqXjVwjAF7oxwPYXnTXDyspzZyt4vwenNw5ruG".into()),
        freeze_authority: Some("7dGbd2QZcCKcTndnHcTL8q7SMVXAkp688NTQYwrRCrar".into()),
    };
    let revoked = MintAuthorities { mint_authority: None, freeze_authority: None };
    assert_eq!(found[0], Some(live));
    assert_eq!(found[1], Some(revoked.clone()), "null is revoked");
    assert_eq!(found[2], Some(revoked), "left out, as newer nodes write it, is revoked too");
    assert_eq!(found[3..], [None, None, None], "no account, a token account, raw data: not a mint, so unknown");
}

#[test]
fn a_node_error_decodes_with_its_code() {
    let reply: WireReply<WireAccounts> =
        serde_json::from_str(r#"{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is behind"},"id":1}"#)
            .expect("decodes");
    assert_eq!(reply.error.map(|e| e.code), Some(-32005));
    assert!(reply.result.is_none());
}

#[tokio::test]
async fn mints_are_read_in_one_call_and_unknown_addresses_stay_unknown() {
    let f = fixture(|_| {}).await;
    let world = &f.sim.world;
    let clean = world.planted_token(Chain::Solana, Scenario::Accumulated).expect("planted").address.clone();
    let trap = world.freeze_trap_token().expect("planted").address.clone();
    let wallet = world.wallets()[0].address.clone();
    let mints = vec![clean.clone(), trap.clone(), wallet, "not-an-address".to_owned(), clean];
    let found = f.upstreams.solana_rpc.mint_authorities(&mints).await.expect("answered");
    let revoked = MintAuthorities { mint_authority: None, freeze_authority: None };
    assert_eq!(found[0], Some(revoked.clone()));
    let trap_mint = world.mint(&trap).expect("a mint");
    assert!(trap_mint.freeze_authority.is_some());
    assert_eq!(found[1], Some(MintAuthorities { mint_authority: None, freeze_authority: trap_mint.freeze_authority }));
    assert_eq!(found[2..4], [None, None], "a wallet and a malformed address are no mints");
    assert_eq!(found[4], Some(revoked));
    assert_eq!(f.sim.faults.log(), ["POST /solana-rpc"], "one call for every mint");
}

#[tokio::test]
async fn answered_mints_are_kept_for_an_hour() {
    let f = fixture(|_| {}).await;
    let mints = vec![f.sim.world.freeze_trap_token().expect("planted").address.clone()];
    let first = f.upstreams.solana_rpc.mint_authorities(&mints).await.expect("answered");
    let again = f.upstreams.solana_rpc.mint_authorities(&mints).await.expect("answered");
    assert_eq!((again, f.sim.faults.log().len()), (first, 1), "the second read came from the cache");
    f.clock.advance_ms(61 * 60_000);
    f.upstreams.solana_rpc.mint_authorities(&mints).await.expect("answered");
    assert_eq!(f.sim.faults.log().len(), 2);
}

#[tokio::test]
async fn a_node_that_keeps_failing_fails_the_read() {
    let f = fixture(|_| {}).await;
    for _ in 0..3 {
        f.sim.faults.push("solana-rpc", Fault::Status { status: 503, retry_after: None });
    }
    let mint = f.sim.world.freeze_trap_token().expect("planted").address.clone();
    let err = f.upstreams.solana_rpc.mint_authorities(&[mint]).await.expect_err("fails");
    assert!(matches!(err, UpstreamError::Status { vendor: Vendor::SolanaRpc, status: 503 }), "{err:?}");
}
