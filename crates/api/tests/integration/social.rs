//! Social-network routes, paid, against the simulated network speaking the X API v2.

use axum::http::{Method, StatusCode};
use svc_simulator::Fault;
use svc_simulator::world::{PostKind, SocialPost};
use svc_upstream::Vendor;

use crate::support::{Reply, Sample, Setup, TestApp, assert_error, assert_invalid_at, assert_matches_schema};

const ROOT: &str = "/api/x402/svc-tools/social";

/// A post a few hours old that has been replied to, quoted and reposted in the world.
fn engaged_post(app: &TestApp) -> SocialPost {
    let world = &app.sim.world;
    let mut found = None;
    world.posts_newest_first(world.now_ms() - 24 * 3_600_000, |post| {
        let refs = world.posts_referring_to(post.id);
        let has = |f: fn(&PostKind) -> bool| refs.iter().any(|p| f(&p.kind));
        if post.ms < world.now_ms() - 2 * 3_600_000
            && has(|k| matches!(k, PostKind::Quote(_)))
            && has(|k| matches!(k, PostKind::Retweet(_)))
        {
            found = Some(post);
            return false;
        }
        true
    });
    found.expect("the world has an engaged post")
}

/// A public account with followers and posts.
fn active_account(app: &TestApp) -> usize {
    let world = &app.sim.world;
    let mut counts = vec![0usize; world.social_accounts().len()];
    world.posts_newest_first(world.now_ms() - 24 * 3_600_000, |p| {
        counts[p.author] += 1;
        true
    });
    (0..counts.len())
        .filter(|&i| !world.social_accounts()[i].followers.is_empty())
        .max_by_key(|&i| counts[i])
        .expect("an active account")
}

/// Valid calls of every social route, for the catalogue walk.
pub(crate) fn samples(app: &TestApp) -> Vec<Sample> {
    let world = &app.sim.world;
    let post = engaged_post(app).id;
    let account = &world.social_accounts()[active_account(app)];
    let (name, id) = (account.username.clone(), account.id.clone());
    let get = |route: &'static str, path: String| Sample {
        route,
        method: Method::GET,
        uri: format!("{ROOT}{path}"),
        body: None,
    };
    vec![
        get("social.search", "/search?query=%24SOL%20-is%3Aretweet&max_results=10".into()),
        get("social.tweet", format!("/tweet/{post}")),
        get("social.tweets", format!("/tweets?ids={post},1")),
        get("social.user", format!("/user/{name}")),
        get("social.user_by_id", format!("/user/id/{id}")),
        get("social.user_timeline", format!("/user/{name}/timeline?max_results=5")),
        get("social.user_mentions", format!("/user/{id}/mentions")),
        get("social.user_followers", format!("/user/{name}/followers")),
        get("social.user_following", format!("/user/{id}/following?max_results=5")),
        get("social.users_search", "/users/search?query=trader".into()),
        get("social.tweet_liking_users", format!("/tweet/{post}/liking-users")),
        get("social.tweet_quote_tweets", format!("/tweet/{post}/quote-tweets")),
        get("social.tweet_retweets", format!("/tweet/{post}/retweets")),
        get("social.tweet_retweeted_by", format!("/tweet/{post}/retweeted-by")),
        get("social.counts", "/counts?query=%24BTC&granularity=day".into()),
        get("social.trends", "/trends?woeid=1&max_trends=5".into()),
    ]
}

async fn pay(app: &TestApp, path: &str, nonce: u8) -> Reply {
    app.pay(&Method::GET, &format!("{ROOT}{path}"), None, nonce).await
}

#[tokio::test]
async fn a_paid_search_answers_posts_with_authors_and_pages_back_in_time() {
    let app = TestApp::new().await;
    let reply = pay(&app, "/search?query=%24SOL&max_results=10", 1).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_matches_schema("get", "/api/x402/svc-tools/social/search", &body);
    let posts = body["data"].as_array().expect("data");
    assert_eq!(posts.len(), 10);
    assert!(posts.iter().all(|p| p["text"].as_str().expect("text").to_lowercase().contains("$sol")));
    let authors: Vec<&str> =
        body["includes"]["users"].as_array().expect("users").iter().map(|u| u["id"].as_str().expect("id")).collect();
    assert!(posts.iter().all(|p| authors.contains(&p["author_id"].as_str().expect("author"))));
    assert!(posts[0]["public_metrics"]["like_count"].is_u64());
    assert_eq!(body["meta"]["result_count"], 10);
    let token = body["meta"]["next_token"].as_str().expect("more pages");

    let next = pay(&app, &format!("/search?query=%24SOL&max_results=10&next_token={token}"), 2).await;
    assert_eq!(next.status, StatusCode::OK, "{}", next.text());
    let oldest: u64 = body["meta"]["oldest_id"].as_str().expect("oldest").parse().expect("id");
    let newest: u64 = next.json()["meta"]["newest_id"].as_str().expect("newest").parse().expect("id");
    assert!(newest < oldest, "the next page is older");
    assert_eq!(app.paid_calls().await, 2);
}

#[tokio::test]
async fn a_username_is_resolved_once_and_reused_across_routes() {
    let app = TestApp::new().await;
    let account = app.sim.world.social_accounts()[active_account(&app)].clone();
    let timeline = pay(&app, &format!("/user/{}/timeline", account.username), 3).await;
    assert_eq!(timeline.status, StatusCode::OK, "{}", timeline.text());
    let body = timeline.json();
    assert!(body["data"].as_array().expect("posts").iter().all(|p| p["author_id"] == account.id.as_str()));
    let followers = pay(&app, &format!("/user/{}/followers?max_results=3", account.username.to_uppercase()), 4).await;
    assert_eq!(followers.status, StatusCode::OK, "{}", followers.text());
    let body = followers.json();
    assert_matches_schema("get", "/api/x402/svc-tools/social/user/{user_id}/followers", &body);
    assert_eq!(body["data"].as_array().expect("users").len(), 3.min(account.followers.len()));
    let lookups = app.sim.faults.log().iter().filter(|l| l.contains("/2/users/by/username/")).count();
    assert_eq!(lookups, 1, "{:?}", app.sim.faults.log());
}

#[tokio::test]
async fn a_bulk_lookup_lists_unknown_ids_in_errors_and_an_unknown_user_is_a_404() {
    let app = TestApp::new().await;
    let post = engaged_post(&app);
    let reply = pay(&app, &format!("/tweets?ids=1,{}", post.id), 5).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_eq!(body["data"][0]["id"], post.id.to_string());
    assert_eq!(body["errors"][0]["resource_id"], "1");
    assert_eq!(app.paid_calls().await, 1);

    let missing = pay(&app, "/user/nobody_here_x", 6).await;
    assert_error(&missing, StatusCode::NOT_FOUND, "not_found");
    assert!(missing.text().contains("nobody_here_x"));
    let missing = pay(&app, "/user/nobody_here_x/timeline", 7).await;
    assert_error(&missing, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(app.paid_calls().await, 1, "not-found answers charge nothing");
}

#[tokio::test]
async fn engagement_routes_agree_with_the_posts_counts() {
    let app = TestApp::new().await;
    let post = engaged_post(&app);
    let one = pay(&app, &format!("/tweet/{}", post.id), 8).await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.text());
    let metrics = one.json()["data"]["public_metrics"].clone();
    let quotes = pay(&app, &format!("/tweet/{}/quote-tweets", post.id), 9).await.json();
    assert_eq!(quotes["meta"]["result_count"], metrics["quote_count"]);
    assert!(
        quotes["data"]
            .as_array()
            .expect("quotes")
            .iter()
            .all(|q| q["referenced_tweets"][0]["id"].as_str() == Some(post.id.to_string().as_str()))
    );
    let reposters = pay(&app, &format!("/tweet/{}/retweeted-by", post.id), 10).await.json();
    assert!(!reposters["data"].as_array().expect("users").is_empty());
}

#[tokio::test]
async fn counts_keep_the_newest_buckets_and_their_total() {
    let app = TestApp::new().await;
    let reply = pay(&app, "/counts?query=%24ETH&granularity=hour&max_results=24", 11).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let body = reply.json();
    assert_matches_schema("get", "/api/x402/svc-tools/social/counts", &body);
    let buckets = body["data"].as_array().expect("buckets");
    assert_eq!(buckets.len(), 24);
    let sum: u64 = buckets.iter().map(|b| b["tweet_count"].as_u64().expect("count")).sum();
    assert_eq!(body["meta"]["total_tweet_count"], sum);
    assert!(sum > 0);
}

#[tokio::test]
async fn a_query_the_network_cannot_parse_is_a_422_that_charges_nothing() {
    let app = TestApp::new().await;
    let reply = pay(&app, "/search?query=bogus%3Aoperator", 12).await;
    assert_invalid_at(&reply, &[serde_json::json!("query"), serde_json::json!("query")]);
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn an_unknown_place_has_no_trends() {
    let app = TestApp::new().await;
    let reply = pay(&app, "/trends?woeid=999", 13).await;
    assert_error(&reply, StatusCode::NOT_FOUND, "not_found");
    let trends = pay(&app, "/trends", 14).await;
    assert_eq!(trends.status, StatusCode::OK, "{}", trends.text());
    assert!(trends.json()["data"][0]["tweet_count"].as_u64().is_some_and(|n| n > 0));
}

#[tokio::test]
async fn a_failing_network_is_a_502_that_charges_nothing() {
    let app = TestApp::new().await;
    for _ in 0..3 {
        app.sim.faults.push("social", Fault::Status { status: 503, retry_after: None });
    }
    let reply = pay(&app, "/users/search?query=trader", 15).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "social");
    assert!(reply.headers.get("payment-response").is_none());
    assert_eq!(app.paid_calls().await, 0);
}

#[tokio::test]
async fn a_rate_limited_network_is_retried_within_the_call() {
    let app = TestApp::new().await;
    app.sim.faults.push("social", Fault::Status { status: 429, retry_after: Some(0) });
    let reply = pay(&app, "/trends?woeid=23424977", 16).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(app.sim.faults.log().len(), 2);
    assert_eq!(app.paid_calls().await, 1);
}

#[tokio::test]
async fn a_refused_bearer_token_is_a_502_that_never_shows_the_token() {
    let app = TestApp::with(Setup {
        upstreams: Box::new(|c| c.vendor_mut(Vendor::Social).key = Some("revoked-token-4242".into())),
        ..Default::default()
    })
    .await;
    let reply = pay(&app, "/user/XDevelopers", 17).await;
    assert_error(&reply, StatusCode::BAD_GATEWAY, "upstream_error");
    assert_eq!(reply.json()["vendor"], "social");
    assert!(!reply.text().contains("revoked-token-4242"));
    assert_eq!(app.sim.faults.log().len(), 1, "a 401 is not retried");
    assert_eq!(app.paid_calls().await, 0);
}
