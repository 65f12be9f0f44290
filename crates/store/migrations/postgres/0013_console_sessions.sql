-- Sessions of the console (`/console`). Kept line for line beside the other backend's 0013.
--
-- The browser holds a random secret in a cookie; only its SHA-256 is stored, so a leaked
-- database opens no session. A session stands for a wallet sign-in (key_id NULL: what a
-- sign-in token may do) or for one API key (what that key may do, and no longer than the key
-- lives). Its CSRF token is checked on every form it posts.

CREATE TABLE console_sessions (
    hash       TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    key_id     TEXT REFERENCES api_keys (id),
    csrf       TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX console_sessions_expires ON console_sessions (expires_at);
