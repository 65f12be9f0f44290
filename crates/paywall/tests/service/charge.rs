//! Every way one charge can end: paid, kept, refused, failed, unsettled, discounted, rebated.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use svc_domain::{DiscountTier, Money};
use svc_paywall::{Outcome, Sale};
use svc_store::{PaymentStatus, Store};
use svc_x402::network::{BASE, SOLANA};
use svc_x402::{Offer, PaymentNetwork};

use crate::on_both;
use crate::support::{
    ANSWER, Boom, Harness, NOW_MS, PAY_TO, PRICE, PRODUCT, decode, header, message, paid, payer_id, refused, sale,
    secs, unsettled, with_payment_id,
};

on_both!(a_good_payment_runs_the_work_once_settles_and_records_the_price);
async fn a_good_payment_runs_the_work_once_settles_and_records_the_price(store: Store) {
    let h = Harness::new(store);
    let payment = h.pay(1);
    let (answer, receipt, v1, handover) = paid(h.charge(&payment).await);
    assert_eq!(answer, Bytes::from_static(ANSWER));
    let nonce = payment.replay_key().expect("replay key").1;
    let buyer = h.buyers.lock().expect("buyers")[0].clone();
    assert_eq!((buyer.payer, buyer.payment), (payer_id(), format!("{BASE}:{}:{nonce}", payer_id())));
    assert!(receipt.success && !v1, "{receipt:?}");
    assert_eq!(receipt.network, BASE);
    assert_eq!(receipt.payer.as_deref().map(str::to_lowercase), Some(payer_id()));
    assert!(handover.is_some(), "an answer paid on chain is kept until it is handed over");
    assert_eq!((h.runs.load(Ordering::SeqCst), h.chain.transfers.load(Ordering::SeqCst)), (1, 1));
    let records = h.payments().await;
    assert_eq!(records.len(), 1);
    let record = &records[0];
    assert_eq!(record.status, PaymentStatus::Settled);
    assert_eq!(record.route_id, PRODUCT);
    assert_eq!(record.amount, PRICE.atomic());
    assert_eq!(record.tx_hash.as_deref(), Some(receipt.transaction.as_str()));
    assert_eq!(record.valid_before, Some(i64::try_from(secs(NOW_MS) + 300).expect("fits")));
}

on_both!(a_payment_on_a_token_with_more_decimals_is_recorded_at_its_usdc_price);
async fn a_payment_on_a_token_with_more_decimals_is_recorded_at_its_usdc_price(store: Store) {
    let token = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";
    let network = PaymentNetwork::evm(BASE, token, "USD Coin", "2", 18, PAY_TO).expect("network");
    let h = Harness::over(store, Offer::new(vec![network], 300), true);
    let requirement = h.requirement(PRICE, BASE);
    assert_eq!(requirement.amount, "500000000000000000", "0.50 in 18-decimal units");
    let outcome = h.charge(&decode(&h.signed_at(&requirement, 1, NOW_MS))).await;
    assert!(matches!(outcome, Outcome::Paid { .. }), "{outcome:?}");
    assert_eq!(h.payments().await[0].amount, PRICE.atomic(), "recorded in USDC, not in the token's units");
}

on_both!(a_verify_only_payment_is_served_and_recorded_unsettled_with_nothing_to_hand_over);
async fn a_verify_only_payment_is_served_and_recorded_unsettled_with_nothing_to_hand_over(store: Store) {
    let h = Harness::over(store, crate::support::offer(), false);
    let (_, receipt, _, handover) = paid(h.charge(&h.pay(1)).await);
    assert!(receipt.success && receipt.transaction.is_empty(), "{receipt:?}");
    assert!(handover.is_none(), "nothing moved on chain: nothing is owed to a retry");
    let records = h.payments().await;
    assert_eq!((records[0].status, records[0].tx_hash.as_deref()), (PaymentStatus::Unsettled, None));
}

on_both!(a_solana_payment_is_cosigned_sent_once_and_recorded_under_its_signature);
async fn a_solana_payment_is_cosigned_sent_once_and_recorded_under_its_signature(store: Store) {
    let h = Harness::new(store);
    let payment = h.pay_solana(1);
    let (payer, nonce) = payment.replay_key().expect("replay key");
    let (_, receipt, _, _) = paid(h.charge(&payment).await);
    let sent = h.solana.sent.lock().expect("sent").clone();
    assert_eq!(sent.len(), 1, "sent once");
    assert_eq!(receipt.transaction, sent[0].1, "the receipt names the co-signed transaction");
    assert_eq!(receipt.network, SOLANA);
    let records = h.payments_of(&payer).await;
    assert_eq!(records.len(), 1);
    assert_eq!((records[0].status, records[0].nonce.as_str()), (PaymentStatus::Settled, nonce.as_str()));
    assert_eq!(records[0].tx_hash.as_deref(), Some(sent[0].1.as_str()), "recorded before it was sent");
    assert_eq!(records[0].amount, PRICE.atomic());
    let again = h.charge(&payment).await;
    assert!(refused(&again).starts_with("payment_already_used"), "{again:?}");
    assert_eq!(h.solana.sent.lock().expect("sent").len(), 1, "a replay sends nothing");
}

on_both!(a_retry_naming_the_same_payment_id_gets_the_kept_answer_without_a_second_settlement);
async fn a_retry_naming_the_same_payment_id_gets_the_kept_answer_without_a_second_settlement(store: Store) {
    let h = Harness::new(store);
    let payment = with_payment_id(&h.pay(1), "pay_kept_answer_0001");
    let (_, receipt, _, _) = paid(h.charge(&payment).await);
    for _ in 0..2 {
        match h.charge(&payment).await {
            Outcome::Kept { body, receipt: kept } => {
                assert_eq!(body, Bytes::from_static(ANSWER));
                assert_eq!(kept, svc_x402::encode_header(&receipt), "the settlement header it was first given with");
            }
            other => panic!("expected the kept answer, got {other:?}"),
        }
    }
    assert_eq!((h.runs.load(Ordering::SeqCst), h.chain.transfers.load(Ordering::SeqCst)), (1, 1));
    assert_eq!(h.payments().await.len(), 1);
}

on_both!(a_payment_id_named_by_another_payment_or_for_another_product_is_a_conflict);
async fn a_payment_id_named_by_another_payment_or_for_another_product_is_a_conflict(store: Store) {
    let h = Harness::new(store);
    let id = "pay_conflict_00001";
    let first = with_payment_id(&h.pay(1), id);
    assert!(matches!(h.charge(&first).await, Outcome::Paid { .. }));
    let work = |_| async { Ok::<_, Boom>(svc_paywall::Sold { answer: (), json: Bytes::new(), then: None }) };
    let another = with_payment_id(&h.pay(2), id);
    let charged = h.paywall.charge(sale(PRICE, true), &another, work).await;
    assert!(matches!(charged, Err(svc_paywall::PaywallError::PaymentIdConflict)), "{charged:?}");
    let elsewhere = Sale { product: "alpha.exodus", ..sale(PRICE, true) };
    let charged = h.paywall.charge(elsewhere, &first, work).await;
    assert!(matches!(charged, Err(svc_paywall::PaywallError::PaymentIdConflict)), "{charged:?}");
    assert_eq!(h.runs.load(Ordering::SeqCst), 1);
}

on_both!(an_answer_cut_off_after_settlement_goes_to_its_payments_retry_once_its_process_stopped);
async fn an_answer_cut_off_after_settlement_goes_to_its_payments_retry_once_its_process_stopped(store: Store) {
    let h = Harness::new(store);
    h.paywall.beat().await.expect("beat");
    let payment = h.pay(1);
    // Settled, and never handed over: the process was killed before writing the answer.
    let handover = paid(h.charge(&payment).await).3;
    assert!(handover.is_some(), "paid on chain: kept until handed over");
    // Kept while this process may still be writing it: the client is told to wait.
    let waiting = h.charge(&payment).await;
    assert!(refused(&waiting).starts_with("payment_in_progress"), "{waiting:?}");
    h.clock.advance_ms(svc_paywall::reconcile::STOPPED_AFTER_MS + 1);
    match h.charge(&payment).await {
        Outcome::Kept { body, .. } => assert_eq!(body, Bytes::from_static(ANSWER)),
        other => panic!("expected the kept answer, got {other:?}"),
    }
    let again = h.charge(&payment).await;
    assert_eq!(refused(&again), "invalid_exact_evm_nonce_already_used", "given once");
    assert_eq!((h.runs.load(Ordering::SeqCst), h.chain.transfers.load(Ordering::SeqCst)), (1, 1));
}

on_both!(an_answer_handed_over_is_forgotten_and_its_payment_sent_again_is_a_replay);
async fn an_answer_handed_over_is_forgotten_and_its_payment_sent_again_is_a_replay(store: Store) {
    let h = Harness::new(store);
    let payment = h.pay(1);
    let handover = paid(h.charge(&payment).await).3.expect("paid on chain: kept until handed over");
    handover.delivered();
    let kept = format!("paid:{BASE}:{}:{}", payer_id(), payment.replay_key().expect("key").1);
    let mut forgotten = false;
    for _ in 0..200 {
        forgotten = h.store.paid_response(&kept, 0).await.expect("store").is_none();
        if forgotten {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(forgotten, "a delivered answer is not kept");
    let again = h.charge(&payment).await;
    assert_eq!(refused(&again), "invalid_exact_evm_nonce_already_used");
    assert_eq!((h.runs.load(Ordering::SeqCst), h.chain.transfers.load(Ordering::SeqCst)), (1, 1));
}

on_both!(a_payment_that_does_not_match_the_offer_is_refused_with_its_reason_before_any_work);
async fn a_payment_that_does_not_match_the_offer_is_refused_with_its_reason_before_any_work(store: Store) {
    let h = Harness::new(store);
    let list = h.requirement(PRICE, BASE);
    let mut cheaper = list.clone();
    cheaper.amount = "499999".into();
    let mut elsewhere = list.clone();
    elsewhere.pay_to = "0x0000000000000000000000000000000000000001".into();
    let mut other_network = list.clone();
    other_network.network = "eip155:84532".into();
    for (nonce, requirement) in [(1, cheaper), (2, elsewhere), (3, other_network)] {
        let outcome = h.charge(&decode(&h.signed_at(&requirement, nonce, NOW_MS))).await;
        assert_eq!(refused(&outcome), "No matching payment requirements", "{requirement:?}");
        if let Outcome::Refused { accepts, .. } = outcome {
            assert_eq!(accepts, h.paywall.requirements(PRICE), "the challenge to answer with");
        }
    }
    // Signed an hour ago for five minutes: its authorization expired 55 minutes ago.
    let expired = h.charge(&decode(&h.signed_at(&list, 9, NOW_MS - 3_600_000))).await;
    assert_eq!(refused(&expired), "invalid_exact_evm_payload_authorization_valid_before");
    // Signed to outlive its challenge.
    let late = h.charge(&decode(&h.signed_at(&list, 10, NOW_MS + 3_600_000))).await;
    assert_eq!(refused(&late), svc_x402::codec::VALID_BEFORE_REFUSED);
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
    assert!(h.payments().await.is_empty(), "nothing recorded");
    assert_eq!(h.chain.transfers.load(Ordering::SeqCst), 0);
}

on_both!(a_payment_whose_signature_says_another_amount_than_it_chose_is_refused);
async fn a_payment_whose_signature_says_another_amount_than_it_chose_is_refused(store: Store) {
    let h = Harness::new(store);
    let list = h.requirement(PRICE, BASE);
    let mut cheaper = list.clone();
    cheaper.amount = "1".into();
    // Signed for 1 unit, then presented as the list-price choice.
    let mut forged = message(&h.signed_at(&cheaper, 1, NOW_MS));
    forged["accepted"]["amount"] = list.amount.clone().into();
    let outcome = h.charge(&decode(&header(&forged))).await;
    assert_eq!(refused(&outcome), "invalid_exact_evm_payload_authorization_value_mismatch");
    // A v1 payment names no amount: its signature's is checked against ours.
    let v1 = serde_json::json!({"x402Version": 1, "scheme": "exact", "network": "base", "payload": forged["payload"]});
    let outcome = h.charge(&decode(&header(&v1))).await;
    assert_eq!(refused(&outcome), "invalid_exact_evm_payload_authorization_value_mismatch");
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
    assert!(h.payments().await.is_empty());
}

on_both!(a_v1_payment_is_paid_and_says_so);
async fn a_v1_payment_is_paid_and_says_so(store: Store) {
    let h = Harness::new(store);
    let signed = message(&h.signed_at(&h.requirement(PRICE, BASE), 1, NOW_MS));
    let v1 = serde_json::json!({"x402Version": 1, "scheme": "exact", "network": "base", "payload": signed["payload"]});
    let (_, _, v1, _) = paid(h.charge(&decode(&header(&v1))).await);
    assert!(v1, "its client reads the settlement from the v1 header");
    assert_eq!(h.payments().await[0].amount, PRICE.atomic());
}

on_both!(a_replayed_signature_a_bad_payment_id_and_a_rewritten_extension_are_refused_each_with_its_reason);
async fn a_replayed_signature_a_bad_payment_id_and_a_rewritten_extension_are_refused_each_with_its_reason(
    store: Store,
) {
    let h = Harness::over(store, crate::support::offer(), false);
    let payment = h.pay(1);
    assert!(matches!(h.charge(&payment).await, Outcome::Paid { .. }));
    let replay = h.charge(&payment).await;
    assert_eq!(refused(&replay), "payment_already_used: this authorization was already spent; sign a new one");

    let short = h.charge(&with_payment_id(&h.pay(2), "short")).await;
    assert!(refused(&short).starts_with("invalid_payment_identifier"), "{short:?}");

    let advertised: serde_json::Map<String, serde_json::Value> =
        serde_json::from_value(serde_json::json!({"bazaar": {"info": {"input": {"method": "GET"}}}})).expect("map");
    let mut rewritten: serde_json::Value = serde_json::from_str(h.pay(3).raw.get()).expect("json");
    rewritten["extensions"] = serde_json::json!({"bazaar": {"info": {"input": {"method": "POST"}}}});
    let rewritten = decode(&header(&rewritten));
    assert!(svc_paywall::echoes_extensions(&rewritten));
    let sold = Sale { advertised: Some(&advertised), ..sale(PRICE, true) };
    let outcome = h.charge_for(sold, &rewritten, Ok(())).await;
    assert_eq!(refused(&outcome), svc_x402::extensions::ECHO_MISMATCH);

    let unreadable = serde_json::json!({"x402Version": 2, "accepted": h.requirement(PRICE, BASE), "payload": {}});
    assert_eq!(refused(&h.charge(&decode(&header(&unreadable))).await), "invalid_payload");
    assert_eq!(h.runs.load(Ordering::SeqCst), 1);
    assert_eq!(h.payments().await.len(), 1);
}

on_both!(a_payer_who_cannot_cover_the_amount_is_refused_before_the_work);
async fn a_payer_who_cannot_cover_the_amount_is_refused_before_the_work(store: Store) {
    let h = Harness::new(store);
    *h.chain.balance.lock().expect("balance") = Some(PRICE.atomic() - 1);
    let outcome = h.charge(&h.pay(1)).await;
    assert_eq!(refused(&outcome), "invalid_exact_evm_insufficient_balance");
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
    assert!(h.payments().await.is_empty());
}

on_both!(failed_work_settles_nothing_records_nothing_paid_and_the_same_payment_works_again);
async fn failed_work_settles_nothing_records_nothing_paid_and_the_same_payment_works_again(store: Store) {
    let h = Harness::new(store);
    let payment = h.pay(1);
    let outcome = h.charge_for(sale(PRICE, true), &payment, Err(Boom)).await;
    assert!(matches!(outcome, Outcome::Failed(Boom)), "{outcome:?}");
    assert_eq!(h.chain.transfers.load(Ordering::SeqCst), 0, "nothing settled");
    assert!(h.payments().await.is_empty(), "the reservation is released");
    assert_eq!(h.paywall.paid_calls(&payer_id()).await.expect("count"), 0);
    assert!(matches!(h.charge(&payment).await, Outcome::Paid { .. }), "the same payment is good again");
    assert_eq!(h.chain.transfers.load(Ordering::SeqCst), 1);
}

on_both!(a_settlement_that_fails_before_sending_withholds_the_answer_and_records_it_failed);
async fn a_settlement_that_fails_before_sending_withholds_the_answer_and_records_it_failed(store: Store) {
    let h = Harness::new(store);
    h.chain.refuse.store(true, Ordering::SeqCst);
    let (error, receipt) = unsettled(h.charge(&h.pay(1)).await);
    assert!(!error.may_have_moved(), "{error:?}");
    assert!(!receipt.success);
    assert_eq!(receipt.error_reason.as_deref(), Some("invalid_exact_evm_insufficient_balance"));
    let records = h.payments().await;
    assert_eq!(records[0].status, PaymentStatus::Failed);
    assert_eq!(records[0].error.as_deref(), Some("invalid_exact_evm_insufficient_balance"));
    assert_eq!(h.paywall.paid_calls(&payer_id()).await.expect("count"), 0, "not counted as paid");
}

on_both!(a_settlement_that_may_have_moved_is_pending_until_the_chain_says_and_its_answer_is_then_owed_once);
async fn a_settlement_that_may_have_moved_is_pending_until_the_chain_says_and_its_answer_is_then_owed_once(
    store: Store,
) {
    let h = Harness::new(store);
    h.chain.unconfirmed.store(true, Ordering::SeqCst);
    let payment = h.pay(1);
    let (error, receipt) = unsettled(h.charge(&payment).await);
    assert!(error.may_have_moved(), "{error:?}");
    assert_eq!(receipt.error_reason.as_deref(), Some(svc_x402::SETTLEMENT_PENDING));
    let records = h.payments().await;
    assert_eq!(records[0].status, PaymentStatus::Pending);
    assert!(records[0].tx_hash.is_some(), "the transaction to look up");
    let waiting = h.charge(&payment).await;
    assert!(refused(&waiting).starts_with("payment_pending"), "{waiting:?}");

    // The transfer lands; the reconciler finds it, and the same payment gets its answer once.
    *h.chain.mined.lock().expect("mined") = Some(true);
    let report = svc_paywall::reconcile::reconcile_payments(&h.paywall).await.expect("reconcile");
    assert_eq!(report.settled, 1, "{report:?}");
    let (_, receipt, _, handover) = paid(h.charge(&payment).await);
    assert!(receipt.success && handover.is_none(), "{receipt:?}");
    let again = h.charge(&payment).await;
    assert_eq!(refused(&again), "invalid_exact_evm_nonce_already_used", "served once");
    assert_eq!((h.runs.load(Ordering::SeqCst), h.chain.transfers.load(Ordering::SeqCst)), (2, 1));
    let records = h.payments().await;
    assert_eq!((records[0].status, records[0].error.as_deref()), (PaymentStatus::Settled, None));
}

on_both!(a_volume_payer_may_pay_its_discounted_price_and_is_recorded_at_it);
async fn a_volume_payer_may_pay_its_discounted_price_and_is_recorded_at_it(store: Store) {
    let h = Harness::new(store);
    h.seed_paid_calls(100).await;
    assert_eq!(h.paywall.payer_tier(&payer_id()).await.expect("tier"), DiscountTier::Volume);
    let discounted = DiscountTier::Volume.apply(PRICE);
    assert_eq!(discounted, Money::from_atomic(400_000));
    let outcome = h.charge(&decode(&h.signed_at(&h.requirement(discounted, BASE), 1, NOW_MS))).await;
    assert!(matches!(outcome, Outcome::Paid { .. }), "{outcome:?}");
    assert_eq!(h.payments().await[0].amount, discounted.atomic(), "recorded at the price paid");
    assert_eq!(h.wallet_credits().await, None, "a discounted price owes nothing back");

    let whale = DiscountTier::Whale.apply(PRICE);
    let below = h.charge(&decode(&h.signed_at(&h.requirement(whale, BASE), 2, NOW_MS))).await;
    assert_eq!(refused(&below), "No matching payment requirements", "below its tier's price");
    let discounted_payment = decode(&h.signed_at(&h.requirement(discounted, BASE), 3, NOW_MS));
    let not_data = h.charge_for(sale(PRICE, false), &discounted_payment, Ok(())).await;
    assert_eq!(refused(&not_data), "No matching payment requirements", "a sale without discounts");
}

on_both!(a_standard_payer_cannot_pay_a_discounted_price);
async fn a_standard_payer_cannot_pay_a_discounted_price(store: Store) {
    let h = Harness::new(store);
    h.seed_paid_calls(99).await;
    assert_eq!(h.paywall.payer_tier(&payer_id()).await.expect("tier"), DiscountTier::Standard);
    let discounted = DiscountTier::Volume.apply(PRICE);
    let outcome = h.charge(&decode(&h.signed_at(&h.requirement(discounted, BASE), 1, NOW_MS))).await;
    assert_eq!(refused(&outcome), "No matching payment requirements");
}

on_both!(a_volume_payer_that_pays_the_list_price_gets_the_difference_back_once_per_payment);
async fn a_volume_payer_that_pays_the_list_price_gets_the_difference_back_once_per_payment(store: Store) {
    let h = Harness::new(store);
    h.seed_paid_calls(100).await;
    let payment = with_payment_id(&h.pay(1), "pay_rebated_once_01");
    assert!(matches!(h.charge(&payment).await, Outcome::Paid { .. }));
    assert_eq!(h.wallet_credits().await, Some(100_000), "20% of 0.50 back, on the wallet's new account");
    assert!(matches!(h.charge(&payment).await, Outcome::Kept { .. }));
    assert_eq!(h.wallet_credits().await, Some(100_000), "a kept answer is not rebated again");
    assert!(matches!(h.charge(&h.pay(2)).await, Outcome::Paid { .. }));
    assert_eq!(h.wallet_credits().await, Some(200_000), "two payments, two rebates");
    // A sale without discounts owes no rebate.
    assert!(matches!(h.charge_for(sale(PRICE, false), &h.pay(3), Ok(())).await, Outcome::Paid { .. }));
    assert_eq!(h.wallet_credits().await, Some(200_000));
}

on_both!(a_standard_payer_gets_no_rebate_and_no_account);
async fn a_standard_payer_gets_no_rebate_and_no_account(store: Store) {
    let h = Harness::new(store);
    h.seed_paid_calls(98).await;
    assert!(matches!(h.charge(&h.pay(1)).await, Outcome::Paid { .. }));
    assert_eq!(h.wallet_credits().await, None, "the 99th call is at the standard tier");
    assert!(matches!(h.charge(&h.pay(2)).await, Outcome::Paid { .. }));
    assert_eq!(h.wallet_credits().await, None, "the 100th call is priced by the 99 before it");
    assert!(matches!(h.charge(&h.pay(3)).await, Outcome::Paid { .. }));
    assert_eq!(h.wallet_credits().await, Some(100_000), "the 101st is the first rebated");
}

on_both!(the_requirements_price_every_network_offered_in_its_own_units);
async fn the_requirements_price_every_network_offered_in_its_own_units(store: Store) {
    let h = Harness::new(store);
    let requirements = h.paywall.requirements(PRICE);
    let networks: Vec<&str> = requirements.iter().map(|r| r.network.as_str()).collect();
    assert_eq!(networks, [BASE, SOLANA]);
    assert!(requirements.iter().all(|r| r.amount == "500000" && r.scheme == "exact"));
    assert_eq!(h.paywall.offer().networks().len(), 2);
}
