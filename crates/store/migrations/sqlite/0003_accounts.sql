-- Accounts, their API keys and their credit ledger. Kept line for line beside
-- migrations/postgres/0003_accounts.sql.
--
-- The ledger is append-only; `accounts.balance` is its running sum, kept by a trigger in the
-- same statement as each entry, and may never go negative (CHECK). A debit is therefore one
-- INSERT that either lands with its balance change or fails whole: concurrent calls cannot
-- overspend, on either backend.

CREATE TABLE accounts (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    wallet     TEXT UNIQUE,
    balance    BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    name         TEXT NOT NULL,
    prefix       TEXT NOT NULL,
    hash         TEXT NOT NULL UNIQUE,
    scopes       TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE credit_ledger (
    id         TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    delta      BIGINT NOT NULL,
    kind       TEXT NOT NULL,
    route_id   TEXT,
    reference  TEXT UNIQUE,
    created_at BIGINT NOT NULL
);
CREATE INDEX credit_ledger_account_created ON credit_ledger (account_id, created_at);

CREATE TRIGGER credit_ledger_balance AFTER INSERT ON credit_ledger
BEGIN
    UPDATE accounts SET balance = balance + NEW.delta WHERE id = NEW.account_id;
END;
