-- Nonces of sign-in messages. Kept line for line beside the other backend's 0004.
--
-- A nonce is handed out, then used at most once before it expires: the use is one UPDATE
-- that matches only an unused, unexpired row, so two replicas racing on one signed message
-- cannot both sign it in.

CREATE TABLE sign_in_nonces (
    nonce      TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);

CREATE INDEX sign_in_nonces_expires ON sign_in_nonces (expires_at);
