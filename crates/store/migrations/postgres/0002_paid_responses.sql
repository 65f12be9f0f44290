-- Answers of paid calls kept for idempotent retries (x402 payment-identifier extension): a client
-- that lost an answer retries with the same payment id and gets it again without paying twice.
-- Kept line for line beside migrations/sqlite/0002_paid_responses.sql.

CREATE TABLE paid_responses (
    payment_id       TEXT PRIMARY KEY,
    network          TEXT NOT NULL,
    payer            TEXT NOT NULL,
    nonce            TEXT NOT NULL,
    body             BYTEA NOT NULL,
    payment_response TEXT NOT NULL,
    created_at       BIGINT NOT NULL
);
CREATE INDEX paid_responses_created ON paid_responses (created_at);
