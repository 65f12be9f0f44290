//! The social network: accounts with a follow graph, and a stream of posts about tokens,
//! one to three a minute, that reply to, quote and repost each other.
//!
//! Posts are not stored: a post id encodes its time and slot the way the network's ids do
//! (milliseconds since its epoch, shifted left 22 bits), and everything about a post follows
//! from the seed and that minute. So any post can be looked up by id, lists can be read
//! newest first from any point, and engagement grows as the clock moves.

use super::{DAY_MS, MINUTE_MS, World, mix3};

/// The network's id epoch (2010-11-04), unix ms.
const ID_EPOCH_MS: i64 = 1_288_834_974_657;
/// How far back search and counts reach.
pub const RECENT_WINDOW_MS: i64 = 7 * DAY_MS;
/// How long after a post the replies, quotes and reposts that refer to it appear.
const ENGAGEMENT_WINDOW_MIN: i64 = 60;

/// Tokens the posts talk about.
pub const SOCIAL_TOKENS: [&str; 10] = ["SOL", "BTC", "ETH", "BONK", "WIF", "JUP", "PEPE", "DOGE", "LINK", "ARB"];

/// A user account.
#[derive(Debug, Clone)]
pub struct SocialAccount {
    /// Numeric id.
    pub id: String,
    /// Username, without `@`.
    pub username: String,
    /// Display name.
    pub name: String,
    /// Bio.
    pub description: String,
    /// Creation time, unix ms.
    pub created_ms: i64,
    /// Has a check mark.
    pub verified: bool,
    /// Kind of check mark: `blue`, `business` or `none`.
    pub verified_type: &'static str,
    /// Posts visible to approved followers only; such accounts post nothing visible.
    pub protected: bool,
    /// Location written in the profile.
    pub location: Option<String>,
    /// Website.
    pub url: Option<String>,
    /// Accounts of the world following this one, most recent follow first.
    pub followers: Vec<usize>,
    /// Accounts of the world this one follows, most recent first.
    pub following: Vec<usize>,
    /// Followers outside the modelled accounts.
    audience: u64,
    /// Posts written before the world's genesis.
    base_posts: u64,
    /// Public lists including the account.
    pub listed: u64,
}

/// What a post is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostKind {
    /// A new post.
    Original,
    /// A reply to the post with this id.
    Reply(u64),
    /// A quote of the post with this id.
    Quote(u64),
    /// A repost of the post with this id.
    Retweet(u64),
}

/// A post.
#[derive(Debug, Clone)]
pub struct SocialPost {
    /// Post id.
    pub id: u64,
    /// Time, unix ms.
    pub ms: i64,
    /// Index of the author in [`World::social_accounts`].
    pub author: usize,
    /// Original, reply, quote or repost.
    pub kind: PostKind,
    /// Text.
    pub text: String,
    /// Language code.
    pub lang: &'static str,
    /// Index of the account it mentions, if any.
    pub mentions: Option<usize>,
    /// Author of the post replied to.
    pub in_reply_to: Option<usize>,
}

impl SocialPost {
    /// The id of the first post of its thread.
    pub fn conversation_id(&self) -> u64 {
        match self.kind {
            PostKind::Reply(to) => to,
            _ => self.id,
        }
    }
}

/// Engagement counts of a post now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PostMetrics {
    /// Reposts.
    pub retweets: u64,
    /// Replies.
    pub replies: u64,
    /// Likes.
    pub likes: u64,
    /// Quotes.
    pub quotes: u64,
    /// Bookmarks.
    pub bookmarks: u64,
    /// Views.
    pub impressions: u64,
}

const PREFIXES: [&str; 12] =
    ["sol", "whale", "degen", "chart", "alpha", "onchain", "meme", "defi", "ape", "moon", "gm", "based"];
const SUFFIXES: [&str; 8] = ["_trader", "_hunter", "_labs", "_daily", "_maxi", "_watch", "_intern", "_capital"];
const CITIES: [&str; 6] = ["Lisbon", "New York", "Singapore", "Dubai", "Berlin", "Buenos Aires"];

/// Accounts of the world and their follow graph.
pub(super) fn grow(rng: &mut fastrand::Rng, genesis_ms: i64) -> Vec<SocialAccount> {
    let mut accounts = vec![SocialAccount {
        id: "2244994945".to_owned(),
        username: "XDevelopers".to_owned(),
        name: "Developers".to_owned(),
        description: "The voice of the developer platform".to_owned(),
        created_ms: 1_386_287_432_000,
        verified: true,
        verified_type: "business",
        protected: false,
        location: Some("127.0.0.1".to_owned()),
        url: Some("https://developer.example".to_owned()),
        followers: Vec::new(),
        following: Vec::new(),
        audience: 580_000,
        base_posts: 3_900,
        listed: 2_100,
    }];
    let mut taken = vec!["xdevelopers".to_owned()];
    while accounts.len() < 60 {
        let prefix = PREFIXES[rng.usize(..PREFIXES.len())];
        let suffix = SUFFIXES[rng.usize(..SUFFIXES.len())];
        let mut username = format!("{prefix}{suffix}");
        if taken.contains(&username.to_lowercase()) {
            username = format!("{prefix}{}", rng.u32(1..9999));
        }
        if taken.contains(&username.to_lowercase()) {
            continue;
        }
        taken.push(username.to_lowercase());
        let name = format!("{}{} {}", prefix[..1].to_uppercase(), &prefix[1..], suffix.trim_start_matches('_'));
        let star = rng.u8(..10) == 0;
        let verified = star || rng.bool();
        let index = accounts.len();
        accounts.push(SocialAccount {
            id: rng.u64(100_000_000..1_900_000_000_000_000_000).to_string(),
            description: format!(
                "{} {} | not financial advice",
                ["Trading", "Researching", "Shitposting about", "Building on"][rng.usize(..4)],
                ["memecoins", "Solana", "DeFi", "on-chain flows", "perps"][rng.usize(..5)]
            ),
            name,
            username,
            created_ms: genesis_ms - rng.i64(30 * DAY_MS..4_000 * DAY_MS),
            verified,
            verified_type: if verified { "blue" } else { "none" },
            // One account in twenty keeps its posts to approved followers.
            protected: index % 20 == 7,
            location: rng.bool().then(|| CITIES[rng.usize(..CITIES.len())].to_owned()),
            url: rng.bool().then(|| format!("https://{}.example", prefix)),
            followers: Vec::new(),
            following: Vec::new(),
            audience: if star { rng.u64(50_000..2_000_000) } else { rng.u64(20..20_000) },
            base_posts: rng.u64(50..80_000),
            listed: rng.u64(0..900),
        });
    }
    // Popular accounts are followed by more of the world.
    let pull: Vec<f64> = accounts.iter().map(|a| ((a.audience as f64).ln() / 16.0).clamp(0.05, 0.9)).collect();
    let n = accounts.len();
    for (follower, puller) in (0..n).flat_map(|a| (0..n).map(move |b| (a, b))) {
        if follower != puller && rng.f64() < pull[puller] {
            accounts[puller].followers.push(follower);
            accounts[follower].following.push(puller);
        }
    }
    for (i, account) in accounts.iter_mut().enumerate() {
        let recent = |other: &usize| mix3(i as u64, *other as u64, 0x666f_6c6c);
        account.followers.sort_by_key(recent);
        account.following.sort_by_key(recent);
    }
    accounts
}

impl World {
    /// Every account.
    pub fn social_accounts(&self) -> &[SocialAccount] {
        &self.social_accounts
    }

    /// The account with this numeric id.
    pub fn social_account_by_id(&self, id: &str) -> Option<usize> {
        self.social_accounts.iter().position(|a| a.id == id)
    }

    /// The account with this username (any case).
    pub fn social_account_by_username(&self, username: &str) -> Option<usize> {
        self.social_accounts.iter().position(|a| a.username.eq_ignore_ascii_case(username))
    }

    /// Posts written so far by the account, as its profile counts them.
    pub fn social_post_count(&self, account: usize) -> u64 {
        let days = (self.now_ms() - self.genesis_ms()).max(0) / DAY_MS;
        let a = &self.social_accounts[account];
        a.base_posts + days as u64 * (a.base_posts % 7 + 1)
    }

    /// Followers of the account, inside and outside the modelled world.
    pub fn social_follower_count(&self, account: usize) -> u64 {
        let a = &self.social_accounts[account];
        a.audience + a.followers.len() as u64
    }

    fn social_hash(&self, minute: i64, slot: u64) -> u64 {
        mix3(self.social_seed, minute as u64, slot)
    }

    /// Posts in `minute` (minutes since the unix epoch): one to three.
    fn slots(&self, minute: i64) -> u64 {
        1 + self.social_hash(minute, 99) % 3
    }

    /// One of the accounts that post publicly, picked by `h`.
    fn poster(&self, h: u64) -> usize {
        self.social_posters[(h % self.social_posters.len() as u64) as usize]
    }

    /// The id, time, author and kind of post `slot` of `minute`, without its text.
    fn shape(&self, minute: i64, slot: u64) -> (u64, i64, usize, PostKind) {
        let h = self.social_hash(minute, slot);
        let ms = minute * MINUTE_MS + slot as i64 * 20_000 + ((h >> 20) % 20_000) as i64;
        let id = (((ms - ID_EPOCH_MS) as u64) << 22) | (slot << 12) | (h & 0xfff);
        let mut author = self.poster(h >> 8);
        // The first post of a minute is always new; later ones may refer to the first post
        // of an earlier minute.
        let kind = if slot == 0 {
            PostKind::Original
        } else {
            let target_minute = minute - 1 - ((h >> 40) % ENGAGEMENT_WINDOW_MIN as u64) as i64;
            let (target, _, target_author, _) = self.shape(target_minute, 0);
            let kind = match h % 100 {
                0..45 => PostKind::Original,
                45..65 => PostKind::Reply(target),
                65..80 => PostKind::Quote(target),
                _ => PostKind::Retweet(target),
            };
            if kind != PostKind::Original && author == target_author {
                author = self.poster((h >> 8) + 1);
            }
            kind
        };
        (id, ms, author, kind)
    }

    /// The ticker a post talks about: mostly the well-known ones, one post in three a token of
    /// the simulated market, the ones smart money is accumulating twice as often, so the
    /// market's stories are talked about too.
    fn talked_about(&self, h: u64) -> &str {
        let known = || SOCIAL_TOKENS[(h % SOCIAL_TOKENS.len() as u64) as usize];
        if !(h >> 40).is_multiple_of(3) {
            return known();
        }
        let traded = || self.tokens().iter().filter(|t| t.kind == super::TokenKind::Traded);
        let weight = |t: &super::Token| if t.scenario == super::Scenario::Accumulated { 2 } else { 1 };
        let total: u64 = traded().map(weight).sum();
        if total == 0 {
            return known();
        }
        let mut pick = (h >> 20) % total;
        for token in traded() {
            if pick < weight(token) {
                return &token.symbol;
            }
            pick -= weight(token);
        }
        known()
    }

    fn post_at(&self, minute: i64, slot: u64) -> SocialPost {
        let (id, ms, author, kind) = self.shape(minute, slot);
        let h = mix3(self.social_hash(minute, slot), 0x7465_7874, 0);
        let token = format!("${}", self.talked_about(h));
        let other = |salt: u64| {
            let pick = self.poster((h >> 16) ^ salt);
            if pick == author { self.poster(((h >> 16) ^ salt) + 1) } else { pick }
        };
        let username = |i: usize| self.social_accounts[i].username.clone();
        let (text, lang, mentions, in_reply_to) = match kind {
            PostKind::Original => match (h >> 8) % 8 {
                0 => (format!("{token} looking strong here, breakout incoming"), "en", None, None),
                1 => (format!("Just added more {token} to the bag"), "en", None, None),
                2 => (format!("{token} chart is ugly, taking some profit"), "en", None, None),
                3 => (format!("Who else is watching {token} today?"), "en", None, None),
                4 => (format!("Smart money rotating into {token} again"), "en", None, None),
                5 => {
                    let who = other(5);
                    (format!("@{} what's your take on {token}?", username(who)), "en", Some(who), None)
                }
                6 => (format!("{token} se ve fuerte hoy"), "es", None, None),
                _ => (format!("{token} volume is up 3x on the day"), "en", None, None),
            },
            PostKind::Reply(to) | PostKind::Quote(to) | PostKind::Retweet(to) => {
                let target = self.post(to).unwrap_or_else(|| self.post_at(minute - 1, 0));
                let target_author = target.author;
                let name = username(target_author);
                match kind {
                    PostKind::Reply(_) => {
                        let text = if h.is_multiple_of(2) {
                            format!("@{name} agreed, {token} has room to run")
                        } else {
                            format!("@{name} not so sure about {token} here")
                        };
                        (text, "en", Some(target_author), Some(target_author))
                    }
                    PostKind::Quote(_) => (format!("This is the {token} thesis in one post"), "en", None, None),
                    _ => (format!("RT @{name}: {}", target.text), target.lang, Some(target_author), None),
                }
            }
        };
        SocialPost { id, ms, author, kind, text, lang, mentions, in_reply_to }
    }

    /// The post with this id, if it exists and has been posted by now.
    pub fn post(&self, id: u64) -> Option<SocialPost> {
        let ms = i64::try_from(id >> 22).ok()? + ID_EPOCH_MS;
        let minute = ms.div_euclid(MINUTE_MS);
        let slot = (id >> 12) & 0x3ff;
        if slot >= self.slots(minute) || ms > self.now_ms() {
            return None;
        }
        let (real, ..) = self.shape(minute, slot);
        (real == id).then(|| self.post_at(minute, slot))
    }

    /// Visits posts newest first, from now back to `since_ms`, until `visit` returns false.
    pub fn posts_newest_first(&self, since_ms: i64, mut visit: impl FnMut(SocialPost) -> bool) {
        let now = self.now_ms();
        let mut minute = now.div_euclid(MINUTE_MS);
        while minute * MINUTE_MS + MINUTE_MS > since_ms {
            for slot in (0..self.slots(minute)).rev() {
                let (_, ms, ..) = self.shape(minute, slot);
                if ms > now || ms < since_ms {
                    continue;
                }
                if !visit(self.post_at(minute, slot)) {
                    return;
                }
            }
            minute -= 1;
        }
    }

    /// Posts posted so far that refer to the post `id` (replies, quotes, reposts), oldest
    /// first.
    pub fn posts_referring_to(&self, id: u64) -> Vec<SocialPost> {
        let Some(post) = self.post(id) else { return Vec::new() };
        let first = post.ms.div_euclid(MINUTE_MS) + 1;
        let now = self.now_ms();
        let mut found = Vec::new();
        for minute in first..=first + ENGAGEMENT_WINDOW_MIN {
            for slot in 1..self.slots(minute) {
                let (_, ms, _, kind) = self.shape(minute, slot);
                let refers = matches!(kind, PostKind::Reply(t) | PostKind::Quote(t) | PostKind::Retweet(t) if t == id);
                if refers && ms <= now {
                    found.push(self.post_at(minute, slot));
                }
            }
        }
        found
    }

    /// Engagement of a post now: replies, quotes and reposts as they exist in the world;
    /// likes and views grow over its first hours.
    pub fn post_metrics(&self, post: &SocialPost) -> PostMetrics {
        let refs = self.posts_referring_to(post.id);
        let count = |f: fn(&PostKind) -> bool| refs.iter().filter(|p| f(&p.kind)).count() as u64;
        let likes = self.likes(post);
        PostMetrics {
            retweets: count(|k| matches!(k, PostKind::Retweet(_))),
            replies: count(|k| matches!(k, PostKind::Reply(_))),
            quotes: count(|k| matches!(k, PostKind::Quote(_))),
            likes,
            bookmarks: likes / 9,
            impressions: likes * 31 + self.social_follower_count(post.author) / 50,
        }
    }

    fn likes(&self, post: &SocialPost) -> u64 {
        if matches!(post.kind, PostKind::Retweet(_)) {
            return 0;
        }
        let hours = (self.now_ms() - post.ms).max(0) as f64 / 3_600_000.0;
        let reach = (self.social_follower_count(post.author) as f64).sqrt();
        let appeal = (mix3(post.id, 0x6c696b65, 0) % 100) as f64 / 100.0;
        (reach * appeal * (1.0 - (-hours / 3.0).exp())).floor() as u64
    }

    /// Accounts of the world that liked the post, most recent first: a share of the
    /// world that grows with the post's likes.
    pub fn post_likers(&self, post: &SocialPost) -> Vec<usize> {
        let likes = self.likes(post);
        let mut likers: Vec<usize> = (0..self.social_accounts.len())
            .filter(|&i| i != post.author && mix3(post.id, i as u64, 0x6c6b) % 100 < likes.min(60))
            .collect();
        likers.sort_by_key(|&i| mix3(post.id, i as u64, 0x7265));
        likers
    }

    /// Trending topics of a place (WOEID) now: the tokens most posted about in the last
    /// hour, scaled to the place. `None` for a place the network has no trends for.
    pub fn social_trends(&self, woeid: u32) -> Option<Vec<(String, u64)>> {
        let scale = match woeid {
            1 => 40.0,
            23424977 => 14.0,
            23424975 => 5.0,
            23424856 | 23424829 | 23424950 => 3.0,
            _ => return None,
        };
        let mut counts = [0u64; SOCIAL_TOKENS.len()];
        self.posts_newest_first(self.now_ms() - 60 * MINUTE_MS, |post| {
            for (i, token) in SOCIAL_TOKENS.iter().enumerate() {
                if post.text.contains(&format!("${token}")) {
                    counts[i] += 1;
                }
            }
            true
        });
        let mut trends: Vec<(String, u64)> = SOCIAL_TOKENS
            .iter()
            .zip(counts)
            .map(|(token, n)| (format!("${token}"), (n as f64 * scale * 97.0) as u64 + mix3(n, woeid.into(), 1) % 50))
            .collect();
        trends.push(("#Crypto".to_owned(), (scale * 5_000.0) as u64));
        trends.push(("#Memecoins".to_owned(), (scale * 2_100.0) as u64));
        trends.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Some(trends)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use svc_domain::FixedClock;

    const NOW: i64 = 1_795_341_600_000;

    #[test]
    fn posts_are_found_again_by_id_and_only_once_posted() {
        let clock = FixedClock::at_ms(NOW);
        let world = World::new(crate::DEFAULT_SEED, Arc::new(clock.clone()));
        let mut seen = Vec::new();
        world.posts_newest_first(NOW - 30 * MINUTE_MS, |p| {
            seen.push(p);
            true
        });
        assert!(seen.len() >= 30, "{}", seen.len());
        assert!(seen.windows(2).all(|w| w[0].id > w[1].id), "newest first, ids follow time");
        for post in &seen {
            let again = world.post(post.id).expect("found by id");
            assert_eq!((again.text.as_str(), again.author), (post.text.as_str(), post.author));
            assert!(!world.social_accounts()[post.author].protected);
        }
        assert!(world.post(seen[0].id + 1).is_none(), "a near id is not a post");
        let future = World::new(crate::DEFAULT_SEED, Arc::new(FixedClock::at_ms(NOW - 40 * MINUTE_MS)));
        assert!(future.post(seen[0].id).is_none(), "not yet posted");
    }

    #[test]
    fn engagement_is_the_posts_that_refer_to_a_post_and_grows_with_time() {
        let clock = FixedClock::at_ms(NOW);
        let world = World::new(crate::DEFAULT_SEED, Arc::new(clock.clone()));
        let mut target = None;
        world.posts_newest_first(NOW - DAY_MS, |p| {
            if p.kind == PostKind::Original && !world.posts_referring_to(p.id).is_empty() && p.ms < NOW - 2 * 3_600_000
            {
                target = Some(p);
                return false;
            }
            true
        });
        let target = target.expect("a post with engagement");
        let metrics = world.post_metrics(&target);
        assert_eq!(
            metrics.replies + metrics.quotes + metrics.retweets,
            world.posts_referring_to(target.id).len() as u64
        );
        clock.advance_ms(DAY_MS);
        assert!(world.post_metrics(&target).likes >= metrics.likes);
    }
}
