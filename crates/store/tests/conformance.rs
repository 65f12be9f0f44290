//! The store's conformance suite: every test is written once and runs on SQLite (a temp
//! file) and on PostgreSQL when `TEST_DATABASE_URL` is set, each PostgreSQL test in its own
//! fresh schema so tests run in parallel.

use svc_store::{
    Backend, Debit, FinishedLlmCall, LlmAccount, LlmCap, LlmHold, NewApiKey, NewCredit, NewLlmCall, NewPayment,
    PaymentStatus, Reservation, Store, StoreError, TokenStat, Usage,
};

/// Declares `name` (an `async fn(Store)`) as two tests: `name::on_sqlite`, always, and
/// `name::on_postgres`, which runs when `TEST_DATABASE_URL` is set and says it skipped otherwise.
macro_rules! conformance {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn on_sqlite() {
                svc_store::testing::Fixture::sqlite().await.run(super::$name).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn on_postgres() {
                if let Some(fixture) = svc_store::testing::Fixture::postgres().await {
                    fixture.run(super::$name).await;
                }
            }
        }
    };
}

const PAYER: &str = "0x2c75aa27a0e1f0b3e0e1f0b3e0e1f0b3e0e15c23";

fn payment(id: &str, nonce: &str, at: i64) -> NewPayment {
    NewPayment {
        id: id.into(),
        route_id: "alpha.top_picks".into(),
        network: "eip155:8453".into(),
        payer: PAYER.into(),
        nonce: nonce.into(),
        amount: 500_000,
        asset: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913".into(),
        pay_to: "0x209693bc6afc0c5328ba36faf03c514ef312287c".into(),
        valid_before: Some(at / 1000 + 300),
        now_ms: at,
        holder: None,
    }
}

conformance!(migrations_are_idempotent);
async fn migrations_are_idempotent(store: Store) {
    store.migrate().await.expect("second run");
    store.migrate().await.expect("third run");
    assert_eq!(store.reserve_payment(&payment("m1", "0x01", 1)).await.expect("tables work"), Reservation::Reserved);
}

conformance!(ping_answers_and_debug_names_only_the_backend);
async fn ping_answers_and_debug_names_only_the_backend(store: Store) {
    store.ping().await.expect("ping");
    let backend = store.backend();
    assert!(matches!(backend, Backend::Sqlite | Backend::Postgres));
    assert_eq!(format!("{store:?}"), format!("Store {{ backend: {backend:?} }}"));
}

conformance!(a_nonce_is_reserved_once_and_the_duplicate_names_the_first_payment);
async fn a_nonce_is_reserved_once_and_the_duplicate_names_the_first_payment(store: Store) {
    assert_eq!(store.reserve_payment(&payment("p1", "0xaa", 1)).await.expect("reserve"), Reservation::Reserved);
    match store.reserve_payment(&payment("p2", "0xaa", 2)).await.expect("reserve") {
        Reservation::Duplicate(first) => {
            assert_eq!(first.id, "p1");
            assert_eq!(first.status, PaymentStatus::Reserved);
            assert_eq!(first.amount, 500_000);
            assert_eq!(Some(*first), store.payment("p1").await.expect("read"));
        }
        other => panic!("expected a duplicate, got {other:?}"),
    }
    // Same nonce on another network is another authorization.
    let mut other = payment("p3", "0xaa", 3);
    other.network = "eip155:84532".into();
    assert_eq!(store.reserve_payment(&other).await.expect("reserve"), Reservation::Reserved);
}

conformance!(fifty_concurrent_reservations_of_one_nonce_let_exactly_one_through);
async fn fifty_concurrent_reservations_of_one_nonce_let_exactly_one_through(store: Store) {
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move { store.reserve_payment(&payment(&format!("c{i}"), "0xbb", i)).await })
        })
        .collect();
    let mut winners = 0;
    let mut duplicates = Vec::new();
    for task in tasks {
        match task.await.expect("join").expect("reserve") {
            Reservation::Reserved => winners += 1,
            Reservation::Duplicate(first) => duplicates.push(first.id),
        }
    }
    assert_eq!(winners, 1);
    let stored = store.payments_by_payer(PAYER, 100).await.expect("list");
    assert_eq!(stored.len(), 1, "only the winner is stored");
    assert!(duplicates.iter().all(|id| *id == stored[0].id), "every loser is shown the winner");
}

conformance!(a_released_nonce_can_be_reserved_again_but_a_settled_one_never_is);
async fn a_released_nonce_can_be_reserved_again_but_a_settled_one_never_is(store: Store) {
    store.reserve_payment(&payment("r1", "0xcc", 1)).await.expect("reserve");
    assert!(store.release_payment("r1").await.expect("release"));
    assert!(!store.release_payment("r1").await.expect("release twice"));
    assert_eq!(store.reserve_payment(&payment("r2", "0xcc", 2)).await.expect("retry"), Reservation::Reserved);
    assert!(store.finish_payment("r2", PaymentStatus::Settled, Some("0xtx"), None, 3).await.expect("finish"));
    assert!(!store.release_payment("r2").await.expect("release settled"));
    let settled = store.payment("r2").await.expect("read").expect("exists");
    assert_eq!(
        (settled.status, settled.tx_hash.as_deref(), settled.updated_at),
        (PaymentStatus::Settled, Some("0xtx"), 3)
    );
}

conformance!(a_transaction_is_noted_only_on_a_reserved_payment);
async fn a_transaction_is_noted_only_on_a_reserved_payment(store: Store) {
    store.reserve_payment(&payment("n1", "0xee", 1)).await.expect("reserve");
    assert!(store.note_transaction("n1", "5sig").await.expect("note"));
    let noted = store.payment("n1").await.expect("read").expect("exists");
    assert_eq!((noted.status, noted.tx_hash.as_deref()), (PaymentStatus::Reserved, Some("5sig")));
    assert!(store.finish_payment("n1", PaymentStatus::Settled, Some("5sig"), None, 2).await.expect("finish"));
    assert!(!store.note_transaction("n1", "other").await.expect("note a finished one"));
    assert!(!store.note_transaction("missing", "5sig").await.expect("note a missing one"));
    let settled = store.payment("n1").await.expect("read").expect("exists");
    assert_eq!(settled.tx_hash.as_deref(), Some("5sig"));
}

conformance!(a_payment_is_finished_exactly_once);
async fn a_payment_is_finished_exactly_once(store: Store) {
    store.reserve_payment(&payment("f0", "0xd0", 1)).await.expect("reserve");
    assert!(matches!(
        store.finish_payment("f0", PaymentStatus::Reserved, None, None, 2).await,
        Err(StoreError::OutOfRange(_))
    ));
    store.reserve_payment(&payment("f1", "0xdd", 1)).await.expect("reserve");
    assert!(store.finish_payment("f1", PaymentStatus::Failed, None, Some("settle_failed"), 2).await.expect("finish"));
    assert!(!store.finish_payment("f1", PaymentStatus::Settled, Some("0x"), None, 3).await.expect("again"));
    assert_eq!(store.payment("f1").await.expect("read").map(|p| p.status), Some(PaymentStatus::Failed));
    assert_eq!(store.payment("nope").await.expect("read"), None);
}

conformance!(a_payers_payments_come_newest_first_and_paid_calls_count_in_the_window);
async fn a_payers_payments_come_newest_first_and_paid_calls_count_in_the_window(store: Store) {
    for (i, status) in [PaymentStatus::Settled, PaymentStatus::Unsettled, PaymentStatus::Failed, PaymentStatus::Settled]
        .into_iter()
        .enumerate()
    {
        let id = format!("w{i}");
        let at = 1_000 * (i as i64 + 1);
        store.reserve_payment(&payment(&id, &format!("0xe{i}"), at)).await.expect("reserve");
        store.finish_payment(&id, status, None, None, at).await.expect("finish");
    }
    let payer = PAYER;
    let ids: Vec<String> = store.payments_by_payer(payer, 3).await.expect("list").into_iter().map(|p| p.id).collect();
    assert_eq!(ids, ["w3", "w2", "w1"]);
    assert_eq!(store.count_settled_payments_since(payer, 0, None, u64::MAX).await.expect("count"), 3);
    let from_2000 = store.count_settled_payments_since(payer, 2_000, None, u64::MAX).await.expect("count");
    assert_eq!(from_2000, 2, "window start is inclusive");
    assert_eq!(store.count_settled_payments_since(payer, 4_001, None, u64::MAX).await.expect("count"), 0);
    assert_eq!(store.count_settled_payments_since("0xsomeoneelse", 0, None, u64::MAX).await.expect("count"), 0);
    let besides = store.count_settled_payments_since(payer, 0, Some("w3"), u64::MAX).await.expect("count");
    assert_eq!(besides, 2, "the payment being priced is left out");
    assert_eq!(
        store.count_settled_payments_since(payer, 0, None, 2).await.expect("count"),
        2,
        "counted as far as asked"
    );
    assert_eq!(
        store.count_settled_payments_since(payer, 0, Some("w2"), u64::MAX).await.expect("count"),
        3,
        "failed: not counted"
    );
}

conformance!(usage_counts_and_spend_respect_the_window);
async fn usage_counts_and_spend_respect_the_window(store: Store) {
    for (i, amount) in [12_000u64, 500_000, 5_000].into_iter().enumerate() {
        let usage = Usage {
            id: format!("u{i}"),
            caller: "wallet:0xabc".into(),
            route_id: "social.search".into(),
            channel: "x402".into(),
            amount,
            at_ms: 100 * (i as i64 + 1),
        };
        store.record_usage(&usage).await.expect("record");
    }
    assert_eq!(store.count_usage_since("wallet:0xabc", 0).await.expect("count"), 3);
    assert_eq!(store.count_usage_since("wallet:0xabc", 200).await.expect("count"), 2);
    assert_eq!(store.spend_since("wallet:0xabc", 200).await.expect("spend"), 505_000);
    assert_eq!(store.spend_since("ip:127.0.0.1", 0).await.expect("spend"), 0);
}

conformance!(token_stats_upsert_replaces_and_list_by_rank);
async fn token_stats_upsert_replaces_and_list_by_rank(store: Store) {
    let stat = |symbol: &str, rank: i32, price: &str| TokenStat {
        chain: "solana".into(),
        address: format!("{symbol}-mint"),
        symbol: symbol.into(),
        name: symbol.into(),
        price_usd: price.into(),
        change_24h_pct: None,
        volume_24h_usd: Some("10".into()),
        market_cap_usd: None,
        liquidity_usd: None,
        rank,
        updated_at: 5,
    };
    store.upsert_token_stat(&stat("B", 2, "1")).await.expect("upsert");
    store.upsert_token_stat(&stat("A", 1, "2")).await.expect("upsert");
    store.upsert_token_stat(&stat("B", 3, "1.5")).await.expect("replace");
    let rows = store.token_stats(10).await.expect("list");
    assert_eq!(
        rows.iter().map(|r| (r.symbol.as_str(), r.price_usd.as_str())).collect::<Vec<_>>(),
        [("A", "2"), ("B", "1.5")]
    );
    assert_eq!(store.token_stats(1).await.expect("list").len(), 1);
}

conformance!(amounts_beyond_bigint_are_refused_not_wrapped);
async fn amounts_beyond_bigint_are_refused_not_wrapped(store: Store) {
    let mut huge = payment("o1", "0xf0", 1);
    huge.amount = u64::MAX;
    assert!(matches!(store.reserve_payment(&huge).await, Err(StoreError::OutOfRange(_))));
    huge.amount = i64::MAX as u64;
    assert_eq!(store.reserve_payment(&huge).await.expect("largest amount fits"), Reservation::Reserved);
    assert_eq!(store.payment("o1").await.expect("read").map(|p| p.amount), Some(i64::MAX as u64));
}

#[tokio::test]
async fn an_unsupported_url_is_refused_without_echoing_its_password() {
    let err = Store::connect("mysql://user:secret@host/db").await.expect_err("refused");
    assert!(matches!(&err, StoreError::UnsupportedUrl { scheme } if scheme == "mysql"));
    assert!(!err.to_string().contains("secret"), "{err}");
    assert!(!format!("{err:?}").contains("secret"), "{err:?}");
}

#[tokio::test]
async fn a_malformed_postgres_url_is_refused_without_echoing_its_password() {
    for url in ["postgres://user:secret@host:notaport/db", "secret@host:5432", "postgresql://user:secret@[::1/db"] {
        let err = Store::connect(url).await.expect_err("refused");
        assert!(!err.to_string().contains("secret"), "{url}: {err}");
        assert!(!format!("{err:?}").contains("secret"), "{url}: {err:?}");
    }
}

#[tokio::test]
async fn a_sqlite_url_creates_the_file_and_memory_urls_keep_their_data() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("nested-ok.db");
    let store = Store::connect(&format!("sqlite://{}", path.display())).await.expect("connect");
    store.migrate().await.expect("migrate");
    assert!(path.exists());
    assert_eq!(store.backend().to_string(), "sqlite");
    store.close().await;

    let memory = Store::connect("sqlite::memory:").await.expect("memory");
    memory.migrate().await.expect("migrate");
    memory.reserve_payment(&payment("mem1", "0x99", 1)).await.expect("reserve");
    assert!(memory.payment("mem1").await.expect("read").is_some());
}

/// The writer never checkpoints (a commit that did would sync the database file while every
/// payment in its batch waited); a task of its own folds the WAL back within seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_writes_reach_the_database_file_through_the_background_checkpoint() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("svc.db");
    let store = Store::open_sqlite_file(&path).await.expect("open");
    store.migrate().await.expect("migrate");
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let before = std::fs::metadata(&path).expect("db file").len();
    let writes = (0..2000).map(|i| {
        let store = store.clone();
        async move { store.reserve_payment(&payment(&format!("ck{i}"), &format!("0xck{i}"), 1)).await.expect("reserve") }
    });
    futures::future::join_all(writes).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::metadata(&path).expect("db file").len() <= before {
        assert!(std::time::Instant::now() < deadline, "the WAL was never checkpointed into {}", path.display());
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(store.payment("ck1999").await.expect("read").is_some());
    store.close().await;
}

conformance!(a_paid_answer_is_kept_once_per_payment_id_and_expires);
async fn a_paid_answer_is_kept_once_per_payment_id_and_expires(store: Store) {
    let answer = svc_store::PaidResponse {
        payment_id: "pay_0123456789abcdef".into(),
        network: "eip155:8453".into(),
        payer: "0xaa".into(),
        nonce: "0x01".into(),
        payload_digest: "ab".repeat(32),
        body: br#"{"picks":{}}"#.to_vec(),
        payment_response: "eyJzdWNjZXNzIjp0cnVlfQ==".into(),
        created_at: 1_000,
    };
    assert!(store.save_paid_response(&answer).await.expect("save"));
    let other = svc_store::PaidResponse { nonce: "0x02".into(), body: b"{}".to_vec(), ..answer.clone() };
    assert!(!store.save_paid_response(&other).await.expect("save"), "the first answer wins");
    assert_eq!(store.paid_response(&answer.payment_id, 1_000).await.expect("read"), Some(answer.clone()));
    assert_eq!(store.paid_response(&answer.payment_id, 1_001).await.expect("read"), None, "older than asked");
    assert_eq!(store.prune_paid_responses(1_001).await.expect("prune"), 1);
    assert_eq!(store.paid_response(&answer.payment_id, 0).await.expect("read"), None);
    // Delivered: forgotten at once, once.
    assert!(store.save_paid_response(&answer).await.expect("save"));
    assert!(store.forget_paid_response(&answer.payment_id).await.expect("forget"));
    assert!(!store.forget_paid_response(&answer.payment_id).await.expect("forget"), "once");
    assert_eq!(store.paid_response(&answer.payment_id, 0).await.expect("read"), None);
}

conformance!(a_process_is_stopped_once_not_seen_since_the_bound_or_never_seen);
async fn a_process_is_stopped_once_not_seen_since_the_bound_or_never_seen(store: Store) {
    store.beat_instance("pw_a", 5_000).await.expect("beat");
    assert!(!store.instance_stopped("pw_a", 5_000).await.expect("read"), "seen at the bound");
    assert!(store.instance_stopped("pw_a", 5_001).await.expect("read"), "silent since");
    assert!(store.instance_stopped("pw_never", 0).await.expect("read"), "never seen");
}

conformance!(pending_and_abandoned_payments_are_reconciled_once_and_a_withheld_answer_claimed_once);
async fn pending_and_abandoned_payments_are_reconciled_once_and_a_withheld_answer_claimed_once(store: Store) {
    store.reserve_payment(&payment("p1", "0xe1", 1_000)).await.expect("reserve");
    assert!(
        store
            .finish_payment("p1", PaymentStatus::Pending, Some("0xtx"), Some("settlement_pending"), 2_000)
            .await
            .expect("pending")
    );
    store.reserve_payment(&NewPayment { valid_before: None, ..payment("p2", "0xe2", 1_000) }).await.expect("reserve");
    store.reserve_payment(&payment("p3", "0xe3", 9_000)).await.expect("reserve");
    store.reserve_payment(&payment("p4", "0xe4", 1_000)).await.expect("reserve");
    assert!(store.finish_payment("p4", PaymentStatus::Settled, Some("0xok"), None, 1_500).await.expect("settled"));

    // Pending always; reserved only when older than the cut-off; finished never.
    let due = store.payments_to_reconcile(5_000, i64::MIN, None, 10).await.expect("due");
    let ids: Vec<&str> = due.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["p2", "p1"]);
    // Each comes with when its authorization expires, where it has a bound, for the
    // reconciler to tell "not yet" from "never".
    let bounds: Vec<Option<i64>> = due.iter().map(|p| p.valid_before).collect();
    assert_eq!(bounds, [None, Some(301)]);
    // Paged: what follows the first is the second, then nothing.
    let first = store.payments_to_reconcile(5_000, i64::MIN, None, 1).await.expect("page");
    let next =
        store.payments_to_reconcile(5_000, i64::MIN, Some((first[0].updated_at, &first[0].id)), 1).await.expect("page");
    assert_eq!((first[0].id.as_str(), next[0].id.as_str()), ("p2", "p1"));
    let last =
        store.payments_to_reconcile(5_000, i64::MIN, Some((next[0].updated_at, &next[0].id)), 1).await.expect("page");
    assert!(last.is_empty());

    assert!(matches!(
        store.resolve_payment("p1", PaymentStatus::Settled, PaymentStatus::Failed, None, None, 3_000).await,
        Err(StoreError::OutOfRange(_))
    ));
    assert!(
        store
            .resolve_payment(
                "p1",
                PaymentStatus::Pending,
                PaymentStatus::Settled,
                None,
                Some(svc_store::ANSWER_WITHHELD),
                3_000
            )
            .await
            .expect("resolve")
    );
    assert!(
        !store
            .resolve_payment("p1", PaymentStatus::Pending, PaymentStatus::Failed, None, None, 3_001)
            .await
            .expect("twice")
    );
    let p1 = store.payment("p1").await.expect("read").expect("p1");
    assert_eq!((p1.status, p1.tx_hash.as_deref()), (PaymentStatus::Settled, Some("0xtx")), "the tx hash is kept");

    let claims = futures::future::join_all((0..8).map(|_| store.claim_withheld_answer("p1", 4_000))).await;
    assert_eq!(claims.into_iter().filter(|c| matches!(c, Ok(true))).count(), 1);
    assert!(!store.claim_withheld_answer("p4", 4_000).await.expect("not withheld"));
    assert!(store.restore_withheld_answer("p1", 4_100).await.expect("given back"));
    assert!(store.claim_withheld_answer("p1", 4_200).await.expect("owed again"));
    let key = store.payment_by_key("eip155:8453", PAYER, "0xe1").await.expect("by key").map(|p| p.id);
    assert_eq!(key.as_deref(), Some("p1"));
    assert_eq!(store.payments_to_reconcile(5_000, i64::MIN, None, 10).await.expect("due").len(), 1, "p2 is left");
}

conformance!(credits_are_granted_once_per_reference_and_debits_never_overdraw);
async fn credits_are_granted_once_per_reference_and_debits_never_overdraw(store: Store) {
    store.create_account("acc-1", "Ada", Some("0xabc"), 1_000).await.expect("account");
    assert!(store.create_account("acc-2", "Bob", Some("0xabc"), 1_000).await.is_err(), "one account per wallet");
    assert!(
        store
            .add_credits(&NewCredit {
                id: "g-1",
                account_id: "acc-1",
                amount: 50_000,
                kind: "grant",
                route_id: None,
                reference: Some("grant:1"),
                now_ms: 1_001
            })
            .await
            .expect("grant")
    );
    assert!(
        !store
            .add_credits(&NewCredit {
                id: "g-2",
                account_id: "acc-1",
                amount: 50_000,
                kind: "grant",
                route_id: None,
                reference: Some("grant:1"),
                now_ms: 1_002
            })
            .await
            .expect("again")
    );
    assert_eq!(store.account("acc-1").await.expect("read").expect("exists").balance, 50_000);

    assert_eq!(store.debit_credits("d-1", "acc-1", 30_000, "r", None, 1_003).await.expect("debit"), Debit::Taken);
    assert_eq!(
        store.debit_credits("d-2", "acc-1", 30_000, "r", None, 1_004).await.expect("debit"),
        Debit::Insufficient { balance: 20_000 }
    );
    assert!(
        store
            .add_credits(&NewCredit {
                id: "f-1",
                account_id: "acc-1",
                amount: 30_000,
                kind: "refund",
                route_id: Some("r"),
                reference: Some("refund:d-1"),
                now_ms: 1_005
            })
            .await
            .expect("refund")
    );
    assert!(
        !store
            .add_credits(&NewCredit {
                id: "f-2",
                account_id: "acc-1",
                amount: 30_000,
                kind: "refund",
                route_id: Some("r"),
                reference: Some("refund:d-1"),
                now_ms: 1_006
            })
            .await
            .expect("twice")
    );
    assert_eq!(store.account("acc-1").await.expect("read").expect("exists").balance, 50_000);
    assert_eq!(store.debit_credits("d-3", "acc-1", 20_000, "r", None, 1_007).await.expect("debit"), Debit::Taken);
    assert_eq!(
        store.credit_calls_since("acc-1", 0).await.expect("calls"),
        (1, 20_000),
        "the refunded call does not count"
    );
    assert_eq!(store.credit_calls_since("acc-1", 1_007).await.expect("calls"), (1, 20_000));
    assert_eq!(store.credit_calls_since("acc-1", 1_008).await.expect("calls"), (0, 0));
    assert_eq!(store.count_credit_calls_since("acc-1", 0, 10).await.expect("count"), 1, "refunds aside");
    store.debit_credits("d-4", "acc-1", 1_000, "r", None, 1_008).await.expect("debit");
    assert_eq!(store.count_credit_calls_since("acc-1", 0, 1).await.expect("count"), 1, "counted up to the cap");
    assert_eq!(store.count_credit_calls_since("acc-1", 0, 10).await.expect("count"), 2);
    let kinds: Vec<String> = store.ledger("acc-1", 10).await.expect("ledger").into_iter().map(|e| e.kind).collect();
    assert_eq!(kinds, ["call", "call", "refund", "call", "grant"], "newest first, refused debits leave no entry");
}

conformance!(a_hundred_concurrent_debits_on_a_balance_for_ten_take_exactly_ten);
async fn a_hundred_concurrent_debits_on_a_balance_for_ten_take_exactly_ten(store: Store) {
    store.create_account("acc", "Ada", None, 0).await.expect("account");
    store
        .add_credits(&NewCredit {
            id: "g",
            account_id: "acc",
            amount: 200_000,
            kind: "grant",
            route_id: None,
            reference: None,
            now_ms: 0,
        })
        .await
        .expect("grant");
    let debits = (0..100).map(|i| {
        let store = store.clone();
        tokio::spawn(async move {
            store.debit_credits(&format!("d-{i}"), "acc", 20_000, "r", None, 1).await.expect("debit")
        })
    });
    let outcomes = futures::future::join_all(debits).await;
    let taken = outcomes.iter().filter(|o| matches!(o, Ok(Debit::Taken))).count();
    assert_eq!(taken, 10);
    assert_eq!(store.account("acc").await.expect("read").expect("exists").balance, 0);
}

conformance!(api_keys_are_found_by_hash_listed_without_it_and_revoked_once);
async fn api_keys_are_found_by_hash_listed_without_it_and_revoked_once(store: Store) {
    store.create_account("acc", "Ada", None, 0).await.expect("account");
    let key = NewApiKey {
        id: "key-1".into(),
        account_id: "acc".into(),
        name: "laptop".into(),
        prefix: "svc_ab12".into(),
        hash: "f".repeat(64),
        scopes: "data".into(),
        created_at: 5,
        expires_at: Some(99),
    };
    store.create_api_key(&key).await.expect("key");
    assert!(store.create_api_key(&NewApiKey { id: "key-2".into(), ..key.clone() }).await.is_err(), "hash is unique");
    let found = store.api_key_by_hash(&"f".repeat(64)).await.expect("read").expect("found");
    assert_eq!((found.id.as_str(), found.expires_at, found.revoked_at), ("key-1", Some(99), None));
    assert_eq!(store.api_keys("acc").await.expect("list").len(), 1);
    assert!(!store.revoke_api_key("other", "key-1", 7).await.expect("revoke"), "only its owner revokes it");
    assert!(store.revoke_api_key("acc", "key-1", 7).await.expect("revoke"));
    assert!(!store.revoke_api_key("acc", "key-1", 8).await.expect("revoke"), "once");
    assert_eq!(store.api_key_by_hash(&"f".repeat(64)).await.expect("read").expect("found").revoked_at, Some(7));
}

conformance!(a_sign_in_nonce_is_used_once_and_never_after_it_expires);
async fn a_sign_in_nonce_is_used_once_and_never_after_it_expires(store: Store) {
    store.create_sign_in_nonce("n-live", 10_000, 1_000).await.expect("create");
    store.create_sign_in_nonce("n-old", 2_000, 1_000).await.expect("create");
    let uses = futures::future::join_all((0..20).map(|_| store.use_sign_in_nonce("n-live", 5_000))).await;
    assert_eq!(uses.into_iter().filter(|u| *u.as_ref().expect("use")).count(), 1, "racing uses sign in once");
    assert!(!store.use_sign_in_nonce("n-old", 2_000).await.expect("use"), "expired at its expiry");
    assert!(!store.use_sign_in_nonce("n-unknown", 1_500).await.expect("use"));
    store.create_sign_in_nonce("n-next", 20_000, 3_000).await.expect("create sweeps expired");
    assert!(!store.use_sign_in_nonce("n-old", 1_500).await.expect("use"), "swept nonces are gone");
}

conformance!(signal_snapshots_keep_the_first_per_instant_and_list_oldest_first);
async fn signal_snapshots_keep_the_first_per_instant_and_list_oldest_first(store: Store) {
    assert_eq!(store.latest_signal_snapshot().await.expect("latest"), None);
    assert_eq!(store.latest_signal_snapshot_at().await.expect("latest at"), None);
    store.put_signal_snapshot(2_000, r#"{"n":2}"#).await.expect("put");
    store.put_signal_snapshot(1_000, r#"{"n":1}"#).await.expect("put");
    store.put_signal_snapshot(3_000, r#"{"n":3}"#).await.expect("put");
    store.put_signal_snapshot(3_000, r#"{"n":"racing replica"}"#).await.expect("duplicate ignored");
    let latest = store.latest_signal_snapshot().await.expect("latest").expect("some");
    assert_eq!((latest.generated_at, latest.body.as_str()), (3_000, r#"{"n":3}"#));
    assert_eq!(store.latest_signal_snapshot_at().await.expect("latest at"), Some(3_000));
    let since = store.signal_snapshots_since(1_500, 10).await.expect("since");
    assert_eq!(since.iter().map(|s| s.generated_at).collect::<Vec<_>>(), vec![2_000, 3_000]);
    let newest_one = store.signal_snapshots_since(0, 1).await.expect("limit");
    assert_eq!(newest_one.iter().map(|s| s.generated_at).collect::<Vec<_>>(), vec![3_000]);
}

conformance!(one_replica_at_a_time_leads_the_signal_engine);
async fn one_replica_at_a_time_leads_the_signal_engine(store: Store) {
    let first = store.try_lead_signal_engine().await.expect("try").expect("the first try leads");
    match store.backend() {
        svc_store::Backend::Postgres => {
            assert!(store.try_lead_signal_engine().await.expect("try").is_none(), "a second replica waits");
            drop(first);
            // The lease's session closes with it; the server notices within moments.
            let mut took_over = false;
            for _ in 0..50 {
                if store.try_lead_signal_engine().await.expect("try").is_some() {
                    took_over = true;
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            assert!(took_over, "another replica takes over once the leader is gone");
        }
        svc_store::Backend::Sqlite => {
            assert!(store.try_lead_signal_engine().await.expect("try").is_some(), "one process always leads");
        }
    }
}

/// An account holding `amount` credits.
async fn funded(store: &Store, id: &str, amount: u64) {
    store.create_account(id, id, None, 1_000).await.expect("account");
    let grant = NewCredit {
        id: &format!("g-{id}"),
        account_id: id,
        amount,
        kind: "grant",
        route_id: None,
        reference: Some(&format!("grant:{id}")),
        now_ms: 1_000,
    };
    store.add_credits(&grant).await.expect("grant");
}

fn llm_call<'a>(id: &'a str, account_id: &'a str, reserved: u64, now_ms: i64) -> NewLlmCall<'a> {
    NewLlmCall {
        id,
        account_id,
        alias: "svc-default",
        provider: "openai",
        upstream_model: "openai/gpt-4.1-mini",
        stream: true,
        reserved,
        cap: None,
        now_ms,
    }
}

fn finished(status: &str, cost: u64, now_ms: i64) -> FinishedLlmCall<'_> {
    FinishedLlmCall {
        status,
        prompt_tokens: 10,
        cached_tokens: 2,
        completion_tokens: 5,
        cost,
        latency_ms: 7,
        note: None,
        now_ms,
    }
}

conformance!(an_llm_call_holds_its_most_and_gives_back_the_rest_once);
async fn an_llm_call_holds_its_most_and_gives_back_the_rest_once(store: Store) {
    funded(&store, "acc-l", 1_000).await;
    assert_eq!(store.begin_llm_call(&llm_call("llm_1", "acc-l", 600, 2_000)).await.expect("begin"), LlmHold::Taken);
    assert_eq!(store.account("acc-l").await.expect("read").expect("account").balance, 400);
    let refused = store.begin_llm_call(&llm_call("llm_2", "acc-l", 600, 2_001)).await.expect("begin");
    assert_eq!(refused, LlmHold::Insufficient { balance: 400 });
    assert!(store.finish_llm_call("llm_1", &finished("ok", 150, 3_000)).await.expect("finish"));
    assert!(!store.finish_llm_call("llm_1", &finished("ok", 0, 3_001)).await.expect("again"), "finished once");
    assert_eq!(store.account("acc-l").await.expect("read").expect("account").balance, 850);
    let usage = store.llm_usage_since("acc-l", 0).await.expect("usage");
    assert_eq!((usage.calls, usage.prompt_tokens, usage.completion_tokens, usage.spent), (1, 10, 5, 150));
    let calls = store.llm_calls("acc-l", 10).await.expect("calls");
    let statuses: Vec<&str> = calls.iter().map(|c| c.status.as_str()).collect();
    assert_eq!(statuses, ["insufficient", "ok"], "newest first, the refused one recorded too");
}

conformance!(a_running_llm_call_counts_its_hold_and_a_stale_one_is_found);
async fn a_running_llm_call_counts_its_hold_and_a_stale_one_is_found(store: Store) {
    funded(&store, "acc-s", 1_000).await;
    store.begin_llm_call(&llm_call("llm_old", "acc-s", 300, 1_000)).await.expect("begin");
    store.begin_llm_call(&llm_call("llm_new", "acc-s", 200, 9_000)).await.expect("begin");
    assert_eq!(store.llm_usage_since("acc-s", 0).await.expect("usage").spent, 500);
    assert_eq!(store.stale_llm_calls(5_000, 10).await.expect("stale"), ["llm_old"]);
    store.finish_llm_call("llm_old", &finished("abandoned", 0, 10_000)).await.expect("release");
    assert_eq!(store.account("acc-s").await.expect("read").expect("account").balance, 800);
    assert!(store.stale_llm_calls(5_000, 10).await.expect("stale").is_empty());
}

conformance!(a_hundred_concurrent_llm_holds_on_a_balance_for_ten_take_exactly_ten);
async fn a_hundred_concurrent_llm_holds_on_a_balance_for_ten_take_exactly_ten(store: Store) {
    funded(&store, "acc-c", 1_000).await;
    let holds = (0..100).map(|i| {
        let store = store.clone();
        async move { store.begin_llm_call(&llm_call(&format!("llm_{i}"), "acc-c", 100, 2_000)).await.expect("begin") }
    });
    let taken = futures::future::join_all(holds).await.into_iter().filter(|d| *d == LlmHold::Taken).count();
    assert_eq!(taken, 10);
    assert_eq!(store.account("acc-c").await.expect("read").expect("account").balance, 0);
}

/// A call of `reserved` under a cap of `limit` a day from `since_ms`.
fn capped_call<'a>(id: &'a str, account_id: &'a str, reserved: u64, limit: u64, now_ms: i64) -> NewLlmCall<'a> {
    NewLlmCall { cap: Some(LlmCap { limit, since_ms: 1_500 }), ..llm_call(id, account_id, reserved, now_ms) }
}

conformance!(a_hundred_concurrent_llm_holds_per_account_never_pass_the_daily_cap);
async fn a_hundred_concurrent_llm_holds_per_account_never_pass_the_daily_cap(store: Store) {
    // Two accounts, each with credits for every hold and a cap for ten of them, all at once.
    let ids: Vec<(String, &str)> =
        (0..200).map(|i| (format!("llm_{i}"), if i % 2 == 0 { "acc-a" } else { "acc-b" })).collect();
    for account in ["acc-a", "acc-b"] {
        funded(&store, account, 1_000_000).await;
    }
    let holds = ids.iter().map(|(id, account)| {
        let store = store.clone();
        async move { store.begin_llm_call(&capped_call(id, account, 100, 1_000, 2_000)).await.expect("begin") }
    });
    let held = futures::future::join_all(holds).await;
    for (account, parity) in [("acc-a", 0), ("acc-b", 1)] {
        let mine: Vec<LlmHold> = held.iter().skip(parity).step_by(2).copied().collect();
        assert_eq!(mine.iter().filter(|h| **h == LlmHold::Taken).count(), 10, "{account}");
        assert!(mine.iter().all(|h| matches!(h, LlmHold::Taken | LlmHold::OverCap)), "{account}: {mine:?}");
        assert_eq!(store.llm_usage_since(account, 1_500).await.expect("usage").spent, 1_000, "{account}");
        let balance = store.account(account).await.expect("read").expect("account").balance;
        assert_eq!(balance, 1_000_000 - 1_000, "{account}: only the admitted calls hold credits");
        assert_eq!(store.llm_calls(account, 1_000).await.expect("calls").len(), 10, "a refused call leaves no row");
    }
}

conformance!(the_daily_cap_counts_holds_then_costs_from_its_day_on);
async fn the_daily_cap_counts_holds_then_costs_from_its_day_on(store: Store) {
    funded(&store, "acc-d", 1_000).await;
    // Yesterday's call does not count; a call the balance refused holds nothing.
    store.begin_llm_call(&llm_call("llm_old", "acc-d", 500, 1_000)).await.expect("begin");
    store.finish_llm_call("llm_old", &finished("ok", 400, 1_100)).await.expect("finish");
    let broke = store.begin_llm_call(&capped_call("llm_broke", "acc-d", 5_000, 10_000, 2_000)).await.expect("begin");
    assert_eq!(broke, LlmHold::Insufficient { balance: 600 });
    let cap = |id, reserved| capped_call(id, "acc-d", reserved, 500, 2_000);
    assert_eq!(store.begin_llm_call(&cap("llm_1", 300)).await.expect("begin"), LlmHold::Taken);
    assert_eq!(store.begin_llm_call(&cap("llm_2", 201)).await.expect("begin"), LlmHold::OverCap);
    assert_eq!(store.begin_llm_call(&cap("llm_3", 200)).await.expect("begin"), LlmHold::Taken, "up to the cap");
    assert_eq!(store.begin_llm_call(&cap("llm_4", 1)).await.expect("begin"), LlmHold::OverCap);
    // A finished call counts what it cost, so what it gave back is room again.
    store.finish_llm_call("llm_1", &finished("ok", 100, 2_100)).await.expect("finish");
    store.finish_llm_call("llm_3", &finished("failed", 0, 2_100)).await.expect("finish");
    assert_eq!(store.begin_llm_call(&cap("llm_5", 400)).await.expect("begin"), LlmHold::Taken);
    assert_eq!(store.llm_usage_since("acc-d", 1_500).await.expect("usage").spent, 500);
}

conformance!(llm_token_versions_rotate_and_top_up_settings_replace);
async fn llm_token_versions_rotate_and_top_up_settings_replace(store: Store) {
    store.create_account("acc-t", "t", None, 1_000).await.expect("account");
    assert_eq!(store.llm_account("acc-t").await.expect("read"), LlmAccount::default());
    assert_eq!(store.rotate_llm_token("acc-t", 2_000).await.expect("rotate"), 1);
    store.set_llm_top_up("acc-t", true, 5_000_000, 2_001).await.expect("set");
    assert_eq!(store.rotate_llm_token("acc-t", 2_002).await.expect("rotate"), 2);
    store.set_llm_top_up("acc-t", false, 1_000_000, 2_003).await.expect("set");
    let settings = store.llm_account("acc-t").await.expect("read");
    assert_eq!(settings, LlmAccount { token_version: 2, top_up_enabled: false, top_up_amount: 1_000_000 });
}

conformance!(a_late_finish_after_the_sweep_records_what_the_ledger_kept);
async fn a_late_finish_after_the_sweep_records_what_the_ledger_kept(store: Store) {
    funded(&store, "acc-r", 1_000).await;
    store.begin_llm_call(&llm_call("llm_r", "acc-r", 600, 1_000)).await.expect("begin");
    // The sweep gives the whole hold back; the call's own finish, arriving late, changes nothing.
    assert!(store.finish_llm_call("llm_r", &finished("abandoned", 0, 5_000)).await.expect("sweep"));
    assert!(!store.finish_llm_call("llm_r", &finished("ok", 200, 5_001)).await.expect("late"));
    assert_eq!(store.account("acc-r").await.expect("read").expect("account").balance, 1_000);
    let call = store.llm_calls("acc-r", 1).await.expect("calls").remove(0);
    assert_eq!((call.status.as_str(), call.cost), ("abandoned", 0));
    // A finish that stopped between its two writes: the release is there, the row still
    // reserved; the sweep records the cost the release implies and gives nothing twice.
    store.begin_llm_call(&llm_call("llm_half", "acc-r", 500, 6_000)).await.expect("begin");
    store
        .execute_unprepared(
            "INSERT INTO credit_ledger (id, account_id, delta, kind, route_id, reference, created_at) \
             VALUES ('cl_llm_half_release', 'acc-r', 300, 'llm_release', 'svc-default', 'llm-release:llm_half', 6001)",
        )
        .await
        .expect("half a finish");
    assert!(store.finish_llm_call("llm_half", &finished("abandoned", 0, 9_000)).await.expect("sweep"));
    assert_eq!(store.account("acc-r").await.expect("read").expect("account").balance, 800);
    let call = store.llm_calls("acc-r", 1).await.expect("calls").remove(0);
    assert_eq!((call.id.as_str(), call.cost), ("llm_half", 200), "the record agrees with the ledger");
}

fn new_gateway<'a>(id: &'a str, account_id: &'a str, now_ms: i64) -> svc_store::NewGateway<'a> {
    svc_store::NewGateway {
        id,
        account_id,
        template: "analyst",
        node: "node-a",
        backend: "local",
        memory_mb: 2048,
        now_ms,
    }
}

conformance!(an_account_has_one_active_gateway_and_its_moves_are_compare_and_set);
async fn an_account_has_one_active_gateway_and_its_moves_are_compare_and_set(store: Store) {
    funded(&store, "acc-g", 1_000).await;
    use svc_store::GatewayCreated;
    assert_eq!(
        store.create_gateway(&new_gateway("gw_1", "acc-g", 1_000)).await.expect("create"),
        GatewayCreated::Created
    );
    match store.create_gateway(&new_gateway("gw_2", "acc-g", 1_001)).await.expect("second") {
        GatewayCreated::Active(active) => assert_eq!(active.id, "gw_1", "the conflict names the running one"),
        other => panic!("a second active gateway: {other:?}"),
    }
    assert_eq!(store.reserved_gateway_memory("node-a").await.expect("reserved"), 2048);
    assert_eq!(store.reserved_gateway_memory("node-b").await.expect("reserved"), 0);
    assert!(store.advance_gateway("gw_1", "provisioning", "configuring", 1_100).await.expect("advance"));
    assert!(!store.advance_gateway("gw_1", "provisioning", "configuring", 1_101).await.expect("again"), "moved once");
    assert!(store.request_gateway_stop("gw_1", "stopped by its owner", 1_200).await.expect("stop"));
    assert!(!store.request_gateway_stop("gw_1", "credits ran out", 1_201).await.expect("stop"), "first reason stands");
    assert!(!store.advance_gateway("gw_1", "configuring", "starting", 1_202).await.expect("late"), "a stop wins");
    assert!(store.end_gateway("gw_1", "stopped", None, 1_300).await.expect("end"));
    assert!(!store.end_gateway("gw_1", "failed", Some("late crash"), 1_301).await.expect("end"), "ended once");
    let ended = store.gateway("gw_1").await.expect("read").expect("row");
    assert_eq!((ended.state.as_str(), ended.reason.as_deref()), ("stopped", Some("stopped by its owner")));
    assert_eq!(ended.ended_at, Some(1_300));
    assert!(store.active_gateway("acc-g").await.expect("active").is_none());
    assert_eq!(store.create_gateway(&new_gateway("gw_3", "acc-g", 2_000)).await.expect("new"), GatewayCreated::Created);
    assert_eq!(store.latest_gateway("acc-g").await.expect("latest").expect("row").id, "gw_3");
    let on_node: Vec<String> =
        store.active_gateways_on("node-a").await.expect("list").into_iter().map(|g| g.id).collect();
    assert_eq!(on_node, ["gw_3"]);
}

conformance!(the_keys_of_ended_gateways_left_live_are_found);
async fn the_keys_of_ended_gateways_left_live_are_found(store: Store) {
    funded(&store, "acc-k", 0).await;
    let key = |id: &str| NewApiKey {
        id: id.into(),
        account_id: "acc-k".into(),
        name: "gateway".into(),
        prefix: "svck_x".into(),
        hash: format!("hash-{id}"),
        scopes: "gateway:read".into(),
        created_at: 1,
        expires_at: None,
    };
    for (gateway, key_id) in [("gw_k1", "key_k1"), ("gw_k2", "key_k2")] {
        store.create_api_key(&key(key_id)).await.expect("key");
        store.create_gateway(&new_gateway(gateway, "acc-k", 1)).await.expect("gateway");
        store.set_gateway_key(gateway, key_id).await.expect("set key");
        store.end_gateway(gateway, "stopped", None, 2).await.expect("end");
    }
    store.revoke_api_key("acc-k", "key_k1", 3).await.expect("revoke");
    assert_eq!(store.unrevoked_gateway_keys(10).await.expect("find"), [("acc-k".to_owned(), "key_k2".to_owned())]);
    store.create_api_key(&key("key_k3")).await.expect("key");
    store.create_gateway(&new_gateway("gw_k3", "acc-k", 4)).await.expect("running one");
    store.set_gateway_key("gw_k3", "key_k3").await.expect("set key");
    assert_eq!(store.unrevoked_gateway_keys(10).await.expect("find").len(), 1, "a running gateway's key stays");
}

conformance!(a_gateway_period_is_billed_once_and_never_past_the_balance);
async fn a_gateway_period_is_billed_once_and_never_past_the_balance(store: Store) {
    funded(&store, "acc-b", 250).await;
    store.create_gateway(&new_gateway("gw_b", "acc-b", 1_000)).await.expect("create");
    assert_eq!(store.bill_gateway("gw_b", "acc-b", 0, 100, 1_000).await.expect("bill"), Debit::Taken);
    assert_eq!(store.bill_gateway("gw_b", "acc-b", 0, 100, 1_001).await.expect("again"), Debit::Taken);
    assert_eq!(store.bill_gateway("gw_b", "acc-b", 1, 100, 2_000).await.expect("bill"), Debit::Taken);
    assert_eq!(
        store.bill_gateway("gw_b", "acc-b", 2, 100, 3_000).await.expect("bill"),
        Debit::Insufficient { balance: 50 }
    );
    assert_eq!(store.gateway_credits_burnt("gw_b").await.expect("burnt"), 200, "period 0 taken once");
    assert_eq!(store.account("acc-b").await.expect("read").expect("account").balance, 50);
}

fn telegram_bot(account_id: &str, token_hash: &str) -> svc_store::TelegramBot {
    svc_store::TelegramBot {
        account_id: account_id.into(),
        token_hash: token_hash.into(),
        token_sealed: vec![1, 2, 3, 0, 255],
        bot_id: 4242,
        username: "svc_test_bot".into(),
        secret_hash: "ab".repeat(32),
        allowed_groups: "[]".into(),
        relay_status: "set".into(),
        created_at: 1_000,
        updated_at: 1_000,
    }
}

conformance!(a_bot_belongs_to_one_account_and_its_updates_are_kept_once_until_confirmed);
async fn a_bot_belongs_to_one_account_and_its_updates_are_kept_once_until_confirmed(store: Store) {
    use svc_store::BotSaved;
    funded(&store, "acc-t1", 0).await;
    funded(&store, "acc-t2", 0).await;
    assert_eq!(store.save_telegram_bot(&telegram_bot("acc-t1", "hash-a")).await.expect("save"), BotSaved::Saved);
    assert_eq!(
        store.save_telegram_bot(&telegram_bot("acc-t2", "hash-a")).await.expect("save"),
        BotSaved::TakenByAnother
    );
    assert_eq!(store.save_telegram_bot(&telegram_bot("acc-t1", "hash-b")).await.expect("replace"), BotSaved::Saved);
    assert_eq!(store.save_telegram_bot(&telegram_bot("acc-t2", "hash-a")).await.expect("freed"), BotSaved::Saved);
    let bot = store.telegram_bot("acc-t1").await.expect("read").expect("bot");
    assert_eq!((bot.token_hash.as_str(), bot.token_sealed.as_slice()), ("hash-b", &[1u8, 2, 3, 0, 255][..]));
    assert_eq!(store.telegram_bot_by_hash("hash-a").await.expect("read").expect("bot").account_id, "acc-t2");
    store.set_telegram_relay_status("acc-t1", "failed: refused").await.expect("status");
    assert_eq!(store.telegram_bot("acc-t1").await.expect("read").expect("bot").relay_status, "failed: refused");

    assert!(store.add_telegram_update("hash-b", 7, "{\"update_id\":7}", 1).await.expect("add"));
    assert!(!store.add_telegram_update("hash-b", 7, "{\"update_id\":7}", 2).await.expect("again"), "once");
    assert!(store.add_telegram_update("hash-b", 9, "{\"update_id\":9}", 3).await.expect("add"));
    assert!(store.add_telegram_update("hash-a", 7, "{}", 3).await.expect("another bot's 7"));
    let ids = |rows: Vec<(i64, String)>| rows.into_iter().map(|r| r.0).collect::<Vec<_>>();
    assert_eq!(ids(store.telegram_updates("hash-b", 0, 100).await.expect("read")), [7, 9]);
    assert_eq!(ids(store.telegram_updates("hash-b", 0, 1).await.expect("read")), [7]);
    assert_eq!(store.confirm_telegram_updates("hash-b", 8).await.expect("confirm"), 1);
    assert_eq!(ids(store.telegram_updates("hash-b", 0, 100).await.expect("read")), [9]);
    assert_eq!(ids(store.telegram_updates("hash-a", 0, 100).await.expect("read")), [7]);
    assert_eq!(store.drop_stale_telegram_updates("hash-b", 4).await.expect("drop"), 1, "9 came at 3");
    assert!(store.telegram_updates("hash-b", 0, 100).await.expect("read").is_empty());
    assert_eq!(ids(store.telegram_updates("hash-a", 0, 100).await.expect("read")), [7], "another bot's stay");
}

fn listing(description: &str) -> svc_store::AgentListing {
    svc_store::AgentListing {
        name: "Flow explainer".into(),
        category: "research".into(),
        tags: "[\"flows\"]".into(),
        description: description.into(),
        examples: "[]".into(),
        capabilities: "[]".into(),
        input_schema: "{\"type\":\"object\"}".into(),
        backend: "https".into(),
        endpoint: "https://agent.example.com/".into(),
        timeout_ms: 30_000,
    }
}

/// A seller's agent selling at `price`, owned by account `account`.
async fn selling_agent(store: &Store, id: &str, account: &str, price: u64) {
    store.create_account(account, account, None, 1_000).await.expect("account");
    store
        .create_seller_agent(id, account, &listing("Answers questions about flows."), &[9, 9], 1_000)
        .await
        .expect("agent");
    assert!(store.set_seller_config(id, account, "{}", true, price, 1_000).await.expect("config"));
}

fn seller_call<'a>(id: &'a str, agent: &'a str, nonce: &'a str, price: u64, fee: u64) -> svc_store::NewSellerCall<'a> {
    svc_store::NewSellerCall {
        id,
        agent_id: agent,
        network: "eip155:8453",
        payer: PAYER,
        nonce,
        price,
        fee,
        now_ms: 2_000,
    }
}

conformance!(an_agent_is_its_owners_alone_and_a_deleted_one_is_gone_but_kept);
async fn an_agent_is_its_owners_alone_and_a_deleted_one_is_gone_but_kept(store: Store) {
    selling_agent(&store, "agt_1", "acc-s1", 50_000).await;
    store.create_account("acc-s2", "acc-s2", None, 1_000).await.expect("account");
    assert!(!store.update_seller_agent("agt_1", "acc-s2", &listing("mine now"), 2_000).await.expect("update"));
    assert!(!store.set_seller_config("agt_1", "acc-s2", "{}", false, 1, 2_000).await.expect("config"));
    assert!(!store.set_seller_secret("agt_1", "acc-s2", &[1], 2_000).await.expect("secret"));
    assert!(!store.delete_seller_agent("agt_1", "acc-s2", 2_000).await.expect("delete"));
    let agent = store.seller_agent("agt_1").await.expect("read").expect("agent");
    assert_eq!((agent.account_id.as_str(), agent.price, agent.x402_enabled), ("acc-s1", 50_000, true));
    assert_eq!(agent.secret_sealed, vec![9, 9]);
    assert!(
        store
            .update_seller_agent("agt_1", "acc-s1", &listing("Explains flows, step by step."), 3_000)
            .await
            .expect("update")
    );
    assert_eq!(store.seller_agents("acc-s1").await.expect("list").len(), 1);
    assert!(store.seller_agents("acc-s2").await.expect("list").is_empty());
    assert!(store.delete_seller_agent("agt_1", "acc-s1", 4_000).await.expect("delete"));
    assert!(store.seller_agent("agt_1").await.expect("read").is_none());
    assert!(store.seller_agents("acc-s1").await.expect("list").is_empty());
}

conformance!(a_call_earns_once_settled_or_not_and_is_listed_by_paid_calls);
async fn a_call_earns_once_settled_or_not_and_is_listed_by_paid_calls(store: Store) {
    selling_agent(&store, "agt_e", "acc-e", 50_000).await;
    assert!(store.listable_seller_agents(None, (20, 2000)).await.expect("list").is_empty(), "no paid call yet");
    store.record_seller_call(&seller_call("sc_1", "agt_e", "0x01", 50_000, 5_000)).await.expect("record");
    store
        .record_seller_call(&seller_call("sc_1b", "agt_e", "0x01", 50_000, 5_000))
        .await
        .expect("a second record is a no-op");
    store.record_seller_call(&seller_call("sc_2", "agt_e", "0x02", 50_000, 0)).await.expect("record");
    let key = |nonce| ("eip155:8453", PAYER, nonce);
    assert!(store.earn_seller_call(key("0x01"), true, 3_000).await.expect("earn"));
    assert!(!store.earn_seller_call(key("0x01"), true, 3_000).await.expect("earn"), "once");
    assert!(store.earn_seller_call(key("0x02"), false, 3_000).await.expect("earn"));
    let agent = store.seller_agent("agt_e").await.expect("read").expect("agent");
    assert_eq!((agent.balance, agent.unsettled, agent.total_earned, agent.paid_calls), (45_000, 50_000, 95_000, 2));
    assert_eq!(store.seller_earned_since("agt_e", 0).await.expect("since"), (95_000, 2));
    assert_eq!(store.seller_earned_since("agt_e", 2_001).await.expect("since"), (0, 0));
    let listed = store.listable_seller_agents(Some("research"), (20, 2000)).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert!(store.listable_seller_agents(Some("trading"), (20, 2000)).await.expect("list").is_empty());
    assert!(store.listable_seller_agents(None, (40, 2000)).await.expect("list").is_empty(), "description too short");
    // A call left served is found with its payment's fate; a dropped one earns if its payment comes back.
    store.record_seller_call(&seller_call("sc_3", "agt_e", "0x03", 50_000, 0)).await.expect("record");
    let served = store.served_seller_calls(10_000, 10).await.expect("served");
    assert_eq!(served.len(), 1);
    assert_eq!((served[0].nonce.as_str(), served[0].payment_status.as_deref()), ("0x03", None));
    assert!(store.drop_seller_call(key("0x03"), 4_000).await.expect("drop"));
    assert!(store.served_seller_calls(10_000, 10).await.expect("served").is_empty());
    assert!(store.earn_seller_call(key("0x03"), true, 5_000).await.expect("late earn"));
    assert_eq!(store.seller_agent("agt_e").await.expect("read").expect("agent").balance, 95_000);
    let fee_above_price = seller_call("sc_4", "agt_e", "0x04", 1, 2);
    assert!(matches!(store.record_seller_call(&fee_above_price).await, Err(StoreError::OutOfRange(_))));
}

conformance!(fifty_concurrent_withdrawals_take_exactly_the_balance_and_a_failed_one_gives_it_back);
async fn fifty_concurrent_withdrawals_take_exactly_the_balance_and_a_failed_one_gives_it_back(store: Store) {
    selling_agent(&store, "agt_w", "acc-w", 10).await;
    for n in 0..10u8 {
        let nonce = format!("0x{n:02x}");
        store.record_seller_call(&seller_call(&format!("sc_{n}"), "agt_w", &nonce, 10, 0)).await.expect("record");
        assert!(store.earn_seller_call(("eip155:8453", PAYER, &nonce), true, 3_000).await.expect("earn"));
    }
    assert_eq!(store.seller_agent("agt_w").await.expect("read").expect("agent").balance, 100);
    let attempts = (0..50).map(|n| {
        let store = store.clone();
        tokio::spawn(async move {
            let id = format!("wd_{n}");
            let withdrawal = svc_store::NewWithdrawal {
                id: &id,
                agent_id: "agt_w",
                amount: 3,
                destination: "0x209693bc6afc0c5328ba36faf03c514ef312287c",
                network: "eip155:8453",
                status: "queued",
                automatic: false,
                now_ms: 4_000,
            };
            store.create_withdrawal(&withdrawal).await.expect("withdraw")
        })
    });
    let taken = futures::future::join_all(attempts).await;
    let ok = taken.iter().filter(|t| matches!(t, Ok(svc_store::WithdrawalTaken::Taken))).count();
    assert_eq!(ok, 33, "100 / 3");
    assert_eq!(store.seller_agent("agt_w").await.expect("read").expect("agent").balance, 1);
    assert_eq!(store.pending_withdrawals("agt_w").await.expect("pending"), 99);
    let queued = store.withdrawals_in("queued", 100).await.expect("queued");
    assert_eq!(queued.len(), 33);
    let failed = svc_store::WithdrawalMove {
        from: "queued",
        to: "failed",
        tx_hash: None,
        error: Some("refused"),
        now_ms: 5_000,
    };
    assert!(store.move_withdrawal(&queued[0].id, failed).await.expect("fail"));
    assert!(!store.move_withdrawal(&queued[0].id, failed).await.expect("fail"), "once");
    assert_eq!(store.seller_agent("agt_w").await.expect("read").expect("agent").balance, 4, "given back");
    let paid =
        svc_store::WithdrawalMove { from: "queued", to: "paid", tx_hash: Some("0xtx"), error: None, now_ms: 5_000 };
    assert!(store.move_withdrawal(&queued[1].id, paid).await.expect("paid"));
    assert_eq!(store.withdrawal(&queued[1].id).await.expect("read").expect("row").tx_hash.as_deref(), Some("0xtx"));
    assert_eq!(store.pending_withdrawals("agt_w").await.expect("pending"), 93);
    assert!(!store.delete_seller_agent("agt_w", "acc-w", 6_000).await.expect("delete"), "money is still on it");
}

conformance!(a_daily_limit_counts_across_callers_and_gives_back);
async fn a_daily_limit_counts_across_callers_and_gives_back(store: Store) {
    let attempts = (0..20).map(|_| {
        let store = store.clone();
        tokio::spawn(async move { store.take_daily_call("agt_d", 7, 5).await.expect("take") })
    });
    let taken = futures::future::join_all(attempts).await.into_iter().filter(|t| matches!(t, Ok(true))).count();
    assert_eq!(taken, 5);
    assert_eq!(store.daily_calls("agt_d", 7).await.expect("count"), 5);
    store.give_back_daily_call("agt_d", 7).await.expect("give back");
    assert!(store.take_daily_call("agt_d", 7, 5).await.expect("take"));
    assert!(store.take_daily_call("agt_d", 8, 5).await.expect("a new day"));
    assert_eq!(store.daily_calls("agt_d", 9).await.expect("count"), 0);
}

conformance!(a_reservation_whose_process_stopped_beating_is_due_at_once);
async fn a_reservation_whose_process_stopped_beating_is_due_at_once(store: Store) {
    store.beat_instance("pw_live", 9_000).await.expect("beat");
    store.beat_instance("pw_gone", 1_000).await.expect("beat");
    for (id, holder) in [("h1", Some("pw_gone")), ("h2", Some("pw_live")), ("h3", Some("pw_never_seen")), ("h4", None)]
    {
        let new = NewPayment { holder: holder.map(str::to_owned), ..payment(id, &format!("0x{id}"), 8_000) };
        assert_eq!(store.reserve_payment(&new).await.expect("reserve"), Reservation::Reserved);
    }
    // Nothing is old enough to be abandoned by age; only the silent process's reservation is due.
    let due = store.payments_to_reconcile(0, 5_000, None, 10).await.expect("due");
    assert_eq!(due.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(), vec!["h1"]);
    store.beat_instance("pw_gone", 10_000).await.expect("it was only slow");
    assert!(store.payments_to_reconcile(0, 5_000, None, 10).await.expect("due").is_empty());
    // A day of silence forgets a process; its reservations fall back to the age rule.
    store.beat_instance("pw_live", 10_000 + 86_400_001).await.expect("beat");
    assert!(store.payments_to_reconcile(0, 5_000, None, 10).await.expect("due").is_empty());
}

conformance!(a_call_earns_in_the_statement_that_records_its_payment_once);
async fn a_call_earns_in_the_statement_that_records_its_payment_once(store: Store) {
    selling_agent(&store, "agt_p", "acc-p", 50_000).await;
    for (id, nonce, status) in [("pp1", "0xp1", PaymentStatus::Settled), ("pp2", "0xp2", PaymentStatus::Unsettled)] {
        let new = NewPayment { route_id: "seller:agt_p".into(), amount: 50_000, ..payment(id, nonce, 2_000) };
        assert_eq!(store.reserve_payment(&new).await.expect("reserve"), Reservation::Reserved);
        store
            .record_seller_call(&seller_call(&format!("sc_{id}"), "agt_p", nonce, 50_000, 1_000))
            .await
            .expect("record");
        assert!(store.finish_payment(id, status, None, None, 3_000).await.expect("finish"));
    }
    // A failed payment earns nothing; a settled one earned once, however often it is told.
    let failed = NewPayment { route_id: "seller:agt_p".into(), ..payment("pp3", "0xp3", 2_000) };
    store.reserve_payment(&failed).await.expect("reserve");
    store.record_seller_call(&seller_call("sc_pp3", "agt_p", "0xp3", 50_000, 1_000)).await.expect("record");
    assert!(store.finish_payment("pp3", PaymentStatus::Failed, None, Some("settle"), 3_000).await.expect("finish"));
    assert!(!store.earn_seller_call(("eip155:8453", PAYER, "0xp1"), true, 4_000).await.expect("earn"), "once");
    // An authorization spent on another product earns the agent nothing, whatever call it names.
    let elsewhere = payment("pp4", "0xp4", 2_000);
    store.reserve_payment(&elsewhere).await.expect("reserve");
    store.record_seller_call(&seller_call("sc_pp4", "agt_p", "0xp4", 50_000, 1_000)).await.expect("record");
    assert!(store.finish_payment("pp4", PaymentStatus::Settled, None, None, 3_000).await.expect("finish"));
    let agent = store.seller_agent("agt_p").await.expect("read").expect("agent");
    assert_eq!((agent.balance, agent.unsettled, agent.total_earned, agent.paid_calls), (49_000, 49_000, 98_000, 2));
}

conformance!(a_console_session_lives_until_it_ends_or_expires);
async fn a_console_session_lives_until_it_ends_or_expires(store: Store) {
    use svc_store::NewConsoleSession;
    store.create_account("acc-s", "Sam", None, 1_000).await.expect("account");
    let new = |hash: &'static str, expires_at| NewConsoleSession {
        hash,
        account_id: "acc-s",
        key_id: None,
        csrf: "token",
        now_ms: 1_000,
        expires_at,
    };
    store.create_console_session(&new("h1", 5_000)).await.expect("session");
    store.create_console_session(&new("h2", 5_000)).await.expect("session");
    let found = store.console_session("h1", 4_999).await.expect("read").expect("live");
    assert_eq!((found.account_id.as_str(), found.key_id, found.csrf.as_str()), ("acc-s", None, "token"));
    assert!(store.console_session("h1", 5_000).await.expect("read").is_none(), "expired");
    assert!(store.end_console_session("h2").await.expect("end"));
    assert!(!store.end_console_session("h2").await.expect("end"), "ends once");
    assert!(store.console_session("h2", 1_001).await.expect("read").is_none());
    assert!(store.console_session("unknown", 1_001).await.expect("read").is_none());
}

conformance!(daily_spend_sums_credits_and_settled_payments_by_day_product_and_rail);
async fn daily_spend_sums_credits_and_settled_payments_by_day_product_and_rail(store: Store) {
    const DAY: i64 = 86_400_000;
    store.create_account("acc-d", "Dee", Some(PAYER), 0).await.expect("account");
    let credit = |id: &'static str, amount, kind, now_ms| NewCredit {
        id,
        account_id: "acc-d",
        amount,
        kind,
        route_id: None,
        reference: Some(id),
        now_ms,
    };
    store.add_credits(&credit("g", 1_000_000, "grant", 10)).await.expect("grant");
    store.debit_credits("c1", "acc-d", 3_000, "alpha.top_picks", None, DAY + 5).await.expect("debit");
    store.debit_credits("c2", "acc-d", 2_000, "agentbox.gateway", None, DAY + 6).await.expect("debit");
    store.add_credits(&credit("r1", 1_000, "refund", DAY + 7)).await.expect("refund");
    store.reserve_payment(&payment("p1", "0x01", 2 * DAY + 1)).await.expect("reserve");
    store.finish_payment("p1", PaymentStatus::Settled, Some("0xtx"), None, 2 * DAY + 2).await.expect("settle");
    store.reserve_payment(&payment("p2", "0x02", 2 * DAY + 3)).await.expect("reserve");
    store.finish_payment("p2", PaymentStatus::Failed, None, Some("no"), 2 * DAY + 4).await.expect("fail");
    let mut purchase = payment("p3", "0x03", 2 * DAY + 5);
    purchase.route_id = "credits.purchase".into();
    store.reserve_payment(&purchase).await.expect("reserve");
    store.finish_payment("p3", PaymentStatus::Settled, None, None, 2 * DAY + 6).await.expect("settle");

    let spent = store.daily_spend("acc-d", Some(PAYER), "credits.purchase", 0).await.expect("spend");
    let rows: Vec<(i64, &str, &str, i64)> =
        spent.iter().map(|s| (s.day, s.rail.as_str(), s.product.as_str(), s.amount)).collect();
    assert_eq!(rows, [(1, "credits", "data", 2_000), (1, "credits", "sandbox", 2_000), (2, "x402", "data", 500_000)]);
    let later = store.daily_spend("acc-d", Some(PAYER), "credits.purchase", 2 * DAY).await.expect("spend");
    assert_eq!(later.len(), 1, "the window starts where asked: {later:?}");
    let other = store.daily_spend("acc-d", None, "credits.purchase", 0).await.expect("spend");
    assert_eq!(other.len(), 2, "without a wallet, no payments: {other:?}");
}

conformance!(the_daily_roll_up_counts_each_of_many_concurrent_debits_and_settlements_once);
async fn the_daily_roll_up_counts_each_of_many_concurrent_debits_and_settlements_once(store: Store) {
    store.create_account("acc-r", "Ro", Some(PAYER), 0).await.expect("account");
    let grant = NewCredit {
        id: "g",
        account_id: "acc-r",
        amount: 1_000_000,
        kind: "grant",
        route_id: None,
        reference: Some("g"),
        now_ms: 1,
    };
    store.add_credits(&grant).await.expect("grant");
    let mut tasks = Vec::new();
    for n in 0..40_i64 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store
                .debit_credits(&format!("c{n}"), "acc-r", 1_000, "alpha.top_picks", None, 100 + n)
                .await
                .expect("debit");
            let id = format!("p{n}");
            store.reserve_payment(&payment(&id, &format!("0x{n:02x}"), 200 + n)).await.expect("reserve");
            let status = if n % 4 == 0 { PaymentStatus::Failed } else { PaymentStatus::Settled };
            store.finish_payment(&id, status, None, None, 300 + n).await.expect("finish");
        }));
    }
    for task in tasks {
        task.await.expect("task");
    }
    let spent = store.daily_spend("acc-r", Some(PAYER), "credits.purchase", 0).await.expect("spend");
    let rows: Vec<(i64, &str, &str, i64)> =
        spent.iter().map(|s| (s.day, s.rail.as_str(), s.product.as_str(), s.amount)).collect();
    assert_eq!(rows, [(0, "credits", "data", 40_000), (0, "x402", "data", 30 * 500_000)]);
}

conformance!(a_keys_use_is_written_at_most_once_a_minute);
async fn a_keys_use_is_written_at_most_once_a_minute(store: Store) {
    store.create_account("acc-u", "Uma", None, 0).await.expect("account");
    let key = NewApiKey {
        id: "key-u".into(),
        account_id: "acc-u".into(),
        name: "bot".into(),
        prefix: "svc_u".into(),
        hash: "e".repeat(64),
        scopes: "data".into(),
        created_at: 5,
        expires_at: None,
    };
    store.create_api_key(&key).await.expect("key");
    let last_used = || async { store.api_key("key-u").await.expect("read").expect("key").last_used_at };
    assert_eq!(last_used().await, None);
    store.key_used("key-u", 1_000).await.expect("use");
    store.key_used("key-u", 59_999).await.expect("use");
    assert_eq!(last_used().await, Some(1_000), "not again within the minute");
    store.key_used("key-u", 61_000).await.expect("use");
    assert_eq!(last_used().await, Some(61_000));
}

conformance!(an_accounts_calls_come_from_both_rails_newest_first_filtered_and_paged);
async fn an_accounts_calls_come_from_both_rails_newest_first_filtered_and_paged(store: Store) {
    use svc_store::CallFilter;
    store.create_account("acc-c", "Cy", Some(PAYER), 0).await.expect("account");
    store.create_account("acc-o", "Other", None, 0).await.expect("account");
    for account in ["acc-c", "acc-o"] {
        let grant = NewCredit {
            id: if account == "acc-c" { "gc" } else { "go" },
            account_id: account,
            amount: 1_000_000,
            kind: "grant",
            route_id: None,
            reference: Some(if account == "acc-c" { "gc" } else { "go" }),
            now_ms: 1,
        };
        store.add_credits(&grant).await.expect("grant");
    }
    store.debit_credits("c1", "acc-c", 3_000, "alpha.top_picks", None, 10).await.expect("debit");
    store.debit_credits("c2", "acc-c", 2_000, "alpha.exodus", None, 30).await.expect("debit");
    let refund = NewCredit {
        id: "r2",
        account_id: "acc-c",
        amount: 2_000,
        kind: "refund",
        route_id: Some("alpha.exodus"),
        reference: Some("refund:c2"),
        now_ms: 31,
    };
    store.add_credits(&refund).await.expect("refund");
    store.debit_credits("o1", "acc-o", 3_000, "alpha.top_picks", None, 15).await.expect("debit");
    store.reserve_payment(&payment("p1", "0x01", 20)).await.expect("reserve");
    store.finish_payment("p1", PaymentStatus::Settled, Some("0xtx"), None, 25).await.expect("settle");
    let rebate = NewCredit {
        id: "rb1",
        account_id: "acc-c",
        amount: 100_000,
        kind: "rebate",
        route_id: Some("alpha.top_picks"),
        reference: Some("rebate:p1"),
        now_ms: 26,
    };
    store.add_credits(&rebate).await.expect("rebate");
    store.debit_credits("c3", "acc-c", 1_000, "alpha.exodus", Some("key_k"), 40).await.expect("debit");

    let all = store.account_calls("acc-c", Some(PAYER), "credits.purchase", &CallFilter::default(), 10).await;
    let all = all.expect("calls");
    let seen: Vec<(&str, &str, &str, i64)> =
        all.iter().map(|c| (c.id.as_str(), c.rail.as_str(), c.status.as_str(), c.amount)).collect();
    assert_eq!(
        seen,
        [
            ("c3", "credits", "charged", 1_000),
            ("c2", "credits", "refunded", 2_000),
            ("p1", "x402", "settled", 500_000),
            ("c1", "credits", "charged", 3_000)
        ]
    );
    assert_eq!((all[2].latency_ms, all[2].tx_hash.as_deref(), all[2].rebate), (Some(5), Some("0xtx"), Some(100_000)));
    assert_eq!((all[0].key_id.as_deref(), all[0].rebate, all[1].key_id.as_deref()), (Some("key_k"), None, None));
    let one = store.account_call("acc-c", Some(PAYER), "credits.purchase", "p1").await.expect("call");
    assert_eq!(one.and_then(|c| c.rebate), Some(100_000), "the call's page says it too");

    let page = |filter: CallFilter<'static>, limit| {
        let store = store.clone();
        async move {
            let calls = store.account_calls("acc-c", Some(PAYER), "credits.purchase", &filter, limit).await;
            calls.expect("calls").into_iter().map(|c| c.id).collect::<Vec<_>>()
        }
    };
    assert_eq!(page(CallFilter { rail: "x402", ..CallFilter::default() }, 10).await, ["p1"]);
    assert_eq!(page(CallFilter { status: "refunded", ..CallFilter::default() }, 10).await, ["c2"]);
    assert_eq!(page(CallFilter { route: "alpha.top_picks", ..CallFilter::default() }, 10).await, ["p1", "c1"]);
    assert_eq!(page(CallFilter::default(), 3).await, ["c3", "c2", "p1"]);
    assert_eq!(page(CallFilter { before: Some((20, "p1")), ..CallFilter::default() }, 2).await, ["c1"]);

    let mine = store.account_call("acc-c", Some(PAYER), "credits.purchase", "p1").await.expect("call");
    assert_eq!(mine.map(|c| c.rail), Some("x402".to_owned()));
    assert!(store.account_call("acc-c", Some(PAYER), "credits.purchase", "o1").await.expect("call").is_none());
    assert!(store.account_call("acc-o", None, "credits.purchase", "p1").await.expect("call").is_none());
}
