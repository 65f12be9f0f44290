//! The social network's v2 API behind the sixteen `social` routes: app-only bearer auth, the
//! `data` / `includes` / `meta` / `errors` envelope, and fields asked for explicitly (the
//! network returns only ids and text otherwise).
//!
//! The answers already have the catalogue's shape, which mirrors the network's; decoding
//! into it keeps the documented fields and drops the rest. An unknown user or post comes
//! back as a 200 carrying a resource-not-found problem and no data: for the object a route
//! is about that is a 404 to the client, while partial failures of a multi-id lookup stay in
//! `errors`. Usernames are resolved to ids (which timelines and the follow graph need) once
//! a day.

use std::sync::Arc;
use std::time::Duration;

use http::header::{ACCEPT, AUTHORIZATION, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use svc_catalogue::routes::social::{
    SocialCountsQuery, SocialCountsResponse, SocialFollowsQuery, SocialGranularity, SocialIncludes,
    SocialPostTweetsQuery, SocialPostUsersQuery, SocialProblem, SocialSearchQuery, SocialTimelineQuery, SocialTrend,
    SocialTrendsQuery, SocialTrendsResponse, SocialTweet, SocialTweetResponse, SocialTweetsResponse, SocialUser,
    SocialUserRef, SocialUserResponse, SocialUsersResponse, SocialUsersSearchQuery,
};
use svc_domain::Clock;

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig};

/// Post fields asked for on every post answer: what the catalogue's `SocialTweet` documents.
const TWEET_FIELDS: &str =
    "author_id,created_at,lang,conversation_id,in_reply_to_user_id,referenced_tweets,possibly_sensitive,public_metrics";
/// User fields asked for on every user answer and expansion.
const USER_FIELDS: &str =
    "created_at,description,verified,verified_type,protected,location,url,profile_image_url,public_metrics";
/// Authors and referenced posts come along in `includes`.
const EXPANSIONS: &str = "author_id,referenced_tweets.id";

/// New posts arrive every minute; half a minute of staleness is what a polling agent gets.
const POSTS_TTL: Duration = Duration::from_secs(30);
/// One post and the people engaging with it: engagement counts move slowly after the first hour.
const POST_TTL: Duration = Duration::from_secs(60);
/// Profiles and follow lists change over hours.
const PROFILE_TTL: Duration = Duration::from_secs(300);
/// A username points at the same id until it is renamed, which is rare.
const USER_ID_TTL: Duration = Duration::from_secs(24 * 3600);
/// Counts over a 7-day window move a little each minute.
const COUNTS_TTL: Duration = Duration::from_secs(60);
/// Trends are recomputed by the network every few minutes.
const TRENDS_TTL: Duration = Duration::from_secs(300);

/// What to tell a client whose search query the network refused.
const BAD_QUERY: &str = "the network could not parse this query: use words, \"exact phrases\", $cashtags, #hashtags, \
     OR, a leading - to exclude, and operators such as from:, is:retweet, is:reply, is:quote or lang:";
/// What to tell a client whose query or page token the network refused.
const BAD_QUERY_OR_TOKEN: &str =
    "the network refused this query or page token: check the query syntax, or start again without next_token";
/// What to tell a client whose page token the network refused.
const BAD_TOKEN: &str = "this page token is not valid (any more): start again from the first page";

/// The social adapter.
#[derive(Debug)]
pub struct Social {
    client: VendorClient,
    post_lists: TtlCache<SocialTweetsResponse>,
    posts: TtlCache<SocialTweetResponse>,
    users: TtlCache<SocialUserResponse>,
    user_lists: TtlCache<SocialUsersResponse>,
    user_ids: TtlCache<String>,
    counts: TtlCache<SocialCountsResponse>,
    trends: TtlCache<SocialTrendsResponse>,
}

/// A single-object answer: `data` is absent when the object is not found.
#[derive(Debug, Deserialize)]
pub struct WireOne<T> {
    /// The object.
    pub data: Option<T>,
    /// Referenced objects.
    #[serde(default)]
    pub includes: SocialIncludes,
    /// Problems, e.g. not found.
    #[serde(default)]
    pub errors: Vec<SocialProblem>,
}

/// The trends answer.
#[derive(Debug, Deserialize)]
pub struct WireTrends {
    /// Trends.
    #[serde(default)]
    pub data: Vec<SocialTrend>,
    /// Problems, e.g. no trends for the place.
    #[serde(default)]
    pub errors: Vec<SocialProblem>,
}

/// Whether the network said the object asked for does not exist.
fn says_not_found(errors: &[SocialProblem]) -> bool {
    errors.iter().any(|e| e.kind.as_deref().is_some_and(|k| k.ends_with("/resource-not-found")))
}

/// Profiles write an empty string for "no website" or "no location"; absent says that.
fn tidy_user(mut user: SocialUser) -> SocialUser {
    user.url = user.url.filter(|u| !u.is_empty());
    user.location = user.location.filter(|l| !l.is_empty());
    user
}

fn tidy_includes(mut includes: SocialIncludes) -> SocialIncludes {
    includes.users = includes.users.into_iter().map(tidy_user).collect();
    includes
}

impl Social {
    pub(crate) fn new(config: &VendorConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        // Without a token every call is refused by the network (a 502 naming the family);
        // the service still starts, so the other families keep working.
        if let Some(key) = &config.key {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| UpstreamError::Config {
                vendor: Vendor::Social,
                cause: "the bearer token has characters a header cannot carry".into(),
            })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let client = VendorClient::new(Vendor::Social, config, headers)?;
        let family = Vendor::Social.family();
        Ok(Social {
            client,
            post_lists: TtlCache::new(family, clock.clone(), 2048),
            posts: TtlCache::new(family, clock.clone(), 4096),
            users: TtlCache::new(family, clock.clone(), 4096),
            user_lists: TtlCache::new(family, clock.clone(), 2048),
            user_ids: TtlCache::new(family, clock.clone(), 16_384),
            counts: TtlCache::new(family, clock.clone(), 1024),
            trends: TtlCache::new(family, clock, 64),
        })
    }

    /// `GET path?query` decoded as `T`, kept for `ttl` in `cache` under the request itself.
    /// A 400 is the client's when `refusal` names the input field the network refused.
    async fn fetch<T: DeserializeOwned + Clone>(
        &self,
        cache: &TtlCache<T>,
        ttl: Duration,
        path: &str,
        query: &[(&str, &str)],
        refusal: Option<(&'static str, &'static str)>,
    ) -> Result<T, UpstreamError> {
        let key = format!("{path}?{}", query.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&"));
        cache
            .get_or_fetch(key, ttl, || async {
                match (self.client.get_json::<T>(path, query).await, refusal) {
                    (Err(UpstreamError::Status { status: 400, vendor }), Some((field, reason))) => {
                        Err(UpstreamError::BadInput { vendor, field, reason })
                    }
                    (result, _) => result,
                }
            })
            .await
    }

    /// Recent posts (7 days) matching an X query, newest first.
    pub async fn search(&self, input: &SocialSearchQuery) -> Result<SocialTweetsResponse, UpstreamError> {
        let max = input.max_results.to_string();
        let mut query = post_query(&max);
        query.push(("query", input.query.as_str()));
        let mut reason = BAD_QUERY;
        if let Some(token) = &input.next_token {
            query.push(("next_token", token.as_str()));
            reason = BAD_QUERY_OR_TOKEN;
        }
        let answer =
            self.fetch(&self.post_lists, POSTS_TTL, "/2/tweets/search/recent", &query, Some(("query", reason))).await?;
        Ok(tidy_posts(answer))
    }

    /// One post by id, with its author and referenced posts.
    pub async fn tweet(&self, id: &str) -> Result<SocialTweetResponse, UpstreamError> {
        let query = [("tweet.fields", TWEET_FIELDS), ("user.fields", USER_FIELDS), ("expansions", EXPANSIONS)];
        let path = format!("/2/tweets/{id}");
        let key = format!("{path}?full");
        self.posts
            .get_or_fetch(key, POST_TTL, || async {
                let wire: WireOne<SocialTweet> = self.client.get_json(&path, &query).await?;
                match wire.data {
                    Some(data) => Ok(SocialTweetResponse { data, includes: tidy_includes(wire.includes) }),
                    None => Err(not_found("post with id", id)),
                }
            })
            .await
    }

    /// Posts by ids, in the order asked; ids not found are listed in `errors`.
    pub async fn tweets(&self, ids: &[&str]) -> Result<SocialTweetsResponse, UpstreamError> {
        let ids = ids.join(",");
        let mut query = post_query("");
        query.retain(|(k, _)| *k != "max_results");
        query.push(("ids", ids.as_str()));
        let answer = self.fetch(&self.post_lists, POST_TTL, "/2/tweets", &query, None).await?;
        Ok(tidy_posts(answer))
    }

    /// A profile by username; remembers the username's id.
    pub async fn user(&self, username: &str) -> Result<SocialUserResponse, UpstreamError> {
        let user = self.profile(&format!("/2/users/by/username/{username}"), "user with username", username).await?;
        self.user_ids.put(username.to_lowercase(), user.data.id.clone(), USER_ID_TTL);
        Ok(user)
    }

    /// A profile by numeric id.
    pub async fn user_by_id(&self, id: &str) -> Result<SocialUserResponse, UpstreamError> {
        self.profile(&format!("/2/users/{id}"), "user with id", id).await
    }

    async fn profile(&self, path: &str, what: &'static str, id: &str) -> Result<SocialUserResponse, UpstreamError> {
        self.users
            .get_or_fetch(path.to_owned(), PROFILE_TTL, || async {
                let wire: WireOne<SocialUser> = self.client.get_json(path, &[("user.fields", USER_FIELDS)]).await?;
                wire.data.map(|u| SocialUserResponse { data: tidy_user(u) }).ok_or_else(|| not_found(what, id))
            })
            .await
    }

    /// The numeric id of a user named by id or username (one lookup per username a day).
    pub async fn user_id(&self, user: SocialUserRef<'_>) -> Result<String, UpstreamError> {
        let username = match user {
            SocialUserRef::Id(id) => return Ok(id.to_owned()),
            SocialUserRef::Username(name) => name,
        };
        self.user_ids
            .get_or_fetch(username.to_lowercase(), USER_ID_TTL, || async {
                let path = format!("/2/users/by/username/{username}");
                let wire: WireOne<SocialUser> = self.client.get_json(&path, &[]).await?;
                wire.data.map(|u| u.id).ok_or_else(|| not_found("user with username", username))
            })
            .await
    }

    /// A user's posts (`timeline`) or posts mentioning them (`mentions`), newest first.
    pub async fn user_posts(
        &self,
        input: &SocialTimelineQuery,
        mentions: bool,
    ) -> Result<SocialTweetsResponse, UpstreamError> {
        let id = self.user_id(input.user()).await?;
        let max = input.max_results.to_string();
        let mut query = post_query(&max);
        for (name, value) in [("since_id", &input.since_id), ("until_id", &input.until_id)] {
            if let Some(value) = value {
                query.push((name, value.as_str()));
            }
        }
        if let Some(token) = &input.pagination_token {
            query.push(("pagination_token", token.as_str()));
        }
        let path = format!("/2/users/{id}/{}", if mentions { "mentions" } else { "tweets" });
        let answer =
            self.fetch(&self.post_lists, POSTS_TTL, &path, &query, Some(("pagination_token", BAD_TOKEN))).await?;
        if answer.data.is_empty() && says_not_found(&answer.errors) {
            return Err(not_found("user with id", &id));
        }
        Ok(tidy_posts(answer))
    }

    /// A user's followers or the accounts they follow, most recent first.
    pub async fn follows(
        &self,
        input: &SocialFollowsQuery,
        followers: bool,
    ) -> Result<SocialUsersResponse, UpstreamError> {
        let id = self.user_id(input.user()).await?;
        let path = format!("/2/users/{id}/{}", if followers { "followers" } else { "following" });
        self.user_list(
            &path,
            input.max_results,
            "pagination_token",
            input.pagination_token.as_deref(),
            "user with id",
            &id,
        )
        .await
    }

    /// Profiles matching words in name, username or bio.
    pub async fn users_search(&self, input: &SocialUsersSearchQuery) -> Result<SocialUsersResponse, UpstreamError> {
        let max = input.max_results.to_string();
        let mut query =
            vec![("query", input.query.as_str()), ("max_results", max.as_str()), ("user.fields", USER_FIELDS)];
        if let Some(token) = &input.next_token {
            query.push(("next_token", token.as_str()));
        }
        let answer = self
            .fetch(&self.user_lists, PROFILE_TTL, "/2/users/search", &query, Some(("next_token", BAD_TOKEN)))
            .await?;
        Ok(tidy_users(answer))
    }

    /// Users who liked (`liking_users`) or reposted (`retweeted_by`) a post.
    pub async fn post_users(
        &self,
        input: &SocialPostUsersQuery,
        relation: PostUsers,
    ) -> Result<SocialUsersResponse, UpstreamError> {
        let path = format!("/2/tweets/{}/{}", input.tweet_id, relation.segment());
        self.user_list(
            &path,
            input.max_results,
            "pagination_token",
            input.pagination_token.as_deref(),
            "post with id",
            &input.tweet_id,
        )
        .await
    }

    async fn user_list(
        &self,
        path: &str,
        max_results: u32,
        token_name: &'static str,
        token: Option<&str>,
        what: &'static str,
        id: &str,
    ) -> Result<SocialUsersResponse, UpstreamError> {
        let max = max_results.to_string();
        let mut query = vec![("max_results", max.as_str()), ("user.fields", USER_FIELDS)];
        if let Some(token) = token {
            query.push((token_name, token));
        }
        let answer = self.fetch(&self.user_lists, PROFILE_TTL, path, &query, Some((token_name, BAD_TOKEN))).await?;
        if answer.data.is_empty() && says_not_found(&answer.errors) {
            return Err(not_found(what, id));
        }
        Ok(tidy_users(answer))
    }

    /// Posts quoting (`quote_tweets`) or reposting (`retweets`) a post.
    pub async fn post_posts(
        &self,
        input: &SocialPostTweetsQuery,
        relation: PostPosts,
    ) -> Result<SocialTweetsResponse, UpstreamError> {
        let max = input.max_results.to_string();
        let mut query = post_query(&max);
        if let Some(token) = &input.pagination_token {
            query.push(("pagination_token", token.as_str()));
        }
        let segment = match relation {
            PostPosts::Quotes => "quote_tweets",
            PostPosts::Reposts => "retweets",
        };
        let path = format!("/2/tweets/{}/{segment}", input.tweet_id);
        let answer =
            self.fetch(&self.post_lists, POST_TTL, &path, &query, Some(("pagination_token", BAD_TOKEN))).await?;
        if answer.data.is_empty() && says_not_found(&answer.errors) {
            return Err(not_found("post with id", &input.tweet_id));
        }
        Ok(tidy_posts(answer))
    }

    /// Posts of the last 7 days matching a query, per bucket, oldest first; with
    /// `max_results`, only the newest buckets, and the total over them.
    pub async fn counts(&self, input: &SocialCountsQuery) -> Result<SocialCountsResponse, UpstreamError> {
        let granularity = match input.granularity {
            SocialGranularity::Minute => "minute",
            SocialGranularity::Hour => "hour",
            SocialGranularity::Day => "day",
        };
        let query = [("query", input.query.as_str()), ("granularity", granularity)];
        let mut answer =
            self.fetch(&self.counts, COUNTS_TTL, "/2/tweets/counts/recent", &query, Some(("query", BAD_QUERY))).await?;
        if let Some(max) = input.max_results {
            let drop = answer.data.len().saturating_sub(max as usize);
            answer.data.drain(..drop);
            answer.meta.total_tweet_count = answer.data.iter().map(|b| b.tweet_count).sum();
        }
        Ok(answer)
    }

    /// Trending topics of a place, most active first.
    pub async fn trends(&self, input: &SocialTrendsQuery) -> Result<SocialTrendsResponse, UpstreamError> {
        let path = format!("/2/trends/by/woeid/{}", input.woeid);
        let max = input.max_trends.to_string();
        let key = format!("{path}?{max}");
        self.trends
            .get_or_fetch(key, TRENDS_TTL, || async {
                let query = [("max_trends", max.as_str()), ("trend.fields", "trend_name,tweet_count")];
                let wire: WireTrends = self.client.get_json(&path, &query).await?;
                if wire.data.is_empty() && !wire.errors.is_empty() {
                    return Err(not_found("trends for the place (WOEID)", &input.woeid.to_string()));
                }
                Ok(SocialTrendsResponse { data: wire.data })
            })
            .await
    }
}

/// People related to a post.
#[derive(Debug, Clone, Copy)]
pub enum PostUsers {
    /// Who liked it.
    Liking,
    /// Who reposted it.
    RetweetedBy,
}

impl PostUsers {
    fn segment(self) -> &'static str {
        match self {
            PostUsers::Liking => "liking_users",
            PostUsers::RetweetedBy => "retweeted_by",
        }
    }
}

/// Posts related to a post.
#[derive(Debug, Clone, Copy)]
pub enum PostPosts {
    /// Posts quoting it.
    Quotes,
    /// Reposts of it.
    Reposts,
}

/// The field parameters of every post answer, with `max_results`.
fn post_query(max: &str) -> Vec<(&'static str, &str)> {
    vec![("max_results", max), ("tweet.fields", TWEET_FIELDS), ("user.fields", USER_FIELDS), ("expansions", EXPANSIONS)]
}

fn tidy_posts(mut answer: SocialTweetsResponse) -> SocialTweetsResponse {
    answer.includes = tidy_includes(answer.includes);
    answer.meta.result_count = answer.data.len() as u32;
    answer
}

fn tidy_users(mut answer: SocialUsersResponse) -> SocialUsersResponse {
    answer.data = answer.data.into_iter().map(tidy_user).collect();
    answer.meta.result_count = answer.data.len() as u32;
    answer
}

fn not_found(what: &'static str, id: &str) -> UpstreamError {
    UpstreamError::NotFound { vendor: Vendor::Social, what, id: id.to_owned() }
}
