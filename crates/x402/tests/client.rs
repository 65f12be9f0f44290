//! svc's paying side on Solana: from the official TypeScript client's inputs it sends the
//! official client's payment (fixtures/x402/svm-solana-mainnet-exact.json), and what it sends
//! for svc's own challenge passes the built-in facilitator.

use std::sync::Arc;

use base64::Engine as _;
use serde_json::Value;
use svc_chain_solana::{ExactSvmPayment, Keypair, programs};
use svc_domain::{FixedClock, Money};
use svc_x402::client::{choose, choose_solana, pay_header_solana, solana_decimals};
use svc_x402::facilitator::PaymentRequest;
use svc_x402::network::{SOLANA, SOLANA_USDC};
use svc_x402::{BuiltinFacilitator, Facilitator, Offer, PaymentNetwork, PaymentRequired, decode_payment, find_match};

const VECTOR: &str = include_str!("../../../fixtures/x402/svm-solana-mainnet-exact.json");
const FEE_PAYER: &str = "HreMf6X5nAv9evt728Gf3TSuUNEnEXDPhdpCC1GJ5sv9";
const PAY_TO: &str = "649F3Ama5VBkrXtWKxy8KRhXKwF15HiyUDyYosdWiBci";
const PAYER: &str = "9fijMemJYwXS5QD85Qxsq7iKqvSebgb6LvpGftgkeigk";

fn vector() -> Value {
    serde_json::from_str(VECTOR).expect("vector")
}

fn payer() -> Keypair {
    let seed = vector()["keys"]["payerEd25519SeedHex"].as_str().expect("seed").to_owned();
    Keypair::parse(&format!("0x{seed}")).expect("key")
}

fn decoded(header: &str) -> Value {
    serde_json::from_slice(&base64::engine::general_purpose::STANDARD.decode(header).expect("base64")).expect("json")
}

/// The nonce the official client drew: its memo is the nonce's hex.
fn vector_nonce() -> [u8; 16] {
    let memo = vector()["clientTransactionDecoded"]["instructions"][3]["dataHex"].as_str().expect("memo").to_owned();
    let hex: Vec<u8> =
        (0..memo.len()).step_by(2).map(|i| u8::from_str_radix(&memo[i..i + 2], 16).expect("hex")).collect();
    std::array::from_fn(|i| {
        u8::from_str_radix(std::str::from_utf8(&hex[2 * i..2 * i + 2]).expect("ascii"), 16).expect("hex")
    })
}

#[test]
fn from_the_official_clients_inputs_svc_sends_the_official_clients_payment() {
    let v = vector();
    let challenge: PaymentRequired = serde_json::from_value(v["paymentRequired"].clone()).expect("challenge");
    assert!(choose(&challenge, None).is_none(), "nothing for an EVM wallet");
    let requirement = choose_solana(&challenge, Some("solana")).expect("Solana offered");
    assert_eq!(solana_decimals(requirement), Some(6), "USDC's mint");
    let blockhash = requirement.extra.as_ref().expect("extra")["recentBlockhash"].as_str().expect("blockhash");
    let payment =
        ExactSvmPayment { token_program: programs::TOKEN, recent_blockhash: blockhash, nonce: vector_nonce() };
    let header = pay_header_solana(&challenge, requirement, &payer(), 6, &payment).expect("paid");
    assert_eq!(decoded(&header), v["paymentPayload"]);
}

#[test]
fn a_solana_requirement_is_chosen_by_network_and_needs_a_fee_payer() {
    let mut challenge: PaymentRequired =
        serde_json::from_value(vector()["paymentRequired"].clone()).expect("challenge");
    assert!(choose_solana(&challenge, Some(SOLANA)).is_some());
    assert!(choose_solana(&challenge, None).is_some());
    assert!(choose_solana(&challenge, Some("solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1")).is_none(), "devnet not offered");
    assert!(choose_solana(&challenge, Some("eip155:8453")).is_none());
    challenge.accepts[0].extra.as_mut().expect("extra").remove("feePayer");
    assert!(choose_solana(&challenge, None).is_none(), "no fee payer, nothing to pay with");
}

#[tokio::test]
async fn svcs_solana_payment_for_its_own_challenge_verifies_in_the_built_in_facilitator() {
    let solana = PaymentNetwork::solana(SOLANA, SOLANA_USDC, PAY_TO, FEE_PAYER).expect("solana");
    let offer = Offer::new(
        vec![PaymentNetwork::base_usdc("0x209693Bc6afc0C5328bA36FaF03C514EF312287C").expect("base"), solana],
        300,
    );
    let price: Money = "0.25".parse().expect("price");
    let offered = offer.requirements(price);
    let challenge = PaymentRequired {
        accepts: offered.clone(),
        ..serde_json::from_value(vector()["paymentRequired"].clone()).expect("challenge")
    };
    let requirement = choose_solana(&challenge, Some("solana")).expect("Solana offered");
    let payment = ExactSvmPayment { token_program: programs::TOKEN, recent_blockhash: PAY_TO, nonce: [5; 16] };
    let header = pay_header_solana(&challenge, requirement, &payer(), 6, &payment).expect("paid");

    let payment = decode_payment(header.as_bytes()).expect("decodes");
    let index = find_match(&offered, &payment.choice).expect("matches our requirement");
    let facilitator =
        BuiltinFacilitator::new(offer.networks().to_vec(), Arc::new(FixedClock::at_ms(1_795_341_600_000)));
    let verified = facilitator
        .verify(PaymentRequest { message: &payment.raw, payload: &payment.payload, requirements: &offered[index] })
        .await
        .expect("valid");
    assert_eq!(verified.payer, PAYER);
}
