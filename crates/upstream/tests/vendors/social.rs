//! The social adapter against recorded X API v2 answers and against the simulator's fake.

use svc_catalogue::routes::social::{
    SocialCountsQuery, SocialCountsResponse, SocialGranularity, SocialTimelineQuery, SocialTrendsQuery,
    SocialTweetsResponse, SocialUser, SocialUserRef,
};
use svc_simulator::Fault;
use svc_upstream::social::{WireOne, WireTrends};
use svc_upstream::{UpstreamError, UpstreamsConfig, Vendor};

use crate::support::{self, Fixture};

/// The market, with the social vendor's base URL.
async fn fixture(tune: impl FnOnce(&mut UpstreamsConfig)) -> Fixture {
    let mut fixture = support::fixture(tune).await;
    fixture.base = format!("{}/social", fixture.base);
    fixture
}

fn timeline(user: &str) -> SocialTimelineQuery {
    serde_json::from_value(serde_json::json!({"user_id": user})).expect("input")
}

#[test]
fn recorded_answers_decode_into_the_catalogue_shapes() {
    let search: SocialTweetsResponse =
        serde_json::from_str(include_str!("../fixtures/social-search.json")).expect("search");
    assert_eq!(search.data[0].public_metrics.as_ref().expect("metrics").impression_count, Some(900));
    assert_eq!(search.includes.users[0].username, "developer");
    assert_eq!(search.meta.next_token.as_deref(), Some("b26v89c19zqg8o3f"));
    let counts: SocialCountsResponse =
        serde_json::from_str(include_str!("../fixtures/social-counts.json")).expect("counts");
    assert_eq!((counts.data.len(), counts.meta.total_tweet_count), (2, 7));
    let trends: WireTrends = serde_json::from_str(include_str!("../fixtures/social-trends.json")).expect("trends");
    assert_eq!(trends.data[1].tweet_count, None);
    let missing: WireOne<SocialUser> =
        serde_json::from_str(include_str!("../fixtures/social-user-not-found.json")).expect("not found");
    assert!(missing.data.is_none());
    assert_eq!(missing.errors[0].resource_id.as_deref(), Some("nobody"));
}

#[test]
fn the_simulator_accepts_the_key_the_adapters_are_given_for_it() {
    assert_eq!(svc_upstream::SIMULATED_KEY, svc_simulator::SOCIAL_BEARER);
}

#[tokio::test]
async fn a_username_is_looked_up_once_a_day() {
    let f = fixture(|_| {}).await;
    let account = f.sim.world.social_accounts()[3].clone();
    let id = f.upstreams.social.user_id(SocialUserRef::Username(&account.username)).await.expect("id");
    assert_eq!(id, account.id);
    f.clock.advance_ms(23 * 3_600_000);
    f.upstreams.social.user_id(SocialUserRef::Username(&account.username.to_lowercase())).await.expect("cached");
    assert_eq!(f.sim.faults.log().len(), 1);
    f.clock.advance_ms(2 * 3_600_000);
    f.upstreams.social.user_id(SocialUserRef::Username(&account.username)).await.expect("again");
    assert_eq!(f.sim.faults.log().len(), 2);
    let err = f.upstreams.social.user_id(SocialUserRef::Username("no_such_user")).await.expect_err("unknown");
    assert!(matches!(err, UpstreamError::NotFound { vendor: Vendor::Social, .. }), "{err:?}");
}

#[tokio::test]
async fn requests_ask_for_the_documented_fields_and_expansions() {
    let f = fixture(|_| {}).await;
    let account = f.sim.world.social_accounts()[1].id.clone();
    let posts = f.upstreams.social.user_posts(&timeline(&account), false).await.expect("timeline");
    let first = posts.data.first().expect("the account posts");
    assert!(first.created_at.is_some() && first.public_metrics.is_some() && first.lang.is_some());
    assert!(posts.includes.users.iter().any(|u| u.public_metrics.is_some()));
    let line = &f.sim.faults.log()[0];
    for part in ["tweet.fields=", "public_metrics", "expansions=author_id%2Creferenced_tweets.id", "user.fields="] {
        assert!(line.contains(part), "{line}");
    }
}

#[tokio::test]
async fn a_protected_account_answers_its_problem_not_a_failure() {
    let f = fixture(|_| {}).await;
    let protected = f.sim.world.social_accounts().iter().find(|a| a.protected).expect("protected").id.clone();
    let posts = f.upstreams.social.user_posts(&timeline(&protected), false).await.expect("answered");
    assert!(posts.data.is_empty());
    assert_eq!(posts.errors[0].title, "Authorization Error");
}

#[tokio::test]
async fn counts_trimmed_to_the_newest_buckets_sum_to_their_total() {
    let f = fixture(|_| {}).await;
    let input = |max: Option<u32>| SocialCountsQuery {
        query: "$SOL".into(),
        max_results: max,
        granularity: SocialGranularity::Day,
    };
    let all = f.upstreams.social.counts(&input(None)).await.expect("counts");
    assert_eq!(all.data.len(), 8, "seven days span eight day buckets");
    let trimmed = f.upstreams.social.counts(&input(Some(10))).await.expect("counts");
    assert_eq!(trimmed.data.len(), 8);
    assert_eq!(f.sim.faults.log().len(), 1, "trimming reuses the cached answer");
    let total: u64 = all.data.iter().map(|b| b.tweet_count).sum();
    assert_eq!(all.meta.total_tweet_count, total);
}

#[tokio::test]
async fn trends_are_cached_and_an_unknown_place_is_not_found() {
    let f = fixture(|_| {}).await;
    let input = |woeid: u32| SocialTrendsQuery { woeid, max_trends: 5 };
    let trends = f.upstreams.social.trends(&input(1)).await.expect("trends");
    assert_eq!(trends.data.len(), 5);
    f.upstreams.social.trends(&input(1)).await.expect("cached");
    assert_eq!(f.sim.faults.log().len(), 1);
    let err = f.upstreams.social.trends(&input(42)).await.expect_err("no trends");
    assert!(matches!(err, UpstreamError::NotFound { .. }), "{err:?}");
}

#[tokio::test]
async fn a_missing_or_wrong_token_is_refused_without_retries_and_never_echoed() {
    for key in [None, Some("not-the-token".to_owned())] {
        let f = fixture(|c| c.vendor_mut(Vendor::Social).key = key.clone()).await;
        let err = f.upstreams.social.user("XDevelopers").await.expect_err("refused");
        assert!(matches!(err, UpstreamError::Status { vendor: Vendor::Social, status: 401 }), "{err:?}");
        assert!(!err.to_string().contains("not-the-token"), "{err}");
        assert_eq!(f.sim.faults.log().len(), 1);
    }
}

#[tokio::test]
async fn rate_limits_are_retried() {
    let f = fixture(|_| {}).await;
    f.sim.faults.push("social", Fault::Status { status: 429, retry_after: Some(0) });
    let user = f.upstreams.social.user("XDevelopers").await.expect("retried");
    assert_eq!(user.data.id, "2244994945");
    assert_eq!(f.sim.faults.log().len(), 2);
}

#[tokio::test]
async fn the_fake_speaks_the_networks_wire_format() {
    let f = fixture(|_| {}).await;
    let http = reqwest::Client::new();
    let get = |path: &str, auth: bool| {
        let request = http.get(format!("{}{path}", f.base));
        if auth { request.bearer_auth(svc_simulator::SOCIAL_BEARER) } else { request }
    };
    let refused = get("/2/tweets/search/recent?query=sol", false).send().await.expect("sent");
    assert_eq!(refused.status(), 401);
    assert_eq!(refused.headers()["content-type"], "application/problem+json");
    let body: serde_json::Value = refused.json().await.expect("json");
    assert_eq!((body["title"].as_str(), body["status"].as_u64()), (Some("Unauthorized"), Some(401)));

    let bare: serde_json::Value =
        get("/2/tweets/search/recent?query=%24SOL", true).send().await.expect("sent").json().await.expect("json");
    let first = bare["data"][0].as_object().expect("a post");
    let keys: Vec<&str> = first.keys().map(String::as_str).collect();
    assert_eq!(keys, ["id", "text", "edit_history_tweet_ids"], "only the default fields unless asked");
    assert!(bare.get("includes").is_none());

    let invalid = get("/2/tweets/search/recent?query=sol&max_results=5", true).send().await.expect("sent");
    assert_eq!(invalid.status(), 400);
    let body: serde_json::Value = invalid.json().await.expect("json");
    assert_eq!(body["errors"][0]["parameters"]["max_results"], serde_json::json!(["5"]));
    assert_eq!(body["type"], "https://api.twitter.com/2/problems/invalid-request");

    let missing: serde_json::Value =
        get("/2/users/by/username/nobody", true).send().await.expect("sent").json().await.expect("json");
    assert!(missing.get("data").is_none());
    assert_eq!(missing["errors"][0]["type"], "https://api.twitter.com/2/problems/resource-not-found");
    assert_eq!(missing["errors"][0]["detail"], "Could not find user with username: [nobody].");
}
