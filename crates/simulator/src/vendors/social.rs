//! The social network's v2 API, as its OpenAPI document describes it:
//!
//! * app-only `Authorization: Bearer …`; anything else is a 401 problem
//!   (`application/problem+json`);
//! * the `data` / `includes` / `meta` / `errors` envelope, `data` absent when empty;
//! * only `id`, `text`, `edit_history_tweet_ids` (posts) and `id`, `name`, `username` (users)
//!   unless more are asked for with `tweet.fields`, `user.fields` and `expansions`;
//! * `max_results` outside an endpoint's range, an unknown query operator or a bad page
//!   token is a 400 with the network's `errors[].parameters` / `message` shape;
//! * an unknown user or post is a 200 with `errors[]` (resource-not-found) and no `data`;
//! * lists page with an opaque `meta.next_token`.

use std::collections::HashMap;

use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Map, Value, json};
use svc_domain::rfc3339;

use crate::Simulator;
use crate::world::{PostKind, RECENT_WINDOW_MS, SocialPost, World};

/// The bearer token the fake accepts (the simulator's stand-in for an app-only token).
pub const ACCEPTED_BEARER: &str = crate::SIMULATED_KEY;

type Params = HashMap<String, String>;

pub(super) fn router(sim: Simulator) -> Router {
    Router::new()
        .route("/2/tweets/search/recent", get(search))
        .route("/2/tweets/counts/recent", get(counts))
        .route("/2/tweets", get(tweets))
        .route("/2/tweets/{id}", get(tweet))
        .route("/2/tweets/{id}/liking_users", get(liking_users))
        .route("/2/tweets/{id}/retweeted_by", get(retweeted_by))
        .route("/2/tweets/{id}/quote_tweets", get(quote_tweets))
        .route("/2/tweets/{id}/retweets", get(retweets))
        .route("/2/users/by/username/{username}", get(user_by_username))
        .route("/2/users/search", get(users_search))
        .route("/2/users/{id}", get(user_by_id))
        .route("/2/users/{id}/tweets", get(timeline))
        .route("/2/users/{id}/mentions", get(mentions))
        .route("/2/users/{id}/followers", get(followers))
        .route("/2/users/{id}/following", get(following))
        .route("/2/trends/by/woeid/{woeid}", get(trends))
        .layer(axum::middleware::from_fn(bearer))
        .with_state(sim)
}

fn problem(status: StatusCode, title: &str, detail: &str, kind: &str) -> Response {
    let body = json!({"title": title, "type": kind, "status": status.as_u16(), "detail": detail});
    (status, [(header::CONTENT_TYPE, "application/problem+json")], Json(body)).into_response()
}

/// App-only bearer authentication.
async fn bearer(request: Request, next: Next) -> Response {
    let expected = format!("Bearer {ACCEPTED_BEARER}");
    let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    if given != Some(expected.as_str()) {
        return problem(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized", "about:blank");
    }
    next.run(request).await
}

/// An answer other than the one asked for: a 400, or a 200 carrying only problems.
struct Rejection(StatusCode, Value);

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        (self.0, Json(self.1)).into_response()
    }
}

/// A 400 naming the parameter at fault, in the network's shape.
fn invalid(parameter: &str, value: &str, message: String) -> Rejection {
    let body = json!({
        "errors": [{"parameters": {parameter: [value]}, "message": message}],
        "title": "Invalid Request",
        "detail": "One or more parameters to your request was invalid.",
        "type": "https://api.twitter.com/2/problems/invalid-request",
    });
    Rejection(StatusCode::BAD_REQUEST, body)
}

/// The 200 answer for an object that does not exist.
fn not_found(kind: &str, parameter: &str, value: &str) -> Rejection {
    let detail = match (kind, parameter) {
        ("user", "username") => format!("Could not find user with username: [{value}]."),
        ("user", _) => format!("Could not find user with {parameter}: [{value}]."),
        ("tweet", _) => format!("Could not find tweet with {parameter}: [{value}]."),
        _ => format!("Could not find {kind} with {parameter}: [{value}]."),
    };
    Rejection(StatusCode::OK, json!({"errors": [not_found_error(kind, parameter, value, detail)]}))
}

fn not_found_error(kind: &str, parameter: &str, value: &str, detail: String) -> Value {
    json!({
        "value": value,
        "detail": detail,
        "title": "Not Found Error",
        "resource_type": kind,
        "parameter": parameter,
        "resource_id": value,
        "type": "https://api.twitter.com/2/problems/resource-not-found",
    })
}

/// `max_results` within `lo..=hi`, or `default`.
fn max_results(params: &Params, lo: u32, hi: u32, default: u32) -> Result<u32, Rejection> {
    let Some(raw) = params.get("max_results") else { return Ok(default) };
    match raw.parse::<u32>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(invalid(
            "max_results",
            raw,
            format!("The `max_results` query parameter value [{raw}] is not between {lo} and {hi}"),
        )),
    }
}

/// Page tokens are opaque to clients: a cursor, scrambled.
const TOKEN_MASK: u64 = 0x5a17_c0de_9e37_79b9;

fn token_of(cursor: u64) -> String {
    format!("{:016x}", cursor ^ TOKEN_MASK)
}

/// The cursor of the page token in `name`, if any.
fn cursor(params: &Params, name: &str) -> Result<Option<u64>, Rejection> {
    let Some(raw) = params.get(name) else { return Ok(None) };
    match u64::from_str_radix(raw, 16) {
        Ok(v) if raw.len() == 16 => Ok(Some(v ^ TOKEN_MASK)),
        _ => Err(invalid(name, raw, format!("The `{name}` query parameter value [{raw}] is not valid"))),
    }
}

fn id_param(params: &Params, name: &str) -> Result<Option<u64>, Rejection> {
    let Some(raw) = params.get(name) else { return Ok(None) };
    raw.parse::<u64>().map(Some).map_err(|_| {
        invalid(name, raw, format!("The `{name}` query parameter value [{raw}] does not match ^[0-9]{{1,19}}$"))
    })
}

/// RFC 3339 with milliseconds, as the network writes times.
fn x_time(ms: i64) -> String {
    let whole = rfc3339(ms - ms.rem_euclid(1000));
    format!("{}.{:03}Z", whole.trim_end_matches('Z'), ms.rem_euclid(1000))
}

/// The fields and expansions a request asked for.
struct Fields {
    tweet: Vec<String>,
    user: Vec<String>,
    expansions: Vec<String>,
}

impl Fields {
    fn of(params: &Params) -> Self {
        let list = |name: &str| {
            params.get(name).map(|v| v.split(',').map(|s| s.trim().to_owned()).collect()).unwrap_or_default()
        };
        Fields { tweet: list("tweet.fields"), user: list("user.fields"), expansions: list("expansions") }
    }

    fn tweet(&self, field: &str) -> bool {
        self.tweet.iter().any(|f| f == field)
    }

    fn user(&self, field: &str) -> bool {
        self.user.iter().any(|f| f == field)
    }

    fn expands(&self, expansion: &str) -> bool {
        self.expansions.iter().any(|e| e == expansion)
    }
}

fn user_json(world: &World, index: usize, fields: &Fields) -> Value {
    let account = &world.social_accounts()[index];
    let mut user = Map::new();
    user.insert("id".into(), json!(account.id));
    user.insert("name".into(), json!(account.name));
    user.insert("username".into(), json!(account.username));
    let mut put = |field: &str, value: Value| {
        if fields.user(field) {
            user.insert(field.into(), value);
        }
    };
    put("created_at", json!(x_time(account.created_ms)));
    put("description", json!(account.description));
    put("verified", json!(account.verified));
    put("verified_type", json!(account.verified_type));
    put("protected", json!(account.protected));
    if let Some(location) = &account.location {
        put("location", json!(location));
    }
    put("url", json!(account.url.clone().unwrap_or_default()));
    put("profile_image_url", json!(format!("https://pbs.example/profile_images/{}/normal.jpg", account.id)));
    put(
        "public_metrics",
        json!({
            "followers_count": world.social_follower_count(index),
            "following_count": account.following.len(),
            "tweet_count": world.social_post_count(index),
            "listed_count": account.listed,
            "like_count": account.listed * 13 + 7,
        }),
    );
    Value::Object(user)
}

fn tweet_json(world: &World, post: &SocialPost, fields: &Fields) -> Value {
    let author = &world.social_accounts()[post.author];
    let mut tweet = Map::new();
    tweet.insert("id".into(), json!(post.id.to_string()));
    tweet.insert("text".into(), json!(post.text));
    tweet.insert("edit_history_tweet_ids".into(), json!([post.id.to_string()]));
    let mut put = |field: &str, value: Value| {
        if fields.tweet(field) {
            tweet.insert(field.into(), value);
        }
    };
    put("author_id", json!(author.id));
    put("created_at", json!(x_time(post.ms)));
    put("lang", json!(post.lang));
    put("conversation_id", json!(post.conversation_id().to_string()));
    if let Some(to) = post.in_reply_to {
        put("in_reply_to_user_id", json!(world.social_accounts()[to].id));
    }
    let referenced = match post.kind {
        PostKind::Original => None,
        PostKind::Reply(id) => Some(("replied_to", id)),
        PostKind::Quote(id) => Some(("quoted", id)),
        PostKind::Retweet(id) => Some(("retweeted", id)),
    };
    if let Some((kind, id)) = referenced {
        put("referenced_tweets", json!([{"type": kind, "id": id.to_string()}]));
    }
    put("possibly_sensitive", json!(false));
    if fields.tweet("public_metrics") {
        let m = world.post_metrics(post);
        put(
            "public_metrics",
            json!({
                "retweet_count": m.retweets,
                "reply_count": m.replies,
                "like_count": m.likes,
                "quote_count": m.quotes,
                "bookmark_count": m.bookmarks,
                "impression_count": m.impressions,
            }),
        );
    }
    Value::Object(tweet)
}

/// The `includes` of a list of posts: authors and referenced posts, each once.
fn includes(world: &World, posts: &[SocialPost], fields: &Fields) -> Option<Value> {
    let mut users: Vec<usize> = Vec::new();
    let mut tweets: Vec<SocialPost> = Vec::new();
    let add_user = |users: &mut Vec<usize>, u: usize| {
        if !users.contains(&u) {
            users.push(u);
        }
    };
    for post in posts {
        if fields.expands("author_id") {
            add_user(&mut users, post.author);
        }
        if let PostKind::Reply(id) | PostKind::Quote(id) | PostKind::Retweet(id) = post.kind
            && fields.expands("referenced_tweets.id")
            && let Some(target) = world.post(id)
        {
            if fields.expands("referenced_tweets.id.author_id") {
                add_user(&mut users, target.author);
            }
            if !tweets.iter().any(|t| t.id == target.id) {
                tweets.push(target);
            }
        }
    }
    let mut out = Map::new();
    if !users.is_empty() {
        out.insert("users".into(), users.iter().map(|&u| user_json(world, u, fields)).collect());
    }
    if !tweets.is_empty() {
        out.insert("tweets".into(), tweets.iter().map(|t| tweet_json(world, t, fields)).collect());
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// A page of posts, newest first, with the network's envelope.
fn posts_page(world: &World, posts: &[SocialPost], next: Option<u64>, fields: &Fields) -> Response {
    let mut body = Map::new();
    if !posts.is_empty() {
        body.insert("data".into(), posts.iter().map(|p| tweet_json(world, p, fields)).collect());
        if let Some(includes) = includes(world, posts, fields) {
            body.insert("includes".into(), includes);
        }
    }
    let mut meta = Map::new();
    if let (Some(first), Some(last)) = (posts.first(), posts.last()) {
        meta.insert("newest_id".into(), json!(first.id.to_string()));
        meta.insert("oldest_id".into(), json!(last.id.to_string()));
    }
    meta.insert("result_count".into(), json!(posts.len()));
    if let Some(next) = next {
        meta.insert("next_token".into(), json!(token_of(next)));
    }
    body.insert("meta".into(), Value::Object(meta));
    Json(Value::Object(body)).into_response()
}

/// A page of users with the network's envelope.
fn users_page(world: &World, users: &[usize], offset: usize, count: usize, fields: &Fields) -> Response {
    let page: Vec<usize> = users.iter().skip(offset).take(count).copied().collect();
    let mut body = Map::new();
    if !page.is_empty() {
        body.insert("data".into(), page.iter().map(|&u| user_json(world, u, fields)).collect());
    }
    let mut meta = Map::new();
    meta.insert("result_count".into(), json!(page.len()));
    if offset + count < users.len() {
        meta.insert("next_token".into(), json!(token_of((offset + count) as u64)));
    }
    if offset > 0 {
        meta.insert("previous_token".into(), json!(token_of(offset.saturating_sub(count) as u64)));
    }
    body.insert("meta".into(), Value::Object(meta));
    Json(Value::Object(body)).into_response()
}

/// Newest-first posts since the recent window (or `since_id`), older than the page cursor
/// and `until_id`, that `keep` accepts: a page of `count` and the cursor of the next page.
fn collect_posts(
    world: &World,
    params: &Params,
    page_param: &str,
    count: u32,
    keep: impl Fn(&SocialPost) -> bool,
) -> Result<(Vec<SocialPost>, Option<u64>), Rejection> {
    let before = cursor(params, page_param)?;
    let until = id_param(params, "until_id")?;
    let since = id_param(params, "since_id")?.unwrap_or(0);
    let mut page = Vec::new();
    let mut more = false;
    world.posts_newest_first(world.now_ms() - RECENT_WINDOW_MS, |post| {
        if post.id <= since {
            return false;
        }
        if before.is_some_and(|b| post.id >= b) || until.is_some_and(|u| post.id >= u) || !keep(&post) {
            return true;
        }
        if page.len() == count as usize {
            more = true;
            return false;
        }
        page.push(post);
        true
    });
    let next = more.then(|| page.last().map(|p| p.id)).flatten();
    Ok((page, next))
}

/// One term of a search query.
#[derive(Debug)]
enum Term {
    Text(String),
    From(String),
    Is(String),
    Lang(String),
}

/// A query in the network's syntax, reduced to what the fake needs: groups joined by `OR`,
/// each a list of (negated?, term) that must all hold.
struct Matcher {
    groups: Vec<Vec<(bool, Term)>>,
}

impl Matcher {
    fn parse(query: &str) -> Result<Self, String> {
        let mut words: Vec<String> = Vec::new();
        let mut phrase: Option<String> = None;
        for raw in query.replace(['(', ')'], " ").split_whitespace() {
            match &mut phrase {
                Some(p) => {
                    p.push(' ');
                    p.push_str(raw.trim_end_matches('"'));
                    if raw.ends_with('"') {
                        words.extend(phrase.take());
                    }
                }
                None if raw.starts_with('"') && !(raw.len() > 1 && raw.ends_with('"')) => {
                    phrase = Some(raw.trim_start_matches('"').to_owned());
                }
                None => words.push(raw.trim_matches('"').to_owned()),
            }
        }
        words.extend(phrase);
        let mut groups = vec![Vec::new()];
        for word in words {
            if word == "OR" {
                groups.push(Vec::new());
                continue;
            }
            let (negated, body) = match word.strip_prefix('-') {
                Some(rest) if !rest.is_empty() => (true, rest.to_owned()),
                _ => (false, word.clone()),
            };
            let term = match body.split_once(':') {
                Some(("from", user)) => Term::From(user.to_lowercase()),
                Some(("is", what)) if matches!(what, "retweet" | "reply" | "quote" | "verified") => {
                    Term::Is(what.to_owned())
                }
                Some(("lang", code)) => Term::Lang(code.to_lowercase()),
                Some((op, _)) if !op.is_empty() && op.chars().all(|c| c.is_ascii_alphabetic()) => {
                    return Err(format!(
                        "Reference to invalid operator '{body}'. Operator is not available in current product or product packaging."
                    ));
                }
                _ => Term::Text(body.to_lowercase()),
            };
            if let Some(group) = groups.last_mut() {
                group.push((negated, term));
            }
        }
        groups.retain(|g| !g.is_empty());
        if groups.is_empty() {
            return Err("There were errors processing your request: empty query".to_owned());
        }
        Ok(Matcher { groups })
    }

    fn matches(&self, world: &World, post: &SocialPost) -> bool {
        let text = post.text.to_lowercase();
        let author = &world.social_accounts()[post.author];
        self.groups.iter().any(|group| {
            group.iter().all(|(negated, term)| {
                let holds = match term {
                    Term::Text(t) => text.contains(t.as_str()),
                    Term::From(user) => author.username.to_lowercase() == *user || author.id == *user,
                    Term::Is(what) => match what.as_str() {
                        "retweet" => matches!(post.kind, PostKind::Retweet(_)),
                        "reply" => matches!(post.kind, PostKind::Reply(_)),
                        "quote" => matches!(post.kind, PostKind::Quote(_)),
                        _ => author.verified,
                    },
                    Term::Lang(code) => post.lang == code,
                };
                holds != *negated
            })
        })
    }
}

fn matcher(params: &Params) -> Result<Matcher, Rejection> {
    let Some(query) = params.get("query") else {
        return Err(invalid("query", "", "The `query` query parameter can not be empty".to_owned()));
    };
    if query.chars().count() > 512 {
        return Err(invalid("query", query, format!("The `query` query parameter value [{query}] is too long")));
    }
    Matcher::parse(query).map_err(|message| invalid("query", query, message))
}

async fn search(State(sim): State<Simulator>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    let run = || -> Result<Response, Rejection> {
        let count = max_results(&params, 10, 100, 10)?;
        let matcher = matcher(&params)?;
        let page_param = if params.contains_key("pagination_token") { "pagination_token" } else { "next_token" };
        let (posts, next) = collect_posts(world, &params, page_param, count, |p| matcher.matches(world, p))?;
        Ok(posts_page(world, &posts, next, &Fields::of(&params)))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

async fn counts(State(sim): State<Simulator>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    let run = || -> Result<Response, Rejection> {
        let matcher = matcher(&params)?;
        let step = match params.get("granularity").map(String::as_str) {
            None | Some("hour") => 3_600_000,
            Some("minute") => 60_000,
            Some("day") => 86_400_000,
            Some(other) => {
                return Err(invalid(
                    "granularity",
                    other,
                    format!("The `granularity` query parameter value [{other}] is not one of [minute,hour,day]"),
                ));
            }
        };
        let now = world.now_ms();
        let since = now - RECENT_WINDOW_MS;
        let first = since - since.rem_euclid(step);
        let buckets = ((now - first) / step + 1) as usize;
        let mut counts = vec![0u64; buckets];
        world.posts_newest_first(since, |post| {
            if matcher.matches(world, &post) {
                counts[((post.ms - first) / step) as usize] += 1;
            }
            true
        });
        let data: Vec<Value> = counts
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let start = first + i as i64 * step;
                json!({"end": x_time(start + step), "start": x_time(start), "tweet_count": n})
            })
            .collect();
        Ok(Json(json!({"data": data, "meta": {"total_tweet_count": counts.iter().sum::<u64>()}})).into_response())
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

async fn tweet(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    let Some(post) = id.parse().ok().and_then(|id| world.post(id)) else {
        return not_found("tweet", "id", &id).into_response();
    };
    let fields = Fields::of(&params);
    let mut body = Map::new();
    body.insert("data".into(), tweet_json(world, &post, &fields));
    if let Some(includes) = includes(world, std::slice::from_ref(&post), &fields) {
        body.insert("includes".into(), includes);
    }
    Json(Value::Object(body)).into_response()
}

async fn tweets(State(sim): State<Simulator>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    let Some(ids) = params.get("ids").filter(|s| !s.is_empty()) else {
        return invalid("ids", "", "The `ids` query parameter can not be empty".to_owned()).into_response();
    };
    let ids: Vec<&str> = ids.split(',').collect();
    if ids.len() > 100 {
        return invalid(
            "ids",
            &ids.join(","),
            format!("The number of values ({}) is not between 1 and 100", ids.len()),
        )
        .into_response();
    }
    let mut found = Vec::new();
    let mut errors = Vec::new();
    for id in ids {
        match id.parse().ok().and_then(|n| world.post(n)) {
            Some(post) => found.push(post),
            None => errors.push(not_found_error("tweet", "ids", id, format!("Could not find tweet with ids: [{id}]."))),
        }
    }
    let fields = Fields::of(&params);
    let mut body = Map::new();
    if !found.is_empty() {
        body.insert("data".into(), found.iter().map(|p| tweet_json(world, p, &fields)).collect());
        if let Some(includes) = includes(world, &found, &fields) {
            body.insert("includes".into(), includes);
        }
    }
    if !errors.is_empty() {
        body.insert("errors".into(), Value::Array(errors));
    }
    Json(Value::Object(body)).into_response()
}

async fn user_by_username(
    State(sim): State<Simulator>,
    Path(username): Path<String>,
    Query(params): Query<Params>,
) -> Response {
    let world = &sim.world;
    match world.social_account_by_username(&username) {
        Some(i) => Json(json!({"data": user_json(world, i, &Fields::of(&params))})).into_response(),
        None => not_found("user", "username", &username).into_response(),
    }
}

async fn user_by_id(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    match world.social_account_by_id(&id) {
        Some(i) => Json(json!({"data": user_json(world, i, &Fields::of(&params))})).into_response(),
        None => not_found("user", "id", &id).into_response(),
    }
}

/// The account of `id`, or the answer to give instead: not found, or not authorised to
/// see a protected account's posts.
fn visible_account(world: &World, id: &str) -> Result<usize, Rejection> {
    let Some(index) = world.social_account_by_id(id) else { return Err(not_found("user", "id", id)) };
    if world.social_accounts()[index].protected {
        let error = json!({
            "title": "Authorization Error",
            "detail": format!("Sorry, you are not authorized to see the user with id: [{id}]."),
            "type": "https://api.twitter.com/2/problems/not-authorized-for-resource",
            "resource_type": "user",
            "parameter": "id",
            "resource_id": id,
            "value": id,
        });
        return Err(Rejection(StatusCode::OK, json!({"errors": [error], "meta": {"result_count": 0}})));
    }
    Ok(index)
}

async fn timeline(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    let run = || -> Result<Response, Rejection> {
        let count = max_results(&params, 5, 100, 10)?;
        let account = visible_account(world, &id)?;
        let (posts, next) = collect_posts(world, &params, "pagination_token", count, |p| p.author == account)?;
        Ok(posts_page(world, &posts, next, &Fields::of(&params)))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

async fn mentions(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    let run = || -> Result<Response, Rejection> {
        let count = max_results(&params, 5, 100, 10)?;
        let Some(account) = world.social_account_by_id(&id) else { return Err(not_found("user", "id", &id)) };
        let (posts, next) = collect_posts(world, &params, "pagination_token", count, |p| p.mentions == Some(account))?;
        Ok(posts_page(world, &posts, next, &Fields::of(&params)))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

fn user_list(world: &World, params: &Params, users: &[usize], lo: u32, hi: u32, default: u32) -> Response {
    let run = || -> Result<Response, Rejection> {
        let count = max_results(params, lo, hi, default)?;
        let offset = cursor(params, "pagination_token")?.unwrap_or(0) as usize;
        Ok(users_page(world, users, offset, count as usize, &Fields::of(params)))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

async fn followers(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    match world.social_account_by_id(&id) {
        Some(i) => user_list(world, &params, &world.social_accounts()[i].followers, 1, 1000, 100),
        None => not_found("user", "id", &id).into_response(),
    }
}

async fn following(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    match world.social_account_by_id(&id) {
        Some(i) => user_list(world, &params, &world.social_accounts()[i].following, 1, 1000, 100),
        None => not_found("user", "id", &id).into_response(),
    }
}

async fn users_search(State(sim): State<Simulator>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    let Some(query) = params.get("query").filter(|q| !q.trim().is_empty()) else {
        return invalid("query", "", "The `query` query parameter can not be empty".to_owned()).into_response();
    };
    let words: Vec<String> = query.to_lowercase().split_whitespace().map(str::to_owned).collect();
    let found: Vec<usize> = (0..world.social_accounts().len())
        .filter(|&i| {
            let a = &world.social_accounts()[i];
            let hay = format!("{} {} {}", a.name, a.username, a.description).to_lowercase();
            words.iter().all(|w| hay.contains(w.as_str()))
        })
        .collect();
    let run = || -> Result<Response, Rejection> {
        let count = max_results(&params, 1, 1000, 100)?;
        let offset = cursor(&params, "next_token")?.unwrap_or(0) as usize;
        Ok(users_page(world, &found, offset, count as usize, &Fields::of(&params)))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

fn post_of(world: &World, id: &str) -> Result<SocialPost, Rejection> {
    id.parse().ok().and_then(|n| world.post(n)).ok_or_else(|| not_found("tweet", "id", id))
}

async fn liking_users(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    match post_of(world, &id) {
        Ok(post) => user_list(world, &params, &world.post_likers(&post), 1, 100, 100),
        Err(answer) => answer.into_response(),
    }
}

async fn retweeted_by(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    match post_of(world, &id) {
        Ok(post) => {
            let mut users: Vec<usize> = world
                .posts_referring_to(post.id)
                .into_iter()
                .rev()
                .filter(|p| matches!(p.kind, PostKind::Retweet(_)))
                .map(|p| p.author)
                .collect();
            users.dedup();
            user_list(world, &params, &users, 1, 100, 100)
        }
        Err(answer) => answer.into_response(),
    }
}

fn referring(world: &World, params: &Params, id: &str, lo: u32, want: fn(&PostKind) -> bool) -> Response {
    let run = || -> Result<Response, Rejection> {
        let count = max_results(params, lo, 100, if lo == 10 { 10 } else { 100 })?;
        let post = post_of(world, id)?;
        let all: Vec<SocialPost> =
            world.posts_referring_to(post.id).into_iter().rev().filter(|p| want(&p.kind)).collect();
        let offset = cursor(params, "pagination_token")?.unwrap_or(0) as usize;
        let page: Vec<SocialPost> = all.iter().skip(offset).take(count as usize).cloned().collect();
        let next = (offset + (count as usize) < all.len()).then_some((offset + count as usize) as u64);
        Ok(posts_page(world, &page, next, &Fields::of(params)))
    };
    run().unwrap_or_else(IntoResponse::into_response)
}

async fn quote_tweets(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    referring(&sim.world, &params, &id, 10, |k| matches!(k, PostKind::Quote(_)))
}

async fn retweets(State(sim): State<Simulator>, Path(id): Path<String>, Query(params): Query<Params>) -> Response {
    referring(&sim.world, &params, &id, 1, |k| matches!(k, PostKind::Retweet(_)))
}

async fn trends(State(sim): State<Simulator>, Path(woeid): Path<String>, Query(params): Query<Params>) -> Response {
    let world = &sim.world;
    let count = match params.get("max_trends") {
        None => 20,
        Some(raw) => match raw.parse::<usize>() {
            Ok(n) if (1..=50).contains(&n) => n,
            _ => {
                return invalid(
                    "max_trends",
                    raw,
                    format!("The `max_trends` query parameter value [{raw}] is not between 1 and 50"),
                )
                .into_response();
            }
        },
    };
    let Some(trends) = woeid.parse().ok().and_then(|w| world.social_trends(w)) else {
        return not_found("trend", "woeid", &woeid).into_response();
    };
    let with_counts = params.get("trend.fields").is_some_and(|f| f.split(',').any(|x| x == "tweet_count"));
    let data: Vec<Value> = trends
        .into_iter()
        .take(count)
        .map(
            |(name, n)| {
                if with_counts { json!({"trend_name": name, "tweet_count": n}) } else { json!({"trend_name": name}) }
            },
        )
        .collect();
    Json(json!({"data": data})).into_response()
}
