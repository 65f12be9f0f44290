-- The chat-bot channel. Kept line for line beside the other backend's 0010_telegram.sql.
--
-- telegram_bots: one bot per account. The token is sealed (AES-256-GCM, key from the
-- environment) and looked up by token_hash, a SHA-256 that also names the relay URL; unique,
-- so one bot belongs to one account. The webhook's secret is kept as a hash only.
-- telegram_updates: what the chat platform delivered, kept until the agent's gateway confirms
-- it (getUpdates with a higher offset); the primary key drops a delivery seen before.

CREATE TABLE telegram_bots (
    account_id     TEXT PRIMARY KEY REFERENCES accounts (id),
    token_hash     TEXT NOT NULL UNIQUE,
    token_sealed   BLOB NOT NULL,
    bot_id         BIGINT NOT NULL,
    username       TEXT NOT NULL,
    secret_hash    TEXT NOT NULL,
    allowed_groups TEXT NOT NULL,
    relay_status   TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);

CREATE TABLE telegram_updates (
    token_hash  TEXT NOT NULL,
    update_id   BIGINT NOT NULL,
    body        TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (token_hash, update_id)
);
