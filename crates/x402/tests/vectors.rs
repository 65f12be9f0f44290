//! Payments made by the official TypeScript and Python clients decode, match the requirements
//! we rebuild for the same price, and verify in the built-in facilitator at their own "now";
//! our challenge for the same route decodes to what the reference server sent.

use std::sync::Arc;

use serde_json::Value;
use svc_domain::{FixedClock, Money};
use svc_x402::codec::Choice;
use svc_x402::facilitator::PaymentRequest;
use svc_x402::{BuiltinFacilitator, Facilitator, Offer, PaymentNetwork, Settled, decode_payment, find_match};

const PAY_TO: &str = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C";
const PAYER: &str = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23";

fn json(text: &str) -> Value {
    serde_json::from_str(text).expect("vector json")
}

fn networks(max_timeout: u64) -> Offer {
    let base = PaymentNetwork::base_usdc(PAY_TO).expect("base");
    let sepolia =
        PaymentNetwork::evm("eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e", "USDC", "2", 6, PAY_TO)
            .expect("sepolia");
    Offer::new(vec![base, sepolia], max_timeout)
}

fn half_a_dollar() -> Money {
    "0.50".parse().expect("price")
}

fn facilitator(now_secs: i64) -> BuiltinFacilitator {
    let clock = Arc::new(FixedClock::at_ms(now_secs * 1000));
    BuiltinFacilitator::new(networks(300).networks().to_vec(), clock)
}

async fn pays(header: &str, now: i64, offer: &Offer) -> Result<Settled, svc_x402::FacilitatorError> {
    let payment = decode_payment(header.as_bytes()).expect("decodes");
    let offered = offer.requirements(half_a_dollar());
    let index = find_match(&offered, &payment.choice).expect("matches a rebuilt requirement");
    let request = PaymentRequest { message: &payment.raw, payload: &payment.payload, requirements: &offered[index] };
    let f = facilitator(now);
    let verified = f.verify(request).await?;
    assert_eq!(verified.payer, PAYER);
    f.settle(request).await
}

#[tokio::test]
async fn typescript_client_payments_verify() {
    for text in [
        include_str!("../../../fixtures/x402/evm-base-mainnet-exact.json"),
        include_str!("../../../fixtures/x402/evm-base-sepolia-exact.json"),
    ] {
        let v = json(text);
        let now = v["generatedAtUnix"].as_i64().expect("now");
        let header = v["paymentSignatureHeader"].as_str().expect("header");
        let settled = pays(header, now, &networks(300)).await.expect("verifies");
        assert_eq!(settled, Settled::VerifyOnly { payer: PAYER.to_owned() }, "no chain attached: verify-only");
    }
}

#[tokio::test]
async fn a_payment_for_a_route_with_a_schema_extension_verifies() {
    let v = json(include_str!("../../../fixtures/x402/evm-bazaar-two-networks.json"));
    let now = v["generatedAtUnix"].as_i64().expect("now");
    let header = v["paymentSignatureHeader"].as_str().expect("header");
    let decoded = decode_payment(header.as_bytes()).expect("decodes");
    assert!(decoded.extensions.as_ref().is_some_and(|e| e.contains_key("bazaar")), "the client echoed bazaar");
    pays(header, now, &networks(60)).await.expect("verifies");
}

#[tokio::test]
async fn python_client_payments_verify() {
    let v = json(include_str!("../../../fixtures/x402/python-client-cross-check.json"));
    for case in v["cases"].as_array().expect("cases") {
        let source = case["source"].as_str().expect("source");
        let original = json(match source {
            "evm-base-mainnet-exact.json" => include_str!("../../../fixtures/x402/evm-base-mainnet-exact.json"),
            _ => include_str!("../../../fixtures/x402/evm-base-sepolia-exact.json"),
        });
        // The Python client signs with validBefore = its own now + 300: verify at its signing time.
        let decoded = decode_payment(case["pythonPaymentSignatureHeader"].as_str().expect("h").as_bytes()).expect("d");
        let valid_before: i64 =
            decoded.payload["authorization"]["validBefore"].as_str().expect("validBefore").parse().expect("number");
        assert!(original["generatedAtUnix"].as_i64().is_some());
        let header = case["pythonPaymentSignatureHeader"].as_str().expect("header");
        pays(header, valid_before - 300, &networks(300)).await.expect("python payment verifies");
    }
}

#[tokio::test]
async fn reference_negative_cases_are_refused() {
    let v = json(include_str!("../../../fixtures/x402/evm-negative-cases.json"));
    let base = json(include_str!("../../../fixtures/x402/evm-base-mainnet-exact.json"));
    let now = base["generatedAtUnix"].as_i64().expect("now");
    let offer = networks(300);
    let offered = offer.requirements(half_a_dollar());
    let mut checked = 0;
    for case in v["cases"].as_array().expect("cases") {
        let label = case["label"].as_str().unwrap_or_default();
        let Some(header) = case["sentPaymentSignatureHeader"].as_str() else { continue };
        let reference = case["paymentRequiredDecoded"]["error"].as_str().expect("reference error");
        let outcome = match decode_payment(header.as_bytes()) {
            None => "Payment required".to_owned(),
            Some(payment) => match find_match(&offered, &payment.choice) {
                None => "No matching payment requirements".to_owned(),
                Some(i) => {
                    let request =
                        PaymentRequest { message: &payment.raw, payload: &payment.payload, requirements: &offered[i] };
                    match facilitator(now).verify(request).await {
                        Ok(_) => "valid".to_owned(),
                        Err(e) => e.reason().to_owned(),
                    }
                }
            },
        };
        assert_eq!(outcome, reference, "{label}");
        checked += 1;
    }
    assert_eq!(checked, 4, "every negative case that sent a header was replayed");
}

#[test]
fn our_requirements_equal_the_reference_servers() {
    let v = json(include_str!("../../../fixtures/x402/evm-base-mainnet-exact.json"));
    let ours = networks(300).requirements(half_a_dollar());
    let theirs: svc_x402::PaymentRequirements =
        serde_json::from_value(v["paymentRequirements"].clone()).expect("requirements");
    assert_eq!(ours[0], theirs);
    assert_eq!(
        serde_json::to_string(&ours[0]).expect("json"),
        serde_json::to_string(&v["paymentRequirements"]).expect("json")
    );
    let decoded = decode_payment(v["paymentSignatureHeader"].as_str().expect("h").as_bytes()).expect("decodes");
    assert!(matches!(decoded.choice, Choice::Accepted(ref a) if *a == theirs));
}
