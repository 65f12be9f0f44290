//! The official SDK vectors: every one verifies at its own "now", hashes to the recorded
//! digest, and encodes the recorded settlement calldata; each tampering fails with the reason
//! the reference facilitator gives.

use std::str::FromStr;

use serde_json::Value;
use svc_chain_evm::{
    Address, EvmError, ExactEvmPayload, ExactRequirement, Recoveries, Signer, TokenDomain, U256,
    VALID_BEFORE_MARGIN_SECS, verify_exact,
};

fn vector(name: &str) -> Value {
    let text = match name {
        "mainnet" => include_str!("../../../fixtures/x402/evm-base-mainnet-exact.json"),
        "sepolia" => include_str!("../../../fixtures/x402/evm-base-sepolia-exact.json"),
        "spec" => include_str!("../../../fixtures/x402/spec-example-eip3009.json"),
        _ => unreachable!("unknown vector"),
    };
    serde_json::from_str(text).expect("vector json")
}

fn domain_of(v: &Value) -> TokenDomain {
    let d = &v["domain"];
    TokenDomain {
        name: d["name"].as_str().expect("name").to_owned(),
        version: d["version"].as_str().expect("version").to_owned(),
        chain_id: d["chainId"].as_u64().expect("chainId"),
        token: Address::from_str(d["verifyingContract"].as_str().expect("contract")).expect("address"),
    }
}

struct Case {
    payload: ExactEvmPayload,
    domain: TokenDomain,
    pay_to: Address,
    amount: U256,
    now: u64,
}

fn case(name: &str) -> Case {
    let v = vector(name);
    let payload: ExactEvmPayload = serde_json::from_value(v["paymentPayload"]["payload"].clone()).expect("payload");
    let req = &v["paymentRequirements"];
    Case {
        payload,
        domain: domain_of(&v["eip712"]),
        pay_to: Address::from_str(req["payTo"].as_str().expect("payTo")).expect("payTo"),
        amount: U256::from_str(req["amount"].as_str().expect("amount")).expect("amount"),
        now: v["generatedAtUnix"].as_u64().expect("now"),
    }
}

impl Case {
    fn verify(&self) -> Result<svc_chain_evm::VerifiedAuthorization, EvmError> {
        let required =
            ExactRequirement { separator: self.domain.separator(), pay_to: self.pay_to, amount: self.amount };
        verify_exact(&self.payload, &required, self.now, false)
    }
}

#[test]
fn sdk_vectors_verify_and_hash_as_recorded() {
    for name in ["mainnet", "sepolia"] {
        let v = vector(name);
        let c = case(name);
        assert_eq!(c.domain.separator().to_string(), v["eip712"]["domainSeparator"].as_str().expect("sep"), "{name}");
        let ok = c.verify().expect("vector verifies");
        assert_eq!(ok.signer, Signer::Recovered);
        assert_eq!(ok.digest.to_string(), v["eip712"]["digest"].as_str().expect("digest"), "{name}");
        assert_eq!(ok.authorization.from.to_string(), v["payerAddress"].as_str().expect("payer"));
        assert_eq!(ok.transfer_calldata().to_string(), v["settlementCall"]["calldata"].as_str().expect("calldata"));
    }
}

#[test]
fn the_spec_example_recovers_its_payer_but_has_expired() {
    let v = vector("spec");
    let domain = domain_of(&v);
    let payload: ExactEvmPayload =
        serde_json::from_value(serde_json::json!({"signature": v["signature"], "authorization": v["authorization"]}))
            .expect("payload");
    let auth = &v["authorization"];
    let required = ExactRequirement {
        separator: domain.separator(),
        pay_to: Address::from_str(auth["to"].as_str().expect("to")).expect("to"),
        amount: U256::from_str(auth["value"].as_str().expect("value")).expect("value"),
    };
    let valid_after: u64 = auth["validAfter"].as_str().expect("after").parse().expect("after");
    let ok = verify_exact(&payload, &required, valid_after, false).expect("verifies inside its window");
    assert_eq!(ok.digest.to_string(), v["digest"].as_str().expect("digest"));
    assert_eq!(verify_exact(&payload, &required, 1_795_337_774, false), Err(EvmError::ValidBefore));
}

#[test]
fn each_tampering_fails_with_the_reference_reason() {
    let refused = |edit: &dyn Fn(&mut Case)| {
        let mut c = case("mainnet");
        edit(&mut c);
        c.verify().expect_err("refused").reason()
    };
    // A changed amount breaks the signature first, as in the SDK's negative vector.
    assert_eq!(refused(&|c| c.payload.authorization.value = "1".into()), "invalid_exact_evm_signature");
    assert_eq!(refused(&|c| c.amount = U256::from(400_000)), "invalid_exact_evm_payload_authorization_value_mismatch");
    assert_eq!(refused(&|c| c.pay_to = Address::ZERO), "invalid_exact_evm_recipient_mismatch");
    assert_eq!(refused(&|c| c.domain.chain_id = 84_532), "invalid_exact_evm_signature");
    assert_eq!(refused(&|c| c.domain.name = "USDC".into()), "invalid_exact_evm_signature");
    assert_eq!(refused(&|c| c.payload.signature = "0xzz".into()), "invalid_exact_evm_failed_to_parse_signature");
    assert_eq!(refused(&|c| c.payload.authorization.nonce = "0x12".into()), "invalid_payload");
    assert_eq!(refused(&|c| c.payload.authorization.value = "-5".into()), "invalid_payload");
    assert_eq!(refused(&|c| c.payload.authorization.from = "0x1234".into()), "invalid_payload");
    let expires = case("mainnet").payload.authorization.valid_before.parse::<u64>().expect("validBefore");
    assert_eq!(
        refused(&|c| c.now = expires - VALID_BEFORE_MARGIN_SECS + 1),
        "invalid_exact_evm_payload_authorization_valid_before"
    );
}

#[test]
fn the_window_edges_are_exact() {
    let c = case("mainnet");
    let expires: u64 = c.payload.authorization.valid_before.parse().expect("validBefore");
    let mut at_edge = case("mainnet");
    at_edge.now = expires - VALID_BEFORE_MARGIN_SECS;
    assert!(at_edge.verify().is_ok(), "validBefore == now + 6 is still accepted");
    let mut late = case("mainnet");
    late.now = expires - VALID_BEFORE_MARGIN_SECS + 1;
    assert_eq!(late.verify(), Err(EvmError::ValidBefore));
}

#[test]
fn a_contract_wallet_signature_is_deferred_to_eip1271_when_a_node_can_check_it() {
    let mut c = case("mainnet");
    c.payload.signature = format!("0x{}", "11".repeat(100));
    let required = ExactRequirement { separator: c.domain.separator(), pay_to: c.pay_to, amount: c.amount };
    let deferred = verify_exact(&c.payload, &required, c.now, true).expect("deferred");
    assert_eq!(deferred.signer, Signer::NeedsEip1271);
    assert!(deferred.transfer_calldata().to_string().starts_with("0xcf092995"), "bytes overload");
    c.now = 0;
    assert_eq!(verify_exact(&c.payload, &required, c.now, false), Err(EvmError::Signature));
}

#[test]
fn a_high_s_twin_of_a_valid_signature_is_refused() {
    let mut c = case("mainnet");
    let bytes = svc_chain_evm::Bytes::from_str(&c.payload.signature).expect("hex");
    let sig = alloy_primitives::Signature::try_from(bytes.as_ref()).expect("signature");
    let n =
        U256::from_str_radix("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", 16).expect("order");
    let twin = alloy_primitives::Signature::new(sig.r(), n - sig.s(), !sig.v());
    let digest = c.verify().expect("valid").digest;
    assert!(twin.recover_address_from_prehash(&digest).is_ok(), "the twin recovers");
    c.payload.signature = format!("0x{}", alloy_primitives::hex::encode(twin.as_bytes()));
    assert_eq!(c.verify(), Err(EvmError::Signature));
}

/// The memo of recovered signers gives every check the answer a fresh recovery gives: for the
/// payment it saw, for a tampered twin with the same digest (another signature), and for a
/// changed authorization (another digest), in any order and however often asked.
#[test]
fn a_remembered_signer_never_changes_an_answer() {
    let memo = Recoveries::default();
    let check = |c: &Case, memo: &Recoveries| {
        let required = ExactRequirement { separator: c.domain.separator(), pay_to: c.pay_to, amount: c.amount };
        (memo.verify_exact(&c.payload, &required, c.now, true), verify_exact(&c.payload, &required, c.now, true))
    };
    let valid = case("mainnet");
    let mut forged = case("mainnet");
    let mut sig = svc_chain_evm::Bytes::from_str(&forged.payload.signature).expect("hex").to_vec();
    sig[10] ^= 1;
    forged.payload.signature = format!("0x{}", alloy_primitives::hex::encode(&sig));
    let mut changed = case("mainnet");
    changed.payload.authorization.value = "1".into();
    changed.amount = U256::from(1);
    for c in [&valid, &valid, &forged, &valid, &changed, &forged, &valid, &valid, &changed] {
        let (remembered, fresh) = check(c, &memo);
        assert_eq!(remembered, fresh);
    }
    assert_eq!(check(&valid, &memo).0.expect("valid").signer, Signer::Recovered);
    assert_eq!(check(&forged, &memo).0.expect("deferred").signer, Signer::NeedsEip1271, "not the payer's signature");
}

mod garbage {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn never_panics(sig in ".{0,200}", value in ".{0,90}", nonce in ".{0,80}", from in ".{0,50}") {
            let mut c = case("mainnet");
            c.payload.signature = sig;
            c.payload.authorization.value = value;
            c.payload.authorization.nonce = nonce;
            c.payload.authorization.from = from;
            let _ = c.verify();
        }
    }
}
