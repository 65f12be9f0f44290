//! Social-network data (X API v2 behind it): search, posts, users, timelines, the follow
//! graph, counts and trends. All `GET`; parameters come from the path and query and may also
//! come in a JSON body with the same names (path and query win over the body).
//!
//! Answers are the X API v2 envelope (`data`, `includes`, `meta`, `errors`), normalised: list
//! fields are always present (empty rather than absent), partial failures (a 200 that could not
//! find one of several ids) are listed in `errors`, and only the documented fields below are
//! returned. The `{user_id}` of timeline, mentions, followers and following takes a numeric id
//! or a username (the upstream needs an id; svc resolves a username with one extra call).
//! All digits is read as an id, so an all-digit username must be looked up with `user/{username}`
//! first; likewise `user/id/...` is the by-id lookup, so the account named `id` is reached by its id.

use crate::ids;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Timestamp;
use crate::route::RouteOutput;
use crate::{FieldError, Group, InputSource, Loc, RouteInput, RouteSpec};

/// The most ids `social.tweets` takes in one call.
pub const SOCIAL_MAX_IDS: usize = 50;

/// The social routes.
pub fn routes() -> Vec<RouteSpec> {
    fn get<I: RouteInput, O: RouteOutput>(
        id: &'static str,
        path: &'static str,
        description: &'static str,
    ) -> RouteSpec {
        RouteSpec::get::<I, O>(id, path, description).source(InputSource::QueryOrBody).group(Group::Data).tag("social")
    }
    vec![
        get::<SocialSearchQuery, SocialTweetsResponse>(
            ids::social::SEARCH,
            tools!("/social/search"),
            "Search posts of the last 7 days with X query syntax (e.g. `$SOL -is:retweet`): text, author, time and likes, reposts, replies, quotes, impressions.",
        ),
        get::<SocialTweetPath, SocialTweetResponse>(
            ids::social::TWEET,
            tools!("/social/tweet/{tweet_id}"),
            "One post by numeric id: text, author profile, time and engagement counts.",
        ),
        get::<SocialTweetsQuery, SocialTweetsResponse>(
            ids::social::TWEETS,
            tools!("/social/tweets"),
            "Up to 50 posts by comma-separated numeric ids in one call; ids not found are listed in `errors`.",
        ),
        get::<SocialUsernamePath, SocialUserResponse>(
            ids::social::USER,
            tools!("/social/user/{username}"),
            "A user profile by username (without @): bio, creation date, verification, followers, following and post counts.",
        ),
        get::<SocialUserIdPath, SocialUserResponse>(
            ids::social::USER_BY_ID,
            tools!("/social/user/id/{user_id}"),
            "A user profile by numeric user id: bio, creation date, verification, followers, following and post counts.",
        ),
        get::<SocialTimelineQuery, SocialTweetsResponse>(
            ids::social::USER_TIMELINE,
            tools!("/social/user/{user_id}/timeline"),
            "A user's recent posts, newest first, with engagement counts (user id or username; 5-100 per call, since/until a post id).",
        ),
        get::<SocialTimelineQuery, SocialTweetsResponse>(
            ids::social::USER_MENTIONS,
            tools!("/social/user/{user_id}/mentions"),
            "Recent posts mentioning a user, newest first, with their authors (user id or username; 5-100 per call).",
        ),
        get::<SocialFollowsQuery, SocialUsersResponse>(
            ids::social::USER_FOLLOWERS,
            tools!("/social/user/{user_id}/followers"),
            "A user's followers as profiles with follower counts, up to 1000 per page (user id or username).",
        ),
        get::<SocialFollowsQuery, SocialUsersResponse>(
            ids::social::USER_FOLLOWING,
            tools!("/social/user/{user_id}/following"),
            "Accounts a user follows as profiles with follower counts, up to 1000 per page (user id or username).",
        ),
        get::<SocialUsersSearchQuery, SocialUsersResponse>(
            ids::social::USERS_SEARCH,
            tools!("/social/users/search"),
            "Search user profiles by words in name, username or bio; up to 100 profiles with follower counts.",
        ),
        get::<SocialPostUsersQuery, SocialUsersResponse>(
            ids::social::TWEET_LIKING_USERS,
            tools!("/social/tweet/{tweet_id}/liking-users"),
            "Profiles of users who liked a post, up to 100 per page.",
        ),
        get::<SocialPostTweetsQuery, SocialTweetsResponse>(
            ids::social::TWEET_QUOTE_TWEETS,
            tools!("/social/tweet/{tweet_id}/quote-tweets"),
            "Posts quoting a post, with their authors and engagement counts, 10-100 per page.",
        ),
        get::<SocialPostTweetsQuery, SocialTweetsResponse>(
            ids::social::TWEET_RETWEETS,
            tools!("/social/tweet/{tweet_id}/retweets"),
            "Reposts of a post as posts, with their authors, 10-100 per page.",
        ),
        get::<SocialPostUsersQuery, SocialUsersResponse>(
            ids::social::TWEET_RETWEETED_BY,
            tools!("/social/tweet/{tweet_id}/retweeted-by"),
            "Profiles of users who reposted a post, up to 100 per page.",
        ),
        get::<SocialCountsQuery, SocialCountsResponse>(
            ids::social::COUNTS,
            tools!("/social/counts"),
            "How many posts of the last 7 days matched a query, per minute, hour or day, with the total.",
        ),
        get::<SocialTrendsQuery, SocialTrendsResponse>(
            ids::social::TRENDS,
            tools!("/social/trends"),
            "Trending topics and hashtags for a place (WOEID; 1 = worldwide, 23424977 = United States) with post counts.",
        ),
    ]
}

fn ten() -> u32 {
    10
}

fn twenty() -> u32 {
    20
}

fn hundred() -> u32 {
    100
}

fn worldwide() -> u32 {
    1
}

fn is_numeric_id(s: &str) -> bool {
    (1..=19).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_username(s: &str) -> bool {
    (1..=15).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn username_errors(field: &str, name: &str) -> Vec<FieldError> {
    let msg = if name.starts_with('@') {
        format!("drop the leading @: use `{}`", name.trim_start_matches('@'))
    } else if !is_username(name) {
        "a username is 1-15 letters, digits or underscores".to_owned()
    } else {
        return Vec::new();
    };
    vec![FieldError::new([Loc::from(field)], msg, "value_error")]
}

fn user_ref_errors(field: &str, value: &str) -> Vec<FieldError> {
    let msg = if value.starts_with('@') {
        return username_errors(field, value);
    } else if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        if is_numeric_id(value) {
            return Vec::new();
        }
        "a numeric user id has 1-19 digits"
    } else if is_username(value) {
        return Vec::new();
    } else {
        "expected a numeric user id (1-19 digits) or a username (1-15 letters, digits or underscores)"
    };
    vec![FieldError::new([Loc::from(field)], msg, "value_error")]
}

/// Who a `{user_id}` path parameter names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocialUserRef<'a> {
    /// All digits: a numeric user id, used as is.
    Id(&'a str),
    /// Anything else: a username, which the handler resolves to an id first.
    Username(&'a str),
}

impl<'a> SocialUserRef<'a> {
    /// Reads a validated `{user_id}`: all digits is an id, anything else a username.
    pub fn of(value: &'a str) -> Self {
        if value.bytes().all(|b| b.is_ascii_digit()) {
            SocialUserRef::Id(value)
        } else {
            SocialUserRef::Username(value)
        }
    }
}

/// Input of `social.search`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialSearchQuery {
    /// Search query in X query syntax over posts of the last 7 days, 1–512 characters
    /// (e.g. `$SOL -is:retweet lang:en`).
    #[garde(length(chars, min = 1, max = 512))]
    pub query: String,
    /// Posts to return, 10–100 (default 10).
    #[serde(default = "ten")]
    #[garde(range(min = 10, max = 100))]
    pub max_results: u32,
    /// Page token from a previous answer's `meta.next_token`, for the next page.
    #[garde(length(chars, min = 1, max = 256))]
    pub next_token: Option<String>,
}

impl RouteInput for SocialSearchQuery {}

/// Input of `social.tweet`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialTweetPath {
    /// Numeric post id, 1–19 digits (path parameter).
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub tweet_id: String,
}

impl RouteInput for SocialTweetPath {}

/// Input of `social.tweets`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialTweetsQuery {
    /// Comma-separated numeric post ids, 1–50 of them, each 1–19 digits, no spaces
    /// (e.g. `1495979553889697792,1496000000000000000`).
    #[garde(skip)]
    #[schemars(pattern("^[0-9]{1,19}(,[0-9]{1,19}){0,49}$"))]
    pub ids: String,
}

impl SocialTweetsQuery {
    /// The ids, in the order given.
    pub fn id_list(&self) -> Vec<&str> {
        self.ids.split(',').collect()
    }
}

impl RouteInput for SocialTweetsQuery {
    fn check(&self) -> Vec<FieldError> {
        let error = |msg: String| FieldError::new([Loc::from("ids")], msg, "value_error");
        let ids = self.id_list();
        let mut errors = Vec::new();
        if ids.len() > SOCIAL_MAX_IDS {
            errors.push(error(format!("at most {SOCIAL_MAX_IDS} ids per call, got {}", ids.len())));
        }
        if let Some((i, bad)) = ids.iter().enumerate().find(|(_, id)| !is_numeric_id(id)) {
            errors.push(error(if bad.is_empty() {
                format!("id {} is empty: separate numeric ids with single commas", i + 1)
            } else {
                format!("id {} (`{bad}`) is not a numeric post id of 1-19 digits", i + 1)
            }));
        }
        errors
    }
}

/// Input of `social.user`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialUsernamePath {
    /// Username without the leading `@`: 1–15 letters, digits or underscores (path parameter).
    #[garde(skip)]
    #[schemars(pattern("^[A-Za-z0-9_]{1,15}$"))]
    pub username: String,
}

impl RouteInput for SocialUsernamePath {
    fn check(&self) -> Vec<FieldError> {
        username_errors("username", &self.username)
    }
}

/// Input of `social.user_by_id`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialUserIdPath {
    /// Numeric user id, 1–19 digits (path parameter).
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub user_id: String,
}

impl RouteInput for SocialUserIdPath {}

/// Input of `social.user_timeline` and `social.user_mentions`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialTimelineQuery {
    /// The user (path parameter): a numeric user id (1–19 digits) or a username without `@`
    /// (1–15 letters, digits or underscores). All digits is read as an id; a username is
    /// resolved to its id with one extra upstream call.
    #[garde(skip)]
    #[schemars(pattern("^([0-9]{1,19}|[A-Za-z0-9_]{1,15})$"))]
    pub user_id: String,
    /// Posts to return, 5–100 (default 10).
    #[serde(default = "ten")]
    #[garde(range(min = 5, max = 100))]
    pub max_results: u32,
    /// Only posts newer than this numeric post id.
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub since_id: Option<String>,
    /// Only posts older than this numeric post id.
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub until_id: Option<String>,
    /// Page token from a previous answer's `meta.next_token`, for the next page.
    #[garde(length(chars, min = 1, max = 256))]
    pub pagination_token: Option<String>,
}

impl SocialTimelineQuery {
    /// Whether `user_id` is an id or a username.
    pub fn user(&self) -> SocialUserRef<'_> {
        SocialUserRef::of(&self.user_id)
    }
}

impl RouteInput for SocialTimelineQuery {
    fn check(&self) -> Vec<FieldError> {
        let mut errors = user_ref_errors("user_id", &self.user_id);
        let id = |s: &Option<String>| s.as_deref().and_then(|s| s.parse::<u64>().ok());
        if let (Some(since), Some(until)) = (id(&self.since_id), id(&self.until_id))
            && since >= until
        {
            errors.push(FieldError::new(
                [Loc::from("until_id")],
                "until_id must be a larger (later) post id than since_id",
                "value_error",
            ));
        }
        errors
    }
}

/// Input of `social.user_followers` and `social.user_following`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialFollowsQuery {
    /// The user (path parameter): a numeric user id (1–19 digits) or a username without `@`
    /// (1–15 letters, digits or underscores). All digits is read as an id; a username is
    /// resolved to its id with one extra upstream call.
    #[garde(skip)]
    #[schemars(pattern("^([0-9]{1,19}|[A-Za-z0-9_]{1,15})$"))]
    pub user_id: String,
    /// Users to return, 1–1000 (default 20).
    #[serde(default = "twenty")]
    #[garde(range(min = 1, max = 1000))]
    pub max_results: u32,
    /// Page token from a previous answer's `meta.next_token`, for the next page.
    #[garde(length(chars, min = 1, max = 256))]
    pub pagination_token: Option<String>,
}

impl SocialFollowsQuery {
    /// Whether `user_id` is an id or a username.
    pub fn user(&self) -> SocialUserRef<'_> {
        SocialUserRef::of(&self.user_id)
    }
}

impl RouteInput for SocialFollowsQuery {
    fn check(&self) -> Vec<FieldError> {
        user_ref_errors("user_id", &self.user_id)
    }
}

/// Input of `social.users_search`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialUsersSearchQuery {
    /// Words to match in display names, usernames and bios, 1–512 characters.
    #[garde(length(chars, min = 1, max = 512))]
    pub query: String,
    /// Users to return, 1–100 (default 10).
    #[serde(default = "ten")]
    #[garde(range(min = 1, max = 100))]
    pub max_results: u32,
    /// Page token from a previous answer's `meta.next_token`, for the next page.
    #[garde(length(chars, min = 1, max = 256))]
    pub next_token: Option<String>,
}

impl RouteInput for SocialUsersSearchQuery {}

/// Input of `social.tweet_liking_users` and `social.tweet_retweeted_by`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialPostUsersQuery {
    /// Numeric post id, 1–19 digits (path parameter).
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub tweet_id: String,
    /// Users to return, 1–100 (default 100).
    #[serde(default = "hundred")]
    #[garde(range(min = 1, max = 100))]
    pub max_results: u32,
    /// Page token from a previous answer's `meta.next_token`, for the next page.
    #[garde(length(chars, min = 1, max = 256))]
    pub pagination_token: Option<String>,
}

impl RouteInput for SocialPostUsersQuery {}

/// Input of `social.tweet_quote_tweets` and `social.tweet_retweets`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialPostTweetsQuery {
    /// Numeric post id, 1–19 digits (path parameter).
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub tweet_id: String,
    /// Posts to return, 10–100 (default 10).
    #[serde(default = "ten")]
    #[garde(range(min = 10, max = 100))]
    pub max_results: u32,
    /// Page token from a previous answer's `meta.next_token`, for the next page.
    #[garde(length(chars, min = 1, max = 256))]
    pub pagination_token: Option<String>,
}

impl RouteInput for SocialPostTweetsQuery {}

/// Input of `social.counts`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialCountsQuery {
    /// Search query in X query syntax, 1–512 characters; posts of the last 7 days are counted.
    #[garde(length(chars, min = 1, max = 512))]
    pub query: String,
    /// Most buckets to return, 10–100 (newest kept); every bucket of the 7-day window when absent.
    #[garde(range(min = 10, max = 100))]
    pub max_results: Option<u32>,
    /// Bucket size: `minute`, `hour` or `day` (default `hour`).
    #[serde(default)]
    #[garde(skip)]
    pub granularity: SocialGranularity,
}

impl RouteInput for SocialCountsQuery {}

/// Bucket size of `social.counts`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SocialGranularity {
    /// One bucket per minute.
    Minute,
    /// One bucket per hour.
    #[default]
    Hour,
    /// One bucket per day.
    Day,
}

/// Input of `social.trends`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialTrendsQuery {
    /// Yahoo! Where On Earth id of the place: 1 = worldwide (default), 23424977 = United
    /// States, 23424975 = United Kingdom.
    #[serde(default = "worldwide")]
    #[garde(range(min = 1))]
    pub woeid: u32,
    /// Trends to return, 1–50 (default 20).
    #[serde(default = "twenty")]
    #[garde(range(min = 1, max = 50))]
    pub max_trends: u32,
}

impl RouteInput for SocialTrendsQuery {}

/// A post.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTweet {
    /// Post id (a 64-bit integer as a string).
    pub id: String,
    /// Full text.
    pub text: String,
    /// User id of the author; the profile is in `includes.users`.
    pub author_id: Option<String>,
    /// When it was posted.
    pub created_at: Option<Timestamp>,
    /// Detected language (BCP 47 code such as `en`), `und` when unknown.
    pub lang: Option<String>,
    /// Id of the first post of the thread this post belongs to.
    pub conversation_id: Option<String>,
    /// User id of the author of the post this one replies to.
    pub in_reply_to_user_id: Option<String>,
    /// Posts this one reposts, quotes or replies to; their text is in `includes.tweets` when
    /// returned.
    #[serde(default)]
    pub referenced_tweets: Vec<SocialReferencedTweet>,
    /// Whether the post may contain sensitive content.
    pub possibly_sensitive: Option<bool>,
    /// Engagement counts.
    pub public_metrics: Option<SocialTweetMetrics>,
}

/// A post referenced by another.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialReferencedTweet {
    /// How it is referenced.
    #[serde(rename = "type")]
    pub kind: SocialReferenceKind,
    /// Id of the referenced post.
    pub id: String,
}

/// How one post references another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SocialReferenceKind {
    /// A repost.
    Retweeted,
    /// A quote.
    Quoted,
    /// A reply.
    RepliedTo,
}

/// Engagement counts of a post.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTweetMetrics {
    /// Reposts.
    pub retweet_count: u64,
    /// Replies.
    pub reply_count: u64,
    /// Likes.
    pub like_count: u64,
    /// Quotes.
    pub quote_count: u64,
    /// Bookmarks, when reported.
    pub bookmark_count: Option<u64>,
    /// Views, when reported.
    pub impression_count: Option<u64>,
}

/// A user profile.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialUser {
    /// User id (a 64-bit integer as a string).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Username, without `@`.
    pub username: String,
    /// Bio text.
    pub description: Option<String>,
    /// When the account was created.
    pub created_at: Option<Timestamp>,
    /// Whether the account has a verification check mark.
    pub verified: Option<bool>,
    /// Kind of check mark: `blue`, `business`, `government` or `none`.
    pub verified_type: Option<String>,
    /// Whether the account's posts are protected (visible to approved followers only).
    pub protected: Option<bool>,
    /// Location the user wrote in the profile (free text).
    pub location: Option<String>,
    /// Website in the profile.
    pub url: Option<String>,
    /// Avatar image URL.
    pub profile_image_url: Option<String>,
    /// Audience and activity counts.
    pub public_metrics: Option<SocialUserMetrics>,
}

/// Audience and activity counts of a user.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialUserMetrics {
    /// Followers.
    pub followers_count: u64,
    /// Accounts this user follows.
    pub following_count: u64,
    /// Posts, reposts and replies written.
    pub tweet_count: u64,
    /// Public lists that include the user.
    pub listed_count: u64,
    /// Posts the user liked, when reported.
    pub like_count: Option<u64>,
}

/// Objects referenced by the posts of an answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SocialIncludes {
    /// Authors of the posts in `data` (and users they mention), each once.
    #[serde(default)]
    pub users: Vec<SocialUser>,
    /// Posts referenced by the posts in `data` (quoted, replied to, reposted), each once.
    #[serde(default)]
    pub tweets: Vec<SocialTweet>,
}

/// Count and paging facts of a list answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SocialMeta {
    /// Items in `data`.
    #[serde(default)]
    pub result_count: u32,
    /// Id of the newest post in `data` (post lists only).
    pub newest_id: Option<String>,
    /// Id of the oldest post in `data` (post lists only).
    pub oldest_id: Option<String>,
    /// Pass as `next_token` / `pagination_token` to get the next page; absent on the last page.
    pub next_token: Option<String>,
    /// Token of the previous page, when the upstream gives one.
    pub previous_token: Option<String>,
}

/// A partial failure inside a successful answer, as an RFC 7807 problem (e.g. one id of a
/// lookup not found, or a protected account's posts not visible).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialProblem {
    /// Short summary, e.g. `Not Found Error`.
    pub title: String,
    /// What happened, e.g. `Could not find tweet with ids: [1].`.
    pub detail: Option<String>,
    /// Problem type URI, e.g. `https://api.twitter.com/2/problems/resource-not-found`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Id of the post or user concerned.
    pub resource_id: Option<String>,
    /// Kind of resource concerned: `tweet` or `user`.
    pub resource_type: Option<String>,
    /// The request parameter that named it, e.g. `ids`.
    pub parameter: Option<String>,
}

/// A list of posts (`search`, `tweets`, `timeline`, `mentions`, `quote-tweets`, `retweets`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTweetsResponse {
    /// Posts; newest first for search, timelines and mentions, in request order for `tweets`.
    #[serde(default)]
    pub data: Vec<SocialTweet>,
    /// Authors and referenced posts.
    #[serde(default)]
    pub includes: SocialIncludes,
    /// Count and paging.
    #[serde(default)]
    pub meta: SocialMeta,
    /// Partial failures (e.g. ids not found); empty when everything was found.
    #[serde(default)]
    pub errors: Vec<SocialProblem>,
}

/// One post (`tweet/{tweet_id}`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTweetResponse {
    /// The post.
    pub data: SocialTweet,
    /// Its author and referenced posts.
    #[serde(default)]
    pub includes: SocialIncludes,
}

/// One user profile (`user/{username}`, `user/id/{user_id}`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialUserResponse {
    /// The user.
    pub data: SocialUser,
}

/// A list of user profiles (`followers`, `following`, `users/search`, `liking-users`,
/// `retweeted-by`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialUsersResponse {
    /// Users, in the upstream's order (most recent follow or like first).
    #[serde(default)]
    pub data: Vec<SocialUser>,
    /// Count and paging.
    #[serde(default)]
    pub meta: SocialMeta,
    /// Partial failures; empty when none.
    #[serde(default)]
    pub errors: Vec<SocialProblem>,
}

/// Post counts per time bucket (`counts`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialCountsResponse {
    /// Buckets, oldest first.
    #[serde(default)]
    pub data: Vec<SocialCountBucket>,
    /// Total over the buckets.
    pub meta: SocialCountsMeta,
}

/// One time bucket of counts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialCountBucket {
    /// Start of the bucket (inclusive).
    pub start: Timestamp,
    /// End of the bucket (exclusive).
    pub end: Timestamp,
    /// Posts matching the query in the bucket.
    pub tweet_count: u64,
}

/// Total of `counts`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialCountsMeta {
    /// Posts matching the query over all returned buckets.
    pub total_tweet_count: u64,
}

/// Trending topics of a place (`trends`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTrendsResponse {
    /// Trends, most active first.
    #[serde(default)]
    pub data: Vec<SocialTrend>,
}

/// One trending topic.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTrend {
    /// Topic, phrase or hashtag, e.g. `#Bitcoin`.
    pub trend_name: String,
    /// Posts about it in the recent window, when the upstream reports it.
    pub tweet_count: Option<u64>,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use schemars::generate::SchemaSettings;
    use serde_json::{Value, json};

    use super::*;
    use crate::{InputError, RawInput, ValidInput};

    const PREFIX: &str = "/api/x402/svc-tools/social/";
    const TWEET: &str = "1495979553889697792";

    fn route(id: &str) -> RouteSpec {
        routes().into_iter().find(|r| r.id == id).unwrap_or_else(|| panic!("no route {id}"))
    }

    fn parse_raw(id: &str, path: &[(&str, &str)], query: &str, body: Option<&Value>) -> Result<ValidInput, InputError> {
        let bytes = body.map(|b| serde_json::to_vec(b).expect("json"));
        route(id).parse_input(&RawInput { path, query: Some(query), body: bytes.as_deref() })
    }

    fn parse<T: 'static>(id: &str, path: &[(&str, &str)], query: &str, body: Option<&Value>) -> T {
        parse_raw(id, path, query, body)
            .unwrap_or_else(|e| panic!("{id} refused {path:?} ?{query} {body:?}: {e:?}"))
            .downcast::<T>()
            .unwrap_or_else(|_| panic!("{id}: wrong input type"))
    }

    /// Asserts the input is refused with an error at `loc`; returns that error's message.
    fn refused_at(id: &str, path: &[(&str, &str)], query: &str, body: Option<&Value>, loc: Value) -> String {
        let err = parse_raw(id, path, query, body).expect_err(&format!("{id} accepted {path:?} ?{query} {body:?}"));
        let found = err.errors.iter().find(|e| serde_json::to_value(&e.loc).expect("loc") == loc);
        found.unwrap_or_else(|| panic!("{id}: {path:?} ?{query} gave {err:?}, want {loc}")).msg.clone()
    }

    /// Path parameters that are valid for a route.
    fn valid_path(id: &str) -> Vec<(&'static str, &'static str)> {
        let spec = route(id);
        spec.path_params()
            .map(|name| match name {
                "tweet_id" => (name, TWEET),
                "username" => (name, "XDevelopers"),
                "user_id" => (name, "2244994945"),
                other => panic!("unexpected path parameter {other}"),
            })
            .collect()
    }

    /// For every route: a valid query, and (query, loc) pairs each breaking one rule.
    fn cases(id: &str) -> (&'static str, Vec<(&'static str, Value)>) {
        let max = json!(["query", "max_results"]);
        match id {
            ids::social::SEARCH => (
                "query=%24SOL%20-is%3Aretweet&max_results=50",
                vec![
                    ("max_results=10", json!(["query", "query"])),
                    ("query=", json!(["query", "query"])),
                    ("query=sol&max_results=9", max.clone()),
                    ("query=sol&max_results=101", max.clone()),
                    ("query=sol&max_results=many", max),
                    ("query=sol&next_token=", json!(["query", "next_token"])),
                ],
            ),
            ids::social::TWEET | ids::social::USER | ids::social::USER_BY_ID => ("", vec![]),
            ids::social::TWEETS => (
                "ids=1495979553889697792,20",
                vec![
                    ("", json!(["query", "ids"])),
                    ("ids=12,abc", json!(["query", "ids"])),
                    ("ids=1,,2", json!(["query", "ids"])),
                ],
            ),
            ids::social::USER_TIMELINE | ids::social::USER_MENTIONS => (
                "max_results=5&since_id=100&until_id=200",
                vec![
                    ("max_results=4", max.clone()),
                    ("max_results=101", max),
                    ("since_id=abc", json!(["query", "since_id"])),
                    ("until_id=12a", json!(["query", "until_id"])),
                    ("since_id=300&until_id=200", json!(["query", "until_id"])),
                    ("pagination_token=", json!(["query", "pagination_token"])),
                ],
            ),
            ids::social::USER_FOLLOWERS | ids::social::USER_FOLLOWING => (
                "max_results=1000&pagination_token=7140dibdnow9c7btw3w29grvxfcgvpb9n9coehpk7xz5i",
                vec![("max_results=0", max.clone()), ("max_results=1001", max)],
            ),
            ids::social::USERS_SEARCH => (
                "query=solana%20dev&max_results=1",
                vec![
                    ("", json!(["query", "query"])),
                    ("query=sol&max_results=0", max.clone()),
                    ("query=sol&max_results=101", max),
                ],
            ),
            ids::social::TWEET_LIKING_USERS | ids::social::TWEET_RETWEETED_BY => {
                ("max_results=1", vec![("max_results=0", max.clone()), ("max_results=101", max)])
            }
            ids::social::TWEET_QUOTE_TWEETS | ids::social::TWEET_RETWEETS => {
                ("max_results=100", vec![("max_results=9", max.clone()), ("max_results=101", max)])
            }
            ids::social::COUNTS => (
                "query=bitcoin&granularity=day&max_results=10",
                vec![
                    ("granularity=day", json!(["query", "query"])),
                    ("query=btc&max_results=9", max.clone()),
                    ("query=btc&max_results=101", max),
                    ("query=btc&granularity=week", json!(["query", "granularity"])),
                ],
            ),
            ids::social::TRENDS => (
                "woeid=23424977&max_trends=50",
                vec![
                    ("woeid=0", json!(["query", "woeid"])),
                    ("woeid=worldwide", json!(["query", "woeid"])),
                    ("max_trends=0", json!(["query", "max_trends"])),
                    ("max_trends=51", json!(["query", "max_trends"])),
                ],
            ),
            other => panic!("no cases for {other}"),
        }
    }

    #[test]
    fn the_family_has_the_sixteen_contract_routes_as_tagged_data_gets_with_query_or_body() {
        let expected = [
            (ids::social::SEARCH, "search"),
            (ids::social::TWEET, "tweet/{tweet_id}"),
            (ids::social::TWEETS, "tweets"),
            (ids::social::USER, "user/{username}"),
            (ids::social::USER_BY_ID, "user/id/{user_id}"),
            (ids::social::USER_TIMELINE, "user/{user_id}/timeline"),
            (ids::social::USER_MENTIONS, "user/{user_id}/mentions"),
            (ids::social::USER_FOLLOWERS, "user/{user_id}/followers"),
            (ids::social::USER_FOLLOWING, "user/{user_id}/following"),
            (ids::social::USERS_SEARCH, "users/search"),
            (ids::social::TWEET_LIKING_USERS, "tweet/{tweet_id}/liking-users"),
            (ids::social::TWEET_QUOTE_TWEETS, "tweet/{tweet_id}/quote-tweets"),
            (ids::social::TWEET_RETWEETS, "tweet/{tweet_id}/retweets"),
            (ids::social::TWEET_RETWEETED_BY, "tweet/{tweet_id}/retweeted-by"),
            (ids::social::COUNTS, "counts"),
            (ids::social::TRENDS, "trends"),
        ];
        let got: Vec<(&str, &str)> =
            routes().iter().map(|r| (r.id, r.path.strip_prefix(PREFIX).expect("prefix"))).collect();
        assert_eq!(got, expected);
        for r in routes() {
            assert_eq!(r.method, crate::HttpMethod::Get, "{}", r.id);
            assert_eq!(r.source, InputSource::QueryOrBody, "{}", r.id);
            assert_eq!(r.group, Group::Data, "{}", r.id);
            assert_eq!(r.tag, "social", "{}", r.id);
            assert!(r.is_paid(), "{}", r.id);
            assert_eq!(r.preview, crate::PreviewPolicy::Truncate { max_items: 3, omit: &[] }, "{}", r.id);
            assert!(!r.description.is_empty() && !r.description.contains('\n'), "{}", r.id);
        }
    }

    #[test]
    fn every_path_parameter_is_a_field_of_its_input() {
        let mut generator = SchemaSettings::draft2020_12().with(|s| s.inline_subschemas = true).into_generator();
        for r in routes() {
            let schema = serde_json::to_value((r.input.schema)(&mut generator)).expect("schema");
            for name in r.path_params() {
                assert!(schema["properties"].get(name).is_some(), "{}: {name} not in input", r.id);
                let required = schema["required"].as_array().expect("required");
                assert!(required.contains(&json!(name)), "{}: {name} not required", r.id);
            }
        }
    }

    #[test]
    fn every_route_accepts_a_valid_input_and_refuses_each_broken_rule_at_its_field() {
        for r in routes() {
            let path = valid_path(r.id);
            let (valid, broken) = cases(r.id);
            parse_raw(r.id, &path, valid, None).unwrap_or_else(|e| panic!("{} refused ?{valid}: {e:?}", r.id));
            for (query, loc) in broken {
                refused_at(r.id, &path, query, None, loc);
            }
        }
    }

    #[test]
    fn a_non_numeric_tweet_id_is_refused_at_the_path_on_every_post_route() {
        for r in routes().into_iter().filter(|r| r.path_params().any(|p| p == "tweet_id")) {
            let (valid, _) = cases(r.id);
            for bad in ["abc", "12345678901234567890", "-1", "1.5"] {
                refused_at(r.id, &[("tweet_id", bad)], valid, None, json!(["path", "tweet_id"]));
            }
        }
        refused_at(ids::social::USER_BY_ID, &[("user_id", "elonmusk")], "", None, json!(["path", "user_id"]));
    }

    #[test]
    fn tweets_takes_one_to_fifty_numeric_ids() {
        let fifty = vec![TWEET; 50].join(",");
        let input: SocialTweetsQuery = parse(ids::social::TWEETS, &[], &format!("ids={fifty}"), None);
        assert_eq!(input.id_list().len(), 50);
        let msg = refused_at(ids::social::TWEETS, &[], &format!("ids={fifty},1"), None, json!(["query", "ids"]));
        assert!(msg.contains("at most 50") && msg.contains("51"), "{msg}");
        let msg = refused_at(ids::social::TWEETS, &[], "ids=1,x2", None, json!(["query", "ids"]));
        assert!(msg.contains("`x2`"), "{msg}");
        refused_at(ids::social::TWEETS, &[], "ids=1%2C%202", None, json!(["query", "ids"]));
        refused_at(ids::social::TWEETS, &[], "ids=12345678901234567890", None, json!(["query", "ids"]));
        let err = parse_raw(ids::social::TWEETS, &[], "", None).expect_err("no ids");
        assert_eq!(err.errors[0].kind, "missing");
    }

    #[test]
    fn a_username_with_an_at_sign_is_refused_with_a_hint_to_drop_it() {
        let msg = refused_at(ids::social::USER, &[("username", "@XDevelopers")], "", None, json!(["path", "username"]));
        assert!(msg.contains("drop the leading @") && msg.contains("`XDevelopers`"), "{msg}");
        for bad in ["a-b", "sixteen_chars_xx", "", "naïve"] {
            refused_at(ids::social::USER, &[("username", bad)], "", None, json!(["path", "username"]));
        }
        let input: SocialUsernamePath = parse(ids::social::USER, &[("username", "a_1")], "", None);
        assert_eq!(input.username, "a_1");
    }

    #[test]
    fn timelines_and_the_follow_graph_take_a_user_id_or_a_username() {
        for id in [ids::social::USER_TIMELINE, ids::social::USER_MENTIONS] {
            let input: SocialTimelineQuery = parse(id, &[("user_id", "2244994945")], "", None);
            assert_eq!(input.user(), SocialUserRef::Id("2244994945"));
            assert_eq!(input.max_results, 10);
            let input: SocialTimelineQuery = parse(id, &[("user_id", "XDevelopers")], "", None);
            assert_eq!(input.user(), SocialUserRef::Username("XDevelopers"));
        }
        for id in [ids::social::USER_FOLLOWERS, ids::social::USER_FOLLOWING] {
            let input: SocialFollowsQuery = parse(id, &[("user_id", "x_dev")], "", None);
            assert_eq!((input.user(), input.max_results), (SocialUserRef::Username("x_dev"), 20));
        }
        for id in [
            ids::social::USER_TIMELINE,
            ids::social::USER_MENTIONS,
            ids::social::USER_FOLLOWERS,
            ids::social::USER_FOLLOWING,
        ] {
            let msg = refused_at(id, &[("user_id", "@x_dev")], "", None, json!(["path", "user_id"]));
            assert!(msg.contains("drop the leading @"), "{msg}");
            for bad in ["12345678901234567890", "has space", "sixteen_chars_xx", ""] {
                refused_at(id, &[("user_id", bad)], "", None, json!(["path", "user_id"]));
            }
        }
    }

    #[test]
    fn defaults_follow_the_contract() {
        let path = [("tweet_id", TWEET)];
        let s: SocialSearchQuery = parse(ids::social::SEARCH, &[], "query=sol", None);
        assert_eq!(s.max_results, 10);
        let u: SocialUsersSearchQuery = parse(ids::social::USERS_SEARCH, &[], "query=sol", None);
        assert_eq!(u.max_results, 10);
        for id in [ids::social::TWEET_LIKING_USERS, ids::social::TWEET_RETWEETED_BY] {
            assert_eq!(parse::<SocialPostUsersQuery>(id, &path, "", None).max_results, 100);
        }
        for id in [ids::social::TWEET_QUOTE_TWEETS, ids::social::TWEET_RETWEETS] {
            assert_eq!(parse::<SocialPostTweetsQuery>(id, &path, "", None).max_results, 10);
        }
        let c: SocialCountsQuery = parse(ids::social::COUNTS, &[], "query=sol", None);
        assert_eq!((c.granularity, c.max_results), (SocialGranularity::Hour, None));
        let t: SocialTrendsQuery = parse(ids::social::TRENDS, &[], "", None);
        assert_eq!((t.woeid, t.max_trends), (1, 20));
    }

    #[test]
    fn a_body_supplies_fields_the_query_lacks_and_the_query_wins_over_the_body() {
        let body = json!({"query": "sol", "max_results": 20});
        let s: SocialSearchQuery = parse(ids::social::SEARCH, &[], "", Some(&body));
        assert_eq!((s.query.as_str(), s.max_results), ("sol", 20));
        let s: SocialSearchQuery = parse(ids::social::SEARCH, &[], "max_results=30", Some(&body));
        assert_eq!((s.query.as_str(), s.max_results), ("sol", 30));
        let s: SocialSearchQuery = parse(ids::social::SEARCH, &[], "query=eth", Some(&body));
        assert_eq!((s.query.as_str(), s.max_results), ("eth", 20));

        let body = json!({"user_id": "999", "until_id": "500", "max_results": 50});
        let t: SocialTimelineQuery = parse(ids::social::USER_TIMELINE, &[("user_id", "x_dev")], "", Some(&body));
        assert_eq!((t.user_id.as_str(), t.until_id.as_deref(), t.max_results), ("x_dev", Some("500"), 50));

        let c: SocialCountsQuery =
            parse(ids::social::COUNTS, &[], "", Some(&json!({"query": "btc", "max_results": 30})));
        assert_eq!(c.max_results, Some(30));
        let ids: SocialTweetsQuery = parse(ids::social::TWEETS, &[], "", Some(&json!({"ids": "1,2"})));
        assert_eq!(ids.id_list(), ["1", "2"]);
        let tr: SocialTrendsQuery =
            parse(ids::social::TRENDS, &[], "woeid=23424977", Some(&json!({"woeid": 2, "max_trends": 5})));
        assert_eq!((tr.woeid, tr.max_trends), (23424977, 5));
    }

    #[test]
    fn errors_in_body_fields_are_located_in_the_body() {
        let body = json!({"query": "sol", "max_results": 500});
        refused_at(ids::social::SEARCH, &[], "", Some(&body), json!(["body", "max_results"]));
        refused_at(ids::social::TWEETS, &[], "", Some(&json!({"ids": "1,b"})), json!(["body", "ids"]));
        refused_at(ids::social::TWEETS, &[], "", Some(&json!({"ids": ["1", "2"]})), json!(["body", "ids"]));
        let err = parse_raw(ids::social::SEARCH, &[], "query=sol", Some(&json!(["sol"]))).expect_err("array body");
        assert_eq!(serde_json::to_value(&err.errors[0].loc).expect("loc"), json!(["body"]));
    }

    #[test]
    fn every_route_is_priced_as_the_contract_says() {
        let catalogue = crate::Catalogue::load().expect("catalogue");
        for r in routes() {
            let price = catalogue.get(r.id).expect("loaded").price;
            assert_eq!(price.min(), price.max(), "{} has a fixed price", r.id);
            let want = match r.id {
                ids::social::SEARCH
                | ids::social::TWEETS
                | ids::social::USER_TIMELINE
                | ids::social::USER_MENTIONS
                | ids::social::USERS_SEARCH
                | ids::social::TRENDS => "0.012",
                _ => "0.005",
            };
            assert_eq!(price.min().to_string(), want, "{}", r.id);
        }
    }

    #[test]
    fn input_schemas_show_the_limits_and_defaults() {
        let schema = |s: schemars::Schema| serde_json::to_value(s).expect("schema");
        let fresh = || SchemaSettings::draft2020_12().into_generator();
        let search = schema(fresh().into_root_schema_for::<SocialSearchQuery>());
        assert_eq!(search["properties"]["max_results"]["minimum"], 10);
        assert_eq!(search["properties"]["max_results"]["maximum"], 100);
        assert_eq!(search["properties"]["max_results"]["default"], 10);
        assert_eq!(search["properties"]["query"]["maxLength"], 512);
        assert_eq!(search["required"], json!(["query"]));
        let tweets = schema(fresh().into_root_schema_for::<SocialTweetsQuery>());
        assert_eq!(tweets["properties"]["ids"]["pattern"], "^[0-9]{1,19}(,[0-9]{1,19}){0,49}$");
        let timeline = schema(fresh().into_root_schema_for::<SocialTimelineQuery>());
        assert_eq!(timeline["properties"]["max_results"]["minimum"], 5);
        assert_eq!(timeline["properties"]["since_id"]["pattern"], "^[0-9]{1,19}$");
        assert_eq!(timeline["properties"]["pagination_token"]["maxLength"], 256);
        assert!(timeline["properties"]["user_id"]["pattern"].as_str().expect("pattern").contains("[A-Za-z0-9_]"));
        let follows = schema(fresh().into_root_schema_for::<SocialFollowsQuery>());
        assert_eq!(follows["properties"]["max_results"]["maximum"], 1000);
        assert_eq!(follows["properties"]["max_results"]["default"], 20);
        let counts = schema(fresh().into_root_schema_for::<SocialCountsQuery>());
        assert_eq!(counts["properties"]["granularity"]["default"], "hour");
        let trends = schema(fresh().into_root_schema_for::<SocialTrendsQuery>());
        assert_eq!(trends["properties"]["woeid"]["default"], 1);
        assert_eq!(trends["properties"]["max_trends"]["maximum"], 50);
    }

    #[test]
    fn every_output_is_an_object_schema_with_documented_properties() {
        fn check<T: JsonSchema>() {
            let schema = SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<T>();
            let schema = serde_json::to_value(schema).expect("schema");
            let name = T::schema_name();
            assert_eq!(schema["type"], "object", "{name}");
            let props = schema["properties"].as_object().expect("properties");
            assert!(!props.is_empty(), "{name}");
            for (field, prop) in props {
                assert!(prop.get("description").is_some(), "{name}.{field} undocumented");
            }
            for (def, sub) in schema["$defs"].as_object().into_iter().flatten() {
                for (field, prop) in sub["properties"].as_object().into_iter().flatten() {
                    assert!(prop.get("description").is_some(), "{def}.{field} undocumented");
                }
            }
        }
        check::<SocialTweetsResponse>();
        check::<SocialTweetResponse>();
        check::<SocialUserResponse>();
        check::<SocialUsersResponse>();
        check::<SocialCountsResponse>();
        check::<SocialTrendsResponse>();
        let outputs: BTreeSet<String> = routes().iter().map(|r| (r.output.name)().into_owned()).collect();
        let checked = [
            "SocialTweetsResponse",
            "SocialTweetResponse",
            "SocialUserResponse",
            "SocialUsersResponse",
            "SocialCountsResponse",
            "SocialTrendsResponse",
        ];
        assert_eq!(outputs, checked.iter().map(|s| (*s).to_owned()).collect());
    }

    #[test]
    fn schema_names_are_family_prefixed() {
        let mut generator = SchemaSettings::draft2020_12().into_generator();
        for r in routes() {
            (r.input.schema)(&mut generator);
            (r.output.schema)(&mut generator);
        }
        for name in generator.definitions().keys() {
            assert!(name.starts_with("Social") || name == "Timestamp", "{name}");
            assert!(!name.ends_with(|c: char| c.is_ascii_digit()), "{name} was renamed to avoid a clash");
        }
    }

    #[test]
    fn upstream_envelopes_deserialise_including_empty_and_partial_answers() {
        let search: SocialTweetsResponse = serde_json::from_value(json!({
            "data": [{"id": TWEET, "text": "$SOL to the moon", "edit_history_tweet_ids": [TWEET],
                "author_id": "29757971", "created_at": "2022-02-22T04:31:34.000Z",
                "referenced_tweets": [{"type": "quoted", "id": "1"}],
                "public_metrics": {"retweet_count": 5, "reply_count": 2, "like_count": 42, "quote_count": 1,
                    "bookmark_count": 0, "impression_count": 900}}],
            "includes": {"users": [{"id": "29757971", "name": "Dev", "username": "developer"}]},
            "meta": {"newest_id": TWEET, "oldest_id": TWEET, "result_count": 1, "next_token": "b26v89c19zqg8o3f"}
        }))
        .expect("search fixture");
        assert_eq!(search.data[0].public_metrics.as_ref().expect("metrics").like_count, 42);
        assert_eq!(search.data[0].referenced_tweets[0].kind, SocialReferenceKind::Quoted);
        assert_eq!(search.includes.users[0].username, "developer");
        assert!(search.errors.is_empty());
        let out = serde_json::to_value(&search).expect("serialise");
        assert_eq!(out["errors"], json!([]));
        assert_eq!(out["includes"]["tweets"], json!([]));

        let empty: SocialTweetsResponse =
            serde_json::from_value(json!({"meta": {"result_count": 0}})).expect("empty search");
        assert!(empty.data.is_empty() && empty.meta.next_token.is_none());

        let partial: SocialTweetsResponse = serde_json::from_value(json!({
            "data": [{"id": "20", "text": "just setting up my twttr"}],
            "errors": [{"value": "1", "detail": "Could not find tweet with ids: [1].", "title": "Not Found Error",
                "resource_type": "tweet", "parameter": "ids", "resource_id": "1",
                "type": "https://api.twitter.com/2/problems/resource-not-found"}]
        }))
        .expect("partial lookup");
        assert_eq!(partial.errors[0].resource_id.as_deref(), Some("1"));

        let user: SocialUserResponse =
            serde_json::from_value(json!({"data": {"id": "2244994945", "name": "Developers",
            "username": "XDevelopers", "verified": true, "public_metrics": {"followers_count": 1, "following_count": 2,
            "tweet_count": 3, "listed_count": 4, "like_count": 5}}}))
            .expect("user");
        assert_eq!(user.data.public_metrics.expect("metrics").followers_count, 1);

        let counts: SocialCountsResponse = serde_json::from_value(json!({
            "data": [{"start": "2026-01-01T00:00:00.000Z", "end": "2026-01-01T01:00:00.000Z", "tweet_count": 7}],
            "meta": {"total_tweet_count": 7}
        }))
        .expect("counts");
        assert_eq!(counts.meta.total_tweet_count, 7);

        let trends: SocialTrendsResponse = serde_json::from_value(
            json!({"data": [{"trend_name": "Europe", "tweet_count": 232408}, {"trend_name": "#sol"}]}),
        )
        .expect("trends");
        assert_eq!(trends.data[1].tweet_count, None);
    }
}
