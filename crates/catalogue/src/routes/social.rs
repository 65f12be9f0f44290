//! Social-network data (X API v2 behind it): search, tweets, users, timelines, the follow
//! graph, counts and trends. All `GET`; parameters come from the query and may also come in a
//! JSON body with the same names (the query wins).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Timestamp;
use crate::{FieldError, Group, InputSource, Loc, RouteInput, RouteSpec};

/// The social routes.
pub fn routes() -> Vec<RouteSpec> {
    fn get<I: RouteInput, O: crate::route::RouteOutput>(
        id: &'static str,
        path: &'static str,
        d: &'static str,
    ) -> RouteSpec {
        RouteSpec::get::<I, O>(id, path, d).source(InputSource::QueryOrBody).group(Group::Data).tag("social")
    }
    vec![
        get::<SocialSearchQuery, SocialTweetsResponse>(
            "social.search",
            tools!("/social/search"),
            "Search posts of the last 7 days: text, author, time and engagement metrics.",
        ),
        get::<SocialTweetPath, SocialTweetResponse>(
            "social.tweet",
            tools!("/social/tweet/{tweet_id}"),
            "One post by id.",
        ),
        get::<SocialTweetsQuery, SocialTweetsResponse>(
            "social.tweets",
            tools!("/social/tweets"),
            "Up to 50 posts by id in one call.",
        ),
        get::<SocialUsernamePath, SocialUserResponse>(
            "social.user",
            tools!("/social/user/{username}"),
            "A user profile by username: bio, creation date, verification and follower counts.",
        ),
        get::<SocialUserIdPath, SocialUserResponse>(
            "social.user_by_id",
            tools!("/social/user/id/{user_id}"),
            "A user profile by numeric id.",
        ),
        get::<SocialTimelineQuery, SocialTweetsResponse>(
            "social.user_timeline",
            tools!("/social/user/{user_id}/timeline"),
            "A user's recent posts, newest first (user id or username).",
        ),
        get::<SocialTimelineQuery, SocialTweetsResponse>(
            "social.user_mentions",
            tools!("/social/user/{user_id}/mentions"),
            "Recent posts mentioning a user, newest first (user id or username).",
        ),
        get::<SocialFollowsQuery, SocialUsersResponse>(
            "social.user_followers",
            tools!("/social/user/{user_id}/followers"),
            "A user's followers, paged (user id or username).",
        ),
        get::<SocialFollowsQuery, SocialUsersResponse>(
            "social.user_following",
            tools!("/social/user/{user_id}/following"),
            "Accounts a user follows, paged (user id or username).",
        ),
        get::<SocialUsersSearchQuery, SocialUsersResponse>(
            "social.users_search",
            tools!("/social/users/search"),
            "Search user profiles by name, username or bio.",
        ),
        get::<SocialPostUsersQuery, SocialUsersResponse>(
            "social.tweet_liking_users",
            tools!("/social/tweet/{tweet_id}/liking-users"),
            "Users who liked a post.",
        ),
        get::<SocialPostTweetsQuery, SocialTweetsResponse>(
            "social.tweet_quote_tweets",
            tools!("/social/tweet/{tweet_id}/quote-tweets"),
            "Posts quoting a post.",
        ),
        get::<SocialPostTweetsQuery, SocialTweetsResponse>(
            "social.tweet_retweets",
            tools!("/social/tweet/{tweet_id}/retweets"),
            "Reposts of a post, with their authors.",
        ),
        get::<SocialPostUsersQuery, SocialUsersResponse>(
            "social.tweet_retweeted_by",
            tools!("/social/tweet/{tweet_id}/retweeted-by"),
            "Users who reposted a post.",
        ),
        get::<SocialCountsQuery, SocialCountsResponse>(
            "social.counts",
            tools!("/social/counts"),
            "How many posts matched a query per minute, hour or day over the last 7 days.",
        ),
        get::<SocialTrendsQuery, SocialTrendsResponse>(
            "social.trends",
            tools!("/social/trends"),
            "Trending topics for a place (WOEID; 1 = worldwide) with post counts.",
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

/// `search`: a query and a result count.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialSearchQuery {
    /// Search query in the network's query language (e.g. `$SOL -is:retweet`).
    #[garde(length(chars, min = 1, max = 512))]
    pub query: String,
    /// Results to return (10–100, default 10).
    #[serde(default = "ten")]
    #[garde(range(min = 10, max = 100))]
    pub max_results: u32,
}

impl RouteInput for SocialSearchQuery {}

/// `tweet/{tweet_id}`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialTweetPath {
    /// Numeric post id.
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub tweet_id: String,
}

impl RouteInput for SocialTweetPath {}

/// `tweets`: ids to look up.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialTweetsQuery {
    /// Comma-separated numeric post ids, at most 50.
    #[garde(pattern("^[0-9]{1,19}(,[0-9]{1,19})*$"))]
    pub ids: String,
}

impl RouteInput for SocialTweetsQuery {
    fn check(&self) -> Vec<FieldError> {
        let count = self.ids.split(',').count();
        if count > 50 {
            return vec![FieldError::new(
                [Loc::from("ids")],
                format!("at most 50 ids per call, got {count}"),
                "value_error",
            )];
        }
        Vec::new()
    }
}

/// `user/{username}`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialUsernamePath {
    /// Username without the leading `@` (1–15 letters, digits or `_`).
    #[garde(skip)]
    #[schemars(pattern("^[A-Za-z0-9_]{1,15}$"))]
    pub username: String,
}

impl RouteInput for SocialUsernamePath {
    fn check(&self) -> Vec<FieldError> {
        username_errors("username", &self.username)
    }
}

fn username_errors(field: &str, name: &str) -> Vec<FieldError> {
    let msg = if name.starts_with('@') {
        "drop the leading @ from the username"
    } else if name.is_empty() || name.len() > 15 || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        "a username is 1-15 letters, digits or underscores"
    } else {
        return Vec::new();
    };
    vec![FieldError::new([Loc::from(field)], msg, "value_error")]
}

/// `user/id/{user_id}`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialUserIdPath {
    /// Numeric user id.
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub user_id: String,
}

impl RouteInput for SocialUserIdPath {}

/// `timeline` and `mentions`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialTimelineQuery {
    /// Numeric user id, or a username (resolved to its id).
    #[garde(pattern("^([0-9]{1,19}|[A-Za-z0-9_]{1,15})$"))]
    pub user_id: String,
    /// Posts to return (5–100, default 10).
    #[serde(default = "ten")]
    #[garde(range(min = 5, max = 100))]
    pub max_results: u32,
    /// Only posts newer than this post id.
    #[garde(inner(pattern("^[0-9]{1,19}$")))]
    pub since_id: Option<String>,
    /// Only posts older than this post id.
    #[garde(inner(pattern("^[0-9]{1,19}$")))]
    pub until_id: Option<String>,
}

impl RouteInput for SocialTimelineQuery {}

/// `followers` and `following`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialFollowsQuery {
    /// Numeric user id, or a username (resolved to its id).
    #[garde(pattern("^([0-9]{1,19}|[A-Za-z0-9_]{1,15})$"))]
    pub user_id: String,
    /// Users to return (1–1000, default 20).
    #[serde(default = "twenty")]
    #[garde(range(min = 1, max = 1000))]
    pub max_results: u32,
    /// Page token from a previous answer's `meta.next_token`.
    #[garde(inner(length(chars, min = 1, max = 256)))]
    pub pagination_token: Option<String>,
}

impl RouteInput for SocialFollowsQuery {}

/// `users/search`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialUsersSearchQuery {
    /// Words to match in names, usernames and bios.
    #[garde(length(chars, min = 1, max = 512))]
    pub query: String,
    /// Users to return (1–100, default 10).
    #[serde(default = "ten")]
    #[garde(range(min = 1, max = 100))]
    pub max_results: u32,
}

impl RouteInput for SocialUsersSearchQuery {}

/// `liking-users` and `retweeted-by`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialPostUsersQuery {
    /// Numeric post id.
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub tweet_id: String,
    /// Users to return (1–100, default 100).
    #[serde(default = "hundred")]
    #[garde(range(min = 1, max = 100))]
    pub max_results: u32,
    /// Page token from a previous answer.
    #[garde(inner(length(chars, min = 1, max = 256)))]
    pub pagination_token: Option<String>,
}

impl RouteInput for SocialPostUsersQuery {}

/// `quote-tweets` and `retweets`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialPostTweetsQuery {
    /// Numeric post id.
    #[garde(pattern("^[0-9]{1,19}$"))]
    pub tweet_id: String,
    /// Posts to return (10–100, default 10).
    #[serde(default = "ten")]
    #[garde(range(min = 10, max = 100))]
    pub max_results: u32,
    /// Page token from a previous answer.
    #[garde(inner(length(chars, min = 1, max = 256)))]
    pub pagination_token: Option<String>,
}

impl RouteInput for SocialPostTweetsQuery {}

/// `counts`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialCountsQuery {
    /// Search query.
    #[garde(length(chars, min = 1, max = 512))]
    pub query: String,
    /// Buckets to return at most (10–100); all buckets of the window when absent.
    #[garde(inner(range(min = 10, max = 100)))]
    pub max_results: Option<u32>,
    /// Bucket size (default `hour`).
    #[serde(default)]
    #[garde(skip)]
    pub granularity: SocialGranularity,
}

impl RouteInput for SocialCountsQuery {}

/// Bucket size of counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SocialGranularity {
    /// Per minute.
    Minute,
    /// Per hour.
    #[default]
    Hour,
    /// Per day.
    Day,
}

/// `trends`.
#[derive(Debug, Clone, Deserialize, JsonSchema, garde::Validate)]
pub struct SocialTrendsQuery {
    /// Yahoo! Where On Earth id of the place (default 1, worldwide; 23424977 = United States).
    #[serde(default = "worldwide")]
    #[garde(range(min = 1))]
    pub woeid: u32,
    /// Trends to return (1–50, default 20).
    #[serde(default = "twenty")]
    #[garde(range(min = 1, max = 50))]
    pub max_trends: u32,
}

impl RouteInput for SocialTrendsQuery {}

/// A post.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTweet {
    /// Post id.
    pub id: String,
    /// Text.
    pub text: String,
    /// Author's user id.
    pub author_id: Option<String>,
    /// When it was posted.
    pub created_at: Option<Timestamp>,
    /// Language code.
    pub lang: Option<String>,
    /// Conversation (thread) id.
    pub conversation_id: Option<String>,
    /// Engagement counts.
    pub public_metrics: Option<SocialTweetMetrics>,
}

/// Engagement of a post.
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
    /// Bookmarks.
    pub bookmark_count: Option<u64>,
    /// Impressions.
    pub impression_count: Option<u64>,
}

/// A user profile.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialUser {
    /// User id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Username, without `@`.
    pub username: String,
    /// Bio.
    pub description: Option<String>,
    /// Account creation.
    pub created_at: Option<Timestamp>,
    /// Verified account.
    pub verified: Option<bool>,
    /// Avatar URL.
    pub profile_image_url: Option<String>,
    /// Audience counts.
    pub public_metrics: Option<SocialUserMetrics>,
}

/// Audience of a user.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialUserMetrics {
    /// Followers.
    pub followers_count: u64,
    /// Accounts followed.
    pub following_count: u64,
    /// Posts.
    pub tweet_count: u64,
    /// Lists the user is on.
    pub listed_count: u64,
    /// Likes given.
    pub like_count: Option<u64>,
}

/// Users referenced by the posts of an answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SocialIncludes {
    /// Authors and mentioned users.
    pub users: Vec<SocialUser>,
}

/// Paging and count facts.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct SocialMeta {
    /// Items in this answer.
    pub result_count: u32,
    /// Newest post id.
    pub newest_id: Option<String>,
    /// Oldest post id.
    pub oldest_id: Option<String>,
    /// Token for the next page.
    pub next_token: Option<String>,
}

/// A partial failure inside a successful answer (e.g. one id not found).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialProblem {
    /// Short title.
    pub title: String,
    /// What happened.
    pub detail: Option<String>,
    /// Problem type URI.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The id concerned.
    pub resource_id: Option<String>,
}

/// A list of posts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTweetsResponse {
    /// Posts.
    pub data: Vec<SocialTweet>,
    /// Referenced users.
    pub includes: SocialIncludes,
    /// Paging.
    pub meta: SocialMeta,
    /// Partial failures.
    #[serde(default)]
    pub errors: Vec<SocialProblem>,
}

/// One post.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTweetResponse {
    /// The post.
    pub data: SocialTweet,
    /// Its author.
    pub includes: SocialIncludes,
}

/// One user.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialUserResponse {
    /// The user.
    pub data: SocialUser,
}

/// A list of users.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialUsersResponse {
    /// Users.
    pub data: Vec<SocialUser>,
    /// Paging.
    pub meta: SocialMeta,
    /// Partial failures.
    #[serde(default)]
    pub errors: Vec<SocialProblem>,
}

/// Post counts per bucket.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialCountsResponse {
    /// Buckets, oldest first.
    pub data: Vec<SocialCountBucket>,
    /// Totals.
    pub meta: SocialCountsMeta,
}

/// One bucket.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialCountBucket {
    /// Bucket start.
    pub start: Timestamp,
    /// Bucket end.
    pub end: Timestamp,
    /// Matching posts.
    pub tweet_count: u64,
}

/// Totals of counts.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialCountsMeta {
    /// Posts over all buckets.
    pub total_tweet_count: u64,
}

/// Trending topics.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTrendsResponse {
    /// Trends, most active first.
    pub data: Vec<SocialTrend>,
}

/// One trend.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SocialTrend {
    /// Topic or hashtag.
    pub trend_name: String,
    /// Posts about it, when known.
    pub tweet_count: Option<u64>,
}
