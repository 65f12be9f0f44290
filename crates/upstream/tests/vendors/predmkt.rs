//! The prediction-market adapter against the recorded wire formats and against the
//! simulator's fakes of both APIs.

use svc_catalogue::routes::predmkt::{PredmktArbitrageKind, PredmktMarket};
use svc_simulator::Fault;
use svc_simulator::world::Planted;
use svc_upstream::predmkt::{Book, ClobMarket, WireBook, WireClobMarket, WireGammaMarket};
use svc_upstream::{UpstreamError, Vendor};

use crate::support::{self, Fixture};

async fn fixture() -> Fixture {
    support::fixture(|_| {}).await
}

#[test]
fn a_recorded_catalogue_market_decodes_its_stringified_arrays() {
    let wire: WireGammaMarket =
        serde_json::from_str(include_str!("../fixtures/predmkt-gamma-market.json")).expect("decodes");
    let market = PredmktMarket::from(wire);
    assert_eq!(market.outcomes.len(), 2);
    assert_eq!((market.outcomes[0].name.as_str(), market.outcomes[0].price), ("Yes", 0.20));
    assert!(market.outcomes[1].token_id.starts_with("60487116984468020978"));
    assert!((market.volume_usd - 11_010_561.19).abs() < 1e-6);
    assert_eq!(market.end_date.expect("end").0, "2026-12-31T12:00:00Z");

    let sparse: WireGammaMarket =
        serde_json::from_str(include_str!("../fixtures/predmkt-gamma-market-sparse.json")).expect("decodes");
    let sparse = PredmktMarket::from(sparse);
    assert_eq!(sparse.outcomes[1].token_id, "53831553061883");
    assert_eq!((sparse.volume_usd, sparse.liquidity_usd), (0.0, 10_000.0));
    assert!(!sparse.active);
}

#[test]
fn a_recorded_book_decodes_with_its_levels_sorted_best_first() {
    let book =
        Book::from(serde_json::from_str::<WireBook>(include_str!("../fixtures/predmkt-clob-book.json")).expect("book"));
    let prices =
        |levels: &[svc_catalogue::routes::predmkt::PredmktLevel]| levels.iter().map(|l| l.price).collect::<Vec<_>>();
    assert_eq!(prices(&book.bids), [0.31, 0.3]);
    assert_eq!(prices(&book.asks), [0.34, 0.6]);
    assert_eq!(
        (book.tick_size, book.min_order_size, book.timestamp_ms),
        (Some(0.01), Some(5.0), Some(1_717_000_000_000))
    );
    let market = ClobMarket::from(
        serde_json::from_str::<WireClobMarket>(include_str!("../fixtures/predmkt-clob-market.json")).expect("market"),
    );
    assert_eq!(market.tokens[1].0, "No");
    assert_eq!(market.tick_size, Some(0.01));
}

#[tokio::test]
async fn search_finds_markets_by_keyword_and_pages_over_markets() {
    let f = fixture().await;
    let all = f.upstreams.predmkt.search("bitcoin", 100, 0).await.expect("search");
    assert!(all.markets.len() >= 4, "{}", all.markets.len());
    assert_eq!(all.total, all.markets.len() as u64);
    assert!(all.markets.iter().all(|m| m.outcomes.len() == 2 && m.outcomes.iter().all(|o| o.price > 0.0)));
    let second = f.upstreams.predmkt.search("Bitcoin", 2, 1).await.expect("page");
    assert_eq!(second.markets.len(), 2);
    assert_eq!(second.markets[0].condition_id, all.markets[1].condition_id);
    let none = f.upstreams.predmkt.search("no such words here", 10, 0).await.expect("empty");
    assert_eq!((none.markets.len(), none.total), (0, 0));
    assert!(
        f.sim.faults.log().iter().all(|l| l.starts_with("GET /predmkt-gamma/public-search?q=")),
        "{:?}",
        f.sim.faults.log()
    );
}

#[tokio::test]
async fn a_quote_joins_the_outcome_token_with_its_best_prices() {
    let f = fixture().await;
    let market = f.sim.world.pred_markets()[0].clone();
    let quote = f.upstreams.predmkt.quote(&market.condition_id, "no").await.expect("quote");
    let book = f.sim.world.pred_book(&market, 1);
    assert_eq!((quote.outcome.as_str(), quote.token_id.as_str()), ("No", market.token_ids[1].as_str()));
    assert_eq!(quote.buy_price, book.best_ask().map(|p| f64::from(p) / 1000.0));
    assert_eq!(quote.sell_price, book.best_bid().map(|p| f64::from(p) / 1000.0));
    let spread = quote.spread.expect("spread");
    assert!(spread > 0.0 && quote.midpoint.expect("mid") > quote.sell_price.expect("bid"));
    let calls = f.sim.faults.log().len();
    assert_eq!(calls, 4, "market, two prices and the midpoint");
    f.upstreams.predmkt.quote(&market.condition_id, "No").await.expect("cached");
    assert_eq!(f.sim.faults.log().len(), calls);
    f.clock.advance_ms(3_000);
    f.upstreams.predmkt.quote(&market.condition_id, "No").await.expect("fresh");
    assert_eq!(f.sim.faults.log().len(), calls + 3, "the token id stays cached, the prices do not");
}

#[tokio::test]
async fn an_unknown_market_or_outcome_is_not_found() {
    let f = fixture().await;
    let unknown = format!("0x{}", "ab".repeat(32));
    let err = f.upstreams.predmkt.quote(&unknown, "Yes").await.expect_err("unknown");
    assert!(matches!(err, UpstreamError::NotFound { .. }), "{err:?}");
    let err = f.upstreams.predmkt.compare(&unknown).await.expect_err("unknown");
    assert!(matches!(err, UpstreamError::NotFound { .. }), "{err:?}");
    let market = &f.sim.world.pred_markets()[1];
    let err = f.upstreams.predmkt.orderbook(&market.condition_id, "Maybe").await.expect_err("no such outcome");
    assert!(err.to_string().contains("Yes, No"), "{err}");
}

#[tokio::test]
async fn the_orderbook_is_sorted_best_first_though_the_vendor_sends_it_worst_first() {
    let f = fixture().await;
    let market = f.sim.world.pred_markets()[4].clone();
    let book = f.upstreams.predmkt.orderbook(&market.condition_id, "Yes").await.expect("book");
    let world = f.sim.world.pred_book(&market, 0);
    assert_eq!(book.bids[0].price, f64::from(world.best_bid().expect("bid")) / 1000.0);
    assert_eq!(book.asks[0].price, f64::from(world.best_ask().expect("ask")) / 1000.0);
    assert!(book.bids.windows(2).all(|w| w[0].price > w[1].price));
    assert!(book.asks.windows(2).all(|w| w[0].price < w[1].price));
    assert_eq!((book.tick_size, book.min_order_size), (0.01, 5.0));
}

#[tokio::test]
async fn compare_sets_each_displayed_price_against_its_book() {
    let f = fixture().await;
    let market = f.sim.world.pred_markets()[0].clone();
    let compared = f.upstreams.predmkt.compare(&market.condition_id).await.expect("compare");
    assert_eq!(compared.outcomes.len(), 2);
    for outcome in &compared.outcomes {
        let (bid, ask, mid) =
            (outcome.clob_bid.expect("bid"), outcome.clob_ask.expect("ask"), outcome.clob_mid.expect("mid"));
        assert!(bid < mid && mid < ask);
        assert_eq!(outcome.divergence, Some(((outcome.gamma_price - mid) * 10_000.0).round() / 10_000.0));
    }
}

#[tokio::test]
async fn the_arbitrage_scan_finds_both_planted_opportunities_and_nothing_else() {
    let f = fixture().await;
    let found = f.upstreams.predmkt.arbitrage(1.0, 20).await.expect("scan");
    assert_eq!(found.scanned_markets as usize, f.sim.world.pred_markets().len());
    assert_eq!(found.opportunities.len(), 2, "{:#?}", found.opportunities);
    let binary = found.opportunities.iter().find(|o| o.kind == PredmktArbitrageKind::Binary).expect("binary");
    let planted =
        f.sim.world.pred_markets().iter().find(|m| m.planted == Some(Planted::BinaryArbitrage)).expect("planted");
    assert_eq!(binary.id, planted.condition_id);
    assert_eq!((binary.total_cost, binary.spread_pct), (0.97, 3.0));
    assert_eq!(binary.legs.len(), 2);
    let multi = found.opportunities.iter().find(|o| o.kind == PredmktArbitrageKind::MultiOutcome).expect("multi");
    assert_eq!(multi.legs.len(), 3);
    assert!((multi.expected_profit_per_unit - 0.03).abs() < 1e-9);

    let strict = f.upstreams.predmkt.arbitrage(3.01, 20).await.expect("scan");
    assert!(strict.opportunities.is_empty());
    let exact = f.upstreams.predmkt.arbitrage(3.0, 1).await.expect("scan");
    assert_eq!(exact.opportunities.len(), 1, "limit applies; an edge of exactly the threshold counts");
}

#[tokio::test]
async fn a_catalogue_outage_is_retried_then_reported_under_the_family_name() {
    let f = fixture().await;
    f.sim.faults.push("predmkt-gamma", Fault::Status { status: 429, retry_after: Some(0) });
    f.upstreams.predmkt.search("fed", 5, 0).await.expect("retried");
    for _ in 0..3 {
        f.sim.faults.push("predmkt-clob", Fault::Status { status: 500, retry_after: None });
    }
    let err =
        f.upstreams.predmkt.orderbook(&f.sim.world.pred_markets()[0].condition_id, "Yes").await.expect_err("down");
    assert!(matches!(err, UpstreamError::Status { vendor: Vendor::PredmktClob, status: 500 }), "{err:?}");
    assert_eq!(err.vendor().family(), "predmkt");
}

#[tokio::test]
async fn the_fakes_speak_the_venues_wire_formats() {
    let f = fixture().await;
    let market = f.sim.world.pred_markets()[0].clone();
    let http = reqwest::Client::new();
    let url = format!("{}/predmkt-gamma/markets?condition_ids={}", f.base, market.condition_id);
    let listed: serde_json::Value = http.get(url).send().await.expect("sent").json().await.expect("json");
    let outcomes = listed[0]["outcomes"].as_str().expect("outcomes are a JSON array inside a string");
    assert_eq!(outcomes, r#"["Yes","No"]"#);
    assert!(listed[0]["clobTokenIds"].as_str().expect("string").contains(&market.token_ids[1]));

    let url = format!("{}/predmkt-clob/book?token_id={}", f.base, market.token_ids[0]);
    let book: serde_json::Value = http.get(url).send().await.expect("sent").json().await.expect("json");
    let bids: Vec<f64> = book["bids"]
        .as_array()
        .expect("bids")
        .iter()
        .map(|l| l["price"].as_str().expect("decimal string").parse().expect("number"))
        .collect();
    assert!(bids.windows(2).all(|w| w[0] < w[1]), "worst first, as the venue sends them: {bids:?}");
    let url = format!("{}/predmkt-clob/price?token_id={}&side=SIDEWAYS", f.base, market.token_ids[0]);
    assert_eq!(http.get(url).send().await.expect("sent").status(), 400);
}
