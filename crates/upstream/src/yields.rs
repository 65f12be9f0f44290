//! The yields index (`GET /pools`): one large snapshot of every pool on every chain, fetched
//! at most every few minutes and filtered here, as the index intends.

use std::sync::Arc;
use std::time::Duration;

use http::header::{ACCEPT, HeaderMap, HeaderValue};
use serde::Deserialize;
use svc_catalogue::routes::infra::{DefiDiscoverResponse, DefiPool};
use svc_domain::{Chain, Clock};

use crate::client::VendorClient;
use crate::{TtlCache, UpstreamError, Vendor, VendorConfig};

/// The index recomputes yields hourly; a five-minute snapshot costs one large call per
/// five minutes however many agents ask.
const SNAPSHOT_TTL: Duration = Duration::from_secs(300);

/// The index's answer.
#[derive(Debug, Deserialize)]
pub struct WirePools {
    /// `success` when the data is good.
    pub status: String,
    /// Every pool.
    pub data: Vec<WirePool>,
}

/// One pool; fields the service does not use are ignored.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WirePool {
    /// Chain, capitalised (`Solana`).
    pub chain: String,
    /// Project slug.
    pub project: String,
    /// Pool symbol.
    pub symbol: String,
    /// Pool id (a UUID).
    pub pool: String,
    /// TVL, USD.
    #[serde(default)]
    pub tvl_usd: Option<f64>,
    /// Total APY, percent.
    #[serde(default)]
    pub apy: Option<f64>,
    /// Base APY, percent.
    #[serde(default)]
    pub apy_base: Option<f64>,
    /// Reward APY, percent.
    #[serde(default)]
    pub apy_reward: Option<f64>,
    /// Underlying tokens.
    #[serde(default)]
    pub underlying_tokens: Option<Vec<String>>,
}

impl WirePool {
    fn into_pool(self, chain: Chain) -> DefiPool {
        let apy = self.apy.or_else(|| match (self.apy_base, self.apy_reward) {
            (None, None) => None,
            (base, reward) => Some(base.unwrap_or(0.0) + reward.unwrap_or(0.0)),
        });
        DefiPool {
            chain: chain.as_str().to_owned(),
            protocol: self.project,
            symbol: self.symbol,
            pool: self.pool,
            apy,
            apy_base: self.apy_base,
            apy_reward: self.apy_reward,
            tvl_usd: self.tvl_usd.unwrap_or(0.0),
            underlying_tokens: self.underlying_tokens.unwrap_or_default(),
        }
    }
}

/// The yields adapter.
#[derive(Debug)]
pub struct Yields {
    client: VendorClient,
    snapshot: TtlCache<Arc<Vec<WirePool>>>,
}

impl Yields {
    pub(crate) fn new(config: &VendorConfig, clock: Arc<dyn Clock>) -> Result<Self, UpstreamError> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        Ok(Yields {
            client: VendorClient::new(Vendor::Defillama, config, headers)?,
            snapshot: TtlCache::new(Vendor::Defillama.family(), clock, 1),
        })
    }

    /// Every pool, from the snapshot.
    async fn pools(&self) -> Result<Arc<Vec<WirePool>>, UpstreamError> {
        self.snapshot
            .get_or_fetch("pools".to_owned(), SNAPSHOT_TTL, || async {
                let wire: WirePools = self.client.get_json("/pools", &[]).await?;
                if wire.status != "success" {
                    return Err(UpstreamError::Decode {
                        vendor: Vendor::Defillama,
                        cause: "status is not success".into(),
                    });
                }
                Ok(Arc::new(wire.data))
            })
            .await
    }

    /// Pools on `chain` of the given projects (all when `None`), highest APY first, up to
    /// `page_size`, with the count of all that match.
    pub async fn discover(
        &self,
        chain: Chain,
        protocols: Option<&[String]>,
        page_size: u32,
    ) -> Result<DefiDiscoverResponse, UpstreamError> {
        let pools = self.pools().await?;
        Ok(filter(&pools, chain, protocols, page_size))
    }
}

/// The filter over a snapshot: chain (any case), project, APY order, page.
pub fn filter(pools: &[WirePool], chain: Chain, protocols: Option<&[String]>, page_size: u32) -> DefiDiscoverResponse {
    let mut matching: Vec<&WirePool> = pools
        .iter()
        .filter(|p| p.chain.eq_ignore_ascii_case(chain.as_str()))
        .filter(|p| protocols.is_none_or(|wanted| wanted.iter().any(|w| w.eq_ignore_ascii_case(&p.project))))
        .collect();
    let apy = |p: &WirePool| p.apy.unwrap_or(f64::NEG_INFINITY);
    matching.sort_by(|a, b| apy(b).total_cmp(&apy(a)).then_with(|| a.pool.cmp(&b.pool)));
    let total = matching.len() as u64;
    let pools = matching.into_iter().take(page_size as usize).map(|p| p.clone().into_pool(chain)).collect();
    DefiDiscoverResponse { pools, page_size, total }
}
