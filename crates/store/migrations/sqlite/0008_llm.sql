-- The LLM proxy's tables. Kept line for line beside migrations/postgres/0008_llm.sql.
--
-- llm_accounts: per account, the version its proxy tokens are signed over (rotation bumps it,
-- so every earlier token stops verifying without a deny-list) and its automatic top-up.
-- llm_calls: one row per proxied call, written before the upstream is asked (status
-- 'reserved', with the credits held for it) and finished after; a row still 'reserved' long
-- after its call began belongs to a process that stopped, and is released.

CREATE TABLE llm_accounts (
    account_id     TEXT PRIMARY KEY REFERENCES accounts (id),
    token_version  BIGINT NOT NULL DEFAULT 0,
    top_up_enabled BIGINT NOT NULL DEFAULT 0,
    top_up_amount  BIGINT NOT NULL DEFAULT 0,
    updated_at     BIGINT NOT NULL
);

CREATE TABLE llm_calls (
    id                TEXT PRIMARY KEY,
    account_id        TEXT NOT NULL REFERENCES accounts (id),
    alias             TEXT NOT NULL,
    provider          TEXT NOT NULL,
    upstream_model    TEXT NOT NULL,
    stream            BIGINT NOT NULL,
    reserved          BIGINT NOT NULL,
    status            TEXT NOT NULL,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    cached_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    cost              BIGINT NOT NULL DEFAULT 0,
    latency_ms        BIGINT NOT NULL DEFAULT 0,
    note              TEXT,
    created_at        BIGINT NOT NULL,
    finished_at       BIGINT
);
CREATE INDEX llm_calls_account_created ON llm_calls (account_id, created_at);
CREATE INDEX llm_calls_status_created ON llm_calls (status, created_at);
