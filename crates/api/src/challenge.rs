//! The 402 challenges of the x402 channel, precomputed and cached: most unpaid traffic is
//! agents discovering the same few routes.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::http::HeaderValue;
use bytes::Bytes;
use serde_json::Value;
use svc_catalogue::challenge::Schemas;
use svc_catalogue::{Catalogue, RouteSpec};

/// What the x402 channel keeps per route: each paid route's `bazaar` schema, and the
/// challenges already built.
pub struct Challenges {
    /// Each paid route's `bazaar` schema, by route id: built on the route's first challenge,
    /// then kept, so start-up does not run the schema generator for every route and an idle
    /// process holds no schema nobody asked for.
    bazaar: HashMap<&'static str, OnceLock<Value>>,
    /// The challenges already built.
    pub(crate) cache: ChallengeCache,
}

impl std::fmt::Debug for Challenges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Challenges").field("routes", &self.bazaar.len()).finish_non_exhaustive()
    }
}

impl Challenges {
    /// A place for the schema of each of `catalogue`'s paid routes, and an empty cache.
    pub fn new(catalogue: &Catalogue) -> Self {
        let bazaar = catalogue.routes().iter().filter(|r| r.is_paid()).map(|r| (r.id, OnceLock::new())).collect();
        Challenges { bazaar, cache: ChallengeCache::default() }
    }

    /// `route`'s `bazaar` schema as a challenge shows it (`null` where schemas are omitted,
    /// without building it); none for a route that is not paid.
    pub(crate) fn bazaar(&self, route: &RouteSpec, schemas: Schemas) -> Option<&Value> {
        let schema = self.bazaar.get(route.id)?;
        Some(match schemas {
            Schemas::Included => schema.get_or_init(|| svc_catalogue::discovery::bazaar_schema(route)),
            Schemas::Omitted => &Value::Null,
        })
    }
}

/// Challenges to unpaid requests, by everything they are built from: most unpaid traffic is
/// agents discovering the same few routes, and the answer is a pure function of the route,
/// the price, the minute, the URL and the body (the base URL is configuration, not the
/// request's `Host`, so it is no part of the key). Looked up without allocating.
#[derive(Default)]
pub(crate) struct ChallengeCache {
    entries: std::sync::Mutex<HashMap<u64, Vec<Cached>>>,
    len: std::sync::atomic::AtomicUsize,
}

/// A built challenge: its key, its JSON body and its `PAYMENT-REQUIRED` header.
type Cached = (OwnedKey, (Bytes, HeaderValue));

/// What a cached challenge depends on, borrowed from the request.
#[derive(Hash)]
pub(crate) struct ChallengeKey<'a> {
    pub(crate) route: &'static str,
    pub(crate) price: u64,
    /// The sign-in offer a challenge carries changes with the minute.
    pub(crate) window: i64,
    /// The path and query.
    pub(crate) uri: &'a str,
    pub(crate) body: &'a [u8],
}

/// A [`ChallengeKey`] kept in the cache.
struct OwnedKey {
    route: &'static str,
    price: u64,
    window: i64,
    uri: String,
    body: Vec<u8>,
}

impl OwnedKey {
    fn is(&self, key: &ChallengeKey<'_>) -> bool {
        self.route == key.route
            && self.price == key.price
            && self.window == key.window
            && self.uri == key.uri
            && self.body == key.body
    }
}

impl ChallengeCache {
    /// Entries kept before the cache starts over; bounds memory against clients that vary
    /// their query strings.
    const CAPACITY: usize = 4096;
    /// Bodies larger than this are not cached (the key holds the body).
    pub(crate) const MAX_BODY: usize = 2048;

    fn hash(key: &ChallengeKey<'_>) -> u64 {
        use std::hash::BuildHasher as _;
        // A fast hash with fixed keys: the cache is local and bounded, so flooding it only
        // costs a rebuild.
        foldhash::fast::FixedState::with_seed(0x5eed).hash_one(key)
    }

    pub(crate) fn get(&self, key: &ChallengeKey<'_>) -> Option<(Bytes, HeaderValue)> {
        let entries = self.entries.lock().ok()?;
        entries.get(&Self::hash(key))?.iter().find(|(k, _)| k.is(key)).map(|(_, v)| v.clone())
    }

    pub(crate) fn put(&self, key: &ChallengeKey<'_>, value: (Bytes, HeaderValue)) {
        use std::sync::atomic::Ordering;
        let Ok(mut entries) = self.entries.lock() else { return };
        if self.len.load(Ordering::Relaxed) >= Self::CAPACITY {
            entries.clear();
            self.len.store(0, Ordering::Relaxed);
        }
        let owned = OwnedKey {
            route: key.route,
            price: key.price,
            window: key.window,
            uri: key.uri.to_owned(),
            body: key.body.to_vec(),
        };
        entries.entry(Self::hash(key)).or_default().push((owned, value));
        self.len.fetch_add(1, Ordering::Relaxed);
    }
}
