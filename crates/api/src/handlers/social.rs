//! Social-network routes: posts, users, timelines, the follow graph, counts and trends.

use svc_catalogue::ids;
use svc_catalogue::routes::social::{
    SocialCountsQuery, SocialCountsResponse, SocialFollowsQuery, SocialPostTweetsQuery, SocialPostUsersQuery,
    SocialSearchQuery, SocialTimelineQuery, SocialTrendsQuery, SocialTrendsResponse, SocialTweetPath,
    SocialTweetResponse, SocialTweetsQuery, SocialTweetsResponse, SocialUserIdPath, SocialUserResponse,
    SocialUsernamePath, SocialUsersResponse, SocialUsersSearchQuery,
};
use svc_upstream::social::{PostPosts, PostUsers};

use super::Handlers;
use crate::error::ApiError;
use crate::state::AppState;

pub(super) fn register(handlers: &mut Handlers) {
    handlers.add(ids::social::SEARCH, search);
    handlers.add(ids::social::TWEET, tweet);
    handlers.add(ids::social::TWEETS, tweets);
    handlers.add(ids::social::USER, user);
    handlers.add(ids::social::USER_BY_ID, user_by_id);
    handlers.add(ids::social::USER_TIMELINE, timeline);
    handlers.add(ids::social::USER_MENTIONS, mentions);
    handlers.add(ids::social::USER_FOLLOWERS, followers);
    handlers.add(ids::social::USER_FOLLOWING, following);
    handlers.add(ids::social::USERS_SEARCH, users_search);
    handlers.add(ids::social::TWEET_LIKING_USERS, liking_users);
    handlers.add(ids::social::TWEET_RETWEETED_BY, retweeted_by);
    handlers.add(ids::social::TWEET_QUOTE_TWEETS, quote_tweets);
    handlers.add(ids::social::TWEET_RETWEETS, retweets);
    handlers.add(ids::social::COUNTS, counts);
    handlers.add(ids::social::TRENDS, trends);
}

/// `GET {tools}/social/search`.
async fn search(state: AppState, input: SocialSearchQuery) -> Result<SocialTweetsResponse, ApiError> {
    Ok(state.upstreams.social.search(&input).await?)
}

/// `GET {tools}/social/tweet/{tweet_id}`.
async fn tweet(state: AppState, input: SocialTweetPath) -> Result<SocialTweetResponse, ApiError> {
    Ok(state.upstreams.social.tweet(&input.tweet_id).await?)
}

/// `GET {tools}/social/tweets`.
async fn tweets(state: AppState, input: SocialTweetsQuery) -> Result<SocialTweetsResponse, ApiError> {
    Ok(state.upstreams.social.tweets(&input.id_list()).await?)
}

/// `GET {tools}/social/user/{username}`.
async fn user(state: AppState, input: SocialUsernamePath) -> Result<SocialUserResponse, ApiError> {
    Ok(state.upstreams.social.user(&input.username).await?)
}

/// `GET {tools}/social/user/id/{user_id}`.
async fn user_by_id(state: AppState, input: SocialUserIdPath) -> Result<SocialUserResponse, ApiError> {
    Ok(state.upstreams.social.user_by_id(&input.user_id).await?)
}

/// `GET {tools}/social/user/{user_id}/timeline`.
async fn timeline(state: AppState, input: SocialTimelineQuery) -> Result<SocialTweetsResponse, ApiError> {
    Ok(state.upstreams.social.user_posts(&input, false).await?)
}

/// `GET {tools}/social/user/{user_id}/mentions`.
async fn mentions(state: AppState, input: SocialTimelineQuery) -> Result<SocialTweetsResponse, ApiError> {
    Ok(state.upstreams.social.user_posts(&input, true).await?)
}

/// `GET {tools}/social/user/{user_id}/followers`.
async fn followers(state: AppState, input: SocialFollowsQuery) -> Result<SocialUsersResponse, ApiError> {
    Ok(state.upstreams.social.follows(&input, true).await?)
}

/// `GET {tools}/social/user/{user_id}/following`.
async fn following(state: AppState, input: SocialFollowsQuery) -> Result<SocialUsersResponse, ApiError> {
    Ok(state.upstreams.social.follows(&input, false).await?)
}

/// `GET {tools}/social/users/search`.
async fn users_search(state: AppState, input: SocialUsersSearchQuery) -> Result<SocialUsersResponse, ApiError> {
    Ok(state.upstreams.social.users_search(&input).await?)
}

/// `GET {tools}/social/tweet/{tweet_id}/liking-users`.
async fn liking_users(state: AppState, input: SocialPostUsersQuery) -> Result<SocialUsersResponse, ApiError> {
    Ok(state.upstreams.social.post_users(&input, PostUsers::Liking).await?)
}

/// `GET {tools}/social/tweet/{tweet_id}/retweeted-by`.
async fn retweeted_by(state: AppState, input: SocialPostUsersQuery) -> Result<SocialUsersResponse, ApiError> {
    Ok(state.upstreams.social.post_users(&input, PostUsers::RetweetedBy).await?)
}

/// `GET {tools}/social/tweet/{tweet_id}/quote-tweets`.
async fn quote_tweets(state: AppState, input: SocialPostTweetsQuery) -> Result<SocialTweetsResponse, ApiError> {
    Ok(state.upstreams.social.post_posts(&input, PostPosts::Quotes).await?)
}

/// `GET {tools}/social/tweet/{tweet_id}/retweets`.
async fn retweets(state: AppState, input: SocialPostTweetsQuery) -> Result<SocialTweetsResponse, ApiError> {
    Ok(state.upstreams.social.post_posts(&input, PostPosts::Reposts).await?)
}

/// `GET {tools}/social/counts`.
async fn counts(state: AppState, input: SocialCountsQuery) -> Result<SocialCountsResponse, ApiError> {
    Ok(state.upstreams.social.counts(&input).await?)
}

/// `GET {tools}/social/trends`.
async fn trends(state: AppState, input: SocialTrendsQuery) -> Result<SocialTrendsResponse, ApiError> {
    Ok(state.upstreams.social.trends(&input).await?)
}
