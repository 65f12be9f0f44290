-- svc schema, SQLite dialect. Kept line for line beside migrations/postgres/0001_init.sql.
-- Money: BIGINT USDC atomic units. Time: BIGINT unix milliseconds. Ids: TEXT.

CREATE TABLE payments (
    id          TEXT PRIMARY KEY,
    route_id    TEXT NOT NULL,
    network     TEXT NOT NULL,
    payer       TEXT NOT NULL,
    nonce       TEXT NOT NULL,
    amount      BIGINT NOT NULL,
    asset       TEXT NOT NULL,
    pay_to      TEXT NOT NULL,
    status      TEXT NOT NULL,
    tx_hash     TEXT,
    error       TEXT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (network, payer, nonce)
);
CREATE INDEX payments_payer_created ON payments (payer, created_at);

CREATE TABLE request_usage (
    id       TEXT PRIMARY KEY,
    caller   TEXT NOT NULL,
    route_id TEXT NOT NULL,
    channel  TEXT NOT NULL,
    amount   BIGINT NOT NULL,
    at_ms    BIGINT NOT NULL
);
CREATE INDEX request_usage_caller_at ON request_usage (caller, at_ms);

CREATE TABLE token_stats (
    chain           TEXT NOT NULL,
    address         TEXT NOT NULL,
    symbol          TEXT NOT NULL,
    name            TEXT NOT NULL,
    price_usd       TEXT NOT NULL,
    change_24h_pct  TEXT,
    volume_24h_usd  TEXT,
    market_cap_usd  TEXT,
    liquidity_usd   TEXT,
    rank            INTEGER NOT NULL,
    updated_at      BIGINT NOT NULL,
    PRIMARY KEY (chain, address)
);
