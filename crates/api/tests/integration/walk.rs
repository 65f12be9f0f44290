//! Every data route, paid and called once on the default world: each must answer a 200 that
//! matches its published schema. The samples come from each family's own test module, built
//! from identifiers the simulated world holds.

use axum::http::StatusCode;

use crate::support::{Sample, TestApp, assert_matches_schema};

/// Valid calls of every route that has landed, one per route.
fn samples(app: &TestApp) -> Vec<Sample> {
    let mut all = Vec::new();
    all.extend(crate::upstream::samples(app));
    all.extend(crate::perps::samples(app));
    all.extend(crate::chaindata::samples(app));
    all.extend(crate::defi::samples(app));
    all.extend(crate::predmkt::samples(app));
    all.extend(crate::social::samples(app));
    all.extend(crate::signals::samples(app));
    all
}

#[tokio::test]
async fn every_sampled_route_answers_a_schema_valid_200() {
    let app = TestApp::new().await;
    let catalogue = svc_catalogue::catalogue();
    let samples = samples(&app);
    for (index, sample) in samples.iter().enumerate() {
        let route = catalogue.get(sample.route).unwrap_or_else(|| panic!("no route {}", sample.route));
        let nonce = u8::try_from(index + 1).expect("fewer than 255 samples");
        let reply = app.pay(&sample.method, &sample.uri, sample.body.as_deref(), nonce).await;
        assert_eq!(reply.status, StatusCode::OK, "{} {}: {}", sample.route, sample.uri, reply.text());
        assert_matches_schema(&sample.method.as_str().to_lowercase(), route.path, &reply.json());
    }
    assert_eq!(app.paid_calls().await, samples.len());
}

/// Every paid data, infrastructure and signal route has a sample above, so the walk covers
/// them all.
#[tokio::test]
async fn the_walk_covers_every_data_infrastructure_and_signal_route() {
    let app = TestApp::new().await;
    let sampled: std::collections::BTreeSet<&str> = samples(&app).iter().map(|s| s.route).collect();
    let missing: Vec<&str> = svc_catalogue::catalogue()
        .routes()
        .iter()
        .filter(|r| r.is_paid() && r.billed_as_data)
        .filter(|r| {
            matches!(
                r.group,
                svc_catalogue::Group::Data | svc_catalogue::Group::Infrastructure | svc_catalogue::Group::Signals
            )
        })
        .map(|r| r.id)
        .filter(|id| !sampled.contains(id))
        .collect();
    assert!(missing.is_empty(), "routes without a sample: {missing:?}");
}
