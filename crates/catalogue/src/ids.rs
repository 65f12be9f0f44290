//! Every route's id, as constants: the route table declares each route with its constant and
//! the handlers register by it, so a misspelt id fails to compile instead of failing at start.

/// `account.*` routes.
pub mod account {
    /// `account.key_create`.
    pub const KEY_CREATE: &str = "account.key_create";
    /// `account.key_revoke`.
    pub const KEY_REVOKE: &str = "account.key_revoke";
    /// `account.keys`.
    pub const KEYS: &str = "account.keys";
    /// `account.llm_token`.
    pub const LLM_TOKEN: &str = "account.llm_token";
    /// `account.llm_token_rotate`.
    pub const LLM_TOKEN_ROTATE: &str = "account.llm_token_rotate";
    /// `account.llm_top_up`.
    pub const LLM_TOP_UP: &str = "account.llm_top_up";
    /// `account.llm_top_up_set`.
    pub const LLM_TOP_UP_SET: &str = "account.llm_top_up_set";
    /// `account.show`.
    pub const SHOW: &str = "account.show";
    /// `account.usage`.
    pub const USAGE: &str = "account.usage";
}
/// `agentbox.*` routes.
pub mod agentbox {
    /// `agentbox.gateway`.
    pub const GATEWAY: &str = "agentbox.gateway";
    /// `agentbox.start`.
    pub const START: &str = "agentbox.start";
    /// `agentbox.stop`.
    pub const STOP: &str = "agentbox.stop";
    /// `agentbox.telegram_config`.
    pub const TELEGRAM_CONFIG: &str = "agentbox.telegram_config";
    /// `agentbox.telegram_config_set`.
    pub const TELEGRAM_CONFIG_SET: &str = "agentbox.telegram_config_set";
    /// `agentbox.templates`.
    pub const TEMPLATES: &str = "agentbox.templates";
}
/// `alpha.*` routes.
pub mod alpha {
    /// `alpha.exodus`.
    pub const EXODUS: &str = "alpha.exodus";
    /// `alpha.top_picks`.
    pub const TOP_PICKS: &str = "alpha.top_picks";
    /// `alpha.top_picks_lite`.
    pub const TOP_PICKS_LITE: &str = "alpha.top_picks_lite";
    /// `alpha.whale_alerts`.
    pub const WHALE_ALERTS: &str = "alpha.whale_alerts";
}
/// `auth.*` routes.
pub mod auth {
    /// `auth.nonce`.
    pub const NONCE: &str = "auth.nonce";
    /// `auth.verify`.
    pub const VERIFY: &str = "auth.verify";
}
/// `chaindata.*` routes.
pub mod chaindata {
    /// `chaindata.perp_leaderboard`.
    pub const PERP_LEADERBOARD: &str = "chaindata.perp_leaderboard";
    /// `chaindata.profiler.*` routes.
    pub mod profiler {
        /// `chaindata.profiler.address_balances`.
        pub const ADDRESS_BALANCES: &str = "chaindata.profiler.address_balances";
        /// `chaindata.profiler.address_counterparties`.
        pub const ADDRESS_COUNTERPARTIES: &str = "chaindata.profiler.address_counterparties";
        /// `chaindata.profiler.address_historical_balances`.
        pub const ADDRESS_HISTORICAL_BALANCES: &str = "chaindata.profiler.address_historical_balances";
        /// `chaindata.profiler.address_labels`.
        pub const ADDRESS_LABELS: &str = "chaindata.profiler.address_labels";
        /// `chaindata.profiler.address_nft_holdings`.
        pub const ADDRESS_NFT_HOLDINGS: &str = "chaindata.profiler.address_nft_holdings";
        /// `chaindata.profiler.address_pnl`.
        pub const ADDRESS_PNL: &str = "chaindata.profiler.address_pnl";
        /// `chaindata.profiler.address_pnl_summary`.
        pub const ADDRESS_PNL_SUMMARY: &str = "chaindata.profiler.address_pnl_summary";
        /// `chaindata.profiler.address_related_wallets`.
        pub const ADDRESS_RELATED_WALLETS: &str = "chaindata.profiler.address_related_wallets";
        /// `chaindata.profiler.address_token_transfers`.
        pub const ADDRESS_TOKEN_TRANSFERS: &str = "chaindata.profiler.address_token_transfers";
        /// `chaindata.profiler.address_transactions`.
        pub const ADDRESS_TRANSACTIONS: &str = "chaindata.profiler.address_transactions";
    }
    /// `chaindata.smart_money.*` routes.
    pub mod smart_money {
        /// `chaindata.smart_money.agg_dca`.
        pub const AGG_DCA: &str = "chaindata.smart_money.agg_dca";
        /// `chaindata.smart_money.dex_trades`.
        pub const DEX_TRADES: &str = "chaindata.smart_money.dex_trades";
        /// `chaindata.smart_money.historical_holdings`.
        pub const HISTORICAL_HOLDINGS: &str = "chaindata.smart_money.historical_holdings";
        /// `chaindata.smart_money.holdings`.
        pub const HOLDINGS: &str = "chaindata.smart_money.holdings";
        /// `chaindata.smart_money.netflow`.
        pub const NETFLOW: &str = "chaindata.smart_money.netflow";
        /// `chaindata.smart_money.perp_trades`.
        pub const PERP_TRADES: &str = "chaindata.smart_money.perp_trades";
    }
    /// `chaindata.tgm.*` routes.
    pub mod tgm {
        /// `chaindata.tgm.agg_dca`.
        pub const AGG_DCA: &str = "chaindata.tgm.agg_dca";
        /// `chaindata.tgm.dex_trades`.
        pub const DEX_TRADES: &str = "chaindata.tgm.dex_trades";
        /// `chaindata.tgm.flow_intelligence`.
        pub const FLOW_INTELLIGENCE: &str = "chaindata.tgm.flow_intelligence";
        /// `chaindata.tgm.flows`.
        pub const FLOWS: &str = "chaindata.tgm.flows";
        /// `chaindata.tgm.holders`.
        pub const HOLDERS: &str = "chaindata.tgm.holders";
        /// `chaindata.tgm.indicators`.
        pub const INDICATORS: &str = "chaindata.tgm.indicators";
        /// `chaindata.tgm.perp_pnl_leaderboard`.
        pub const PERP_PNL_LEADERBOARD: &str = "chaindata.tgm.perp_pnl_leaderboard";
        /// `chaindata.tgm.perp_positions`.
        pub const PERP_POSITIONS: &str = "chaindata.tgm.perp_positions";
        /// `chaindata.tgm.perp_screener`.
        pub const PERP_SCREENER: &str = "chaindata.tgm.perp_screener";
        /// `chaindata.tgm.perp_trades`.
        pub const PERP_TRADES: &str = "chaindata.tgm.perp_trades";
        /// `chaindata.tgm.pnl_leaderboard`.
        pub const PNL_LEADERBOARD: &str = "chaindata.tgm.pnl_leaderboard";
        /// `chaindata.tgm.token_information`.
        pub const TOKEN_INFORMATION: &str = "chaindata.tgm.token_information";
        /// `chaindata.tgm.token_ohlcv`.
        pub const TOKEN_OHLCV: &str = "chaindata.tgm.token_ohlcv";
        /// `chaindata.tgm.token_screener`.
        pub const TOKEN_SCREENER: &str = "chaindata.tgm.token_screener";
        /// `chaindata.tgm.transfers`.
        pub const TRANSFERS: &str = "chaindata.tgm.transfers";
        /// `chaindata.tgm.who_bought_sold`.
        pub const WHO_BOUGHT_SOLD: &str = "chaindata.tgm.who_bought_sold";
    }
}
/// `credits.*` routes.
pub mod credits {
    /// `credits.purchase`.
    pub const PURCHASE: &str = "credits.purchase";
}
/// `infra.*` routes.
pub mod infra {
    /// `infra.defi_discover`.
    pub const DEFI_DISCOVER: &str = "infra.defi_discover";
    /// `infra.defi_nontokenized`.
    pub const DEFI_NONTOKENIZED: &str = "infra.defi_nontokenized";
    /// `infra.defi_quote`.
    pub const DEFI_QUOTE: &str = "infra.defi_quote";
    /// `infra.evm_swap_quote`.
    pub const EVM_SWAP_QUOTE: &str = "infra.evm_swap_quote";
    /// `infra.evm_token_price`.
    pub const EVM_TOKEN_PRICE: &str = "infra.evm_token_price";
    /// `infra.launchpad_coin`.
    pub const LAUNCHPAD_COIN: &str = "infra.launchpad_coin";
    /// `infra.orderbookdex_markets`.
    pub const ORDERBOOKDEX_MARKETS: &str = "infra.orderbookdex_markets";
    /// `infra.orderbookdex_proxy`.
    pub const ORDERBOOKDEX_PROXY: &str = "infra.orderbookdex_proxy";
    /// `infra.perpdex_exchange`.
    pub const PERPDEX_EXCHANGE: &str = "infra.perpdex_exchange";
    /// `infra.perpdex_info`.
    pub const PERPDEX_INFO: &str = "infra.perpdex_info";
    /// `infra.shield_simulate`.
    pub const SHIELD_SIMULATE: &str = "infra.shield_simulate";
    /// `infra.shield_validate`.
    pub const SHIELD_VALIDATE: &str = "infra.shield_validate";
    /// `infra.swap_quote`.
    pub const SWAP_QUOTE: &str = "infra.swap_quote";
}
/// `marketplace.*` routes.
pub mod marketplace {
    /// `marketplace.agent`.
    pub const AGENT: &str = "marketplace.agent";
    /// `marketplace.agents`.
    pub const AGENTS: &str = "marketplace.agents";
}
/// `predmkt.*` routes.
pub mod predmkt {
    /// `predmkt.arbitrage`.
    pub const ARBITRAGE: &str = "predmkt.arbitrage";
    /// `predmkt.compare`.
    pub const COMPARE: &str = "predmkt.compare";
    /// `predmkt.orderbook`.
    pub const ORDERBOOK: &str = "predmkt.orderbook";
    /// `predmkt.quote`.
    pub const QUOTE: &str = "predmkt.quote";
    /// `predmkt.search`.
    pub const SEARCH: &str = "predmkt.search";
}
/// `public.*` routes.
pub mod public {
    /// `public.alpha_track_record`.
    pub const ALPHA_TRACK_RECORD: &str = "public.alpha_track_record";
    /// `public.tokens_stats`.
    pub const TOKENS_STATS: &str = "public.tokens_stats";
}
/// `sellers.*` routes.
pub mod sellers {
    /// `sellers.config`.
    pub const CONFIG: &str = "sellers.config";
    /// `sellers.config_set`.
    pub const CONFIG_SET: &str = "sellers.config_set";
    /// `sellers.create`.
    pub const CREATE: &str = "sellers.create";
    /// `sellers.delete`.
    pub const DELETE: &str = "sellers.delete";
    /// `sellers.get`.
    pub const GET: &str = "sellers.get";
    /// `sellers.list`.
    pub const LIST: &str = "sellers.list";
    /// `sellers.revenue`.
    pub const REVENUE: &str = "sellers.revenue";
    /// `sellers.rotate_secret`.
    pub const ROTATE_SECRET: &str = "sellers.rotate_secret";
    /// `sellers.update`.
    pub const UPDATE: &str = "sellers.update";
    /// `sellers.withdraw`.
    pub const WITHDRAW: &str = "sellers.withdraw";
    /// `sellers.withdrawals`.
    pub const WITHDRAWALS: &str = "sellers.withdrawals";
}
/// `social.*` routes.
pub mod social {
    /// `social.counts`.
    pub const COUNTS: &str = "social.counts";
    /// `social.search`.
    pub const SEARCH: &str = "social.search";
    /// `social.trends`.
    pub const TRENDS: &str = "social.trends";
    /// `social.tweet`.
    pub const TWEET: &str = "social.tweet";
    /// `social.tweet_liking_users`.
    pub const TWEET_LIKING_USERS: &str = "social.tweet_liking_users";
    /// `social.tweet_quote_tweets`.
    pub const TWEET_QUOTE_TWEETS: &str = "social.tweet_quote_tweets";
    /// `social.tweet_retweeted_by`.
    pub const TWEET_RETWEETED_BY: &str = "social.tweet_retweeted_by";
    /// `social.tweet_retweets`.
    pub const TWEET_RETWEETS: &str = "social.tweet_retweets";
    /// `social.tweets`.
    pub const TWEETS: &str = "social.tweets";
    /// `social.user`.
    pub const USER: &str = "social.user";
    /// `social.user_by_id`.
    pub const USER_BY_ID: &str = "social.user_by_id";
    /// `social.user_followers`.
    pub const USER_FOLLOWERS: &str = "social.user_followers";
    /// `social.user_following`.
    pub const USER_FOLLOWING: &str = "social.user_following";
    /// `social.user_mentions`.
    pub const USER_MENTIONS: &str = "social.user_mentions";
    /// `social.user_timeline`.
    pub const USER_TIMELINE: &str = "social.user_timeline";
    /// `social.users_search`.
    pub const USERS_SEARCH: &str = "social.users_search";
}
/// `tools.*` routes.
pub mod tools {
    /// `tools.data_products`.
    pub const DATA_PRODUCTS: &str = "tools.data_products";
}
/// `x402.*` routes.
pub mod x402 {
    /// `x402.pricing`.
    pub const PRICING: &str = "x402.pricing";
    /// `x402.receipts`.
    pub const RECEIPTS: &str = "x402.receipts";
}
