-- What the console reads often, kept as it happens. Kept line for line beside the other
-- backend's 0014.
--
-- `daily_spend`: what each account (credits) and each wallet (x402) spent per UTC day, route
-- and ledger kind. The overview sums 30 days of it instead of every call in them, so its cost
-- does not grow with an account's calls. Triggers keep it: every writer of the ledger and of
-- payments counts, with nothing to remember in code. A day is unix ms / 86,400,000.
--
-- `api_keys.last_used_at`: when a key last authorized a call, written at most once a minute
-- per key and process (the key page says "last used"; a minute is all it claims).
--
-- `credit_ledger.key_id`: the key a call billed to credits came with (NULL: a sign-in token,
-- the LLM token, the sandbox's minutes), so the console says which key spent what.

CREATE TABLE daily_spend (
    owner    TEXT NOT NULL,
    day      BIGINT NOT NULL,
    rail     TEXT NOT NULL,
    route_id TEXT NOT NULL,
    kind     TEXT NOT NULL,
    amount   BIGINT NOT NULL,
    PRIMARY KEY (owner, day, rail, route_id, kind)
);

CREATE TRIGGER daily_spend_credits AFTER INSERT ON credit_ledger
WHEN NEW.kind IN ('call', 'llm', 'refund', 'rebate')
BEGIN
    INSERT INTO daily_spend (owner, day, rail, route_id, kind, amount)
    VALUES (NEW.account_id, NEW.created_at / 86400000, 'credits', COALESCE(NEW.route_id, ''), NEW.kind, -NEW.delta)
    ON CONFLICT (owner, day, rail, route_id, kind) DO UPDATE SET amount = amount + excluded.amount;
END;

CREATE TRIGGER daily_spend_settled AFTER UPDATE OF status ON payments
WHEN NEW.status = 'settled' AND OLD.status <> 'settled'
BEGIN
    INSERT INTO daily_spend (owner, day, rail, route_id, kind, amount)
    VALUES (NEW.payer, NEW.created_at / 86400000, 'x402', NEW.route_id, '', NEW.amount)
    ON CONFLICT (owner, day, rail, route_id, kind) DO UPDATE SET amount = amount + excluded.amount;
END;

CREATE TRIGGER daily_spend_settled_at_once AFTER INSERT ON payments
WHEN NEW.status = 'settled'
BEGIN
    INSERT INTO daily_spend (owner, day, rail, route_id, kind, amount)
    VALUES (NEW.payer, NEW.created_at / 86400000, 'x402', NEW.route_id, '', NEW.amount)
    ON CONFLICT (owner, day, rail, route_id, kind) DO UPDATE SET amount = amount + excluded.amount;
END;

INSERT INTO daily_spend (owner, day, rail, route_id, kind, amount)
SELECT account_id, created_at / 86400000, 'credits', COALESCE(route_id, ''), kind, SUM(-delta)
FROM credit_ledger WHERE kind IN ('call', 'llm', 'refund', 'rebate')
GROUP BY account_id, created_at / 86400000, COALESCE(route_id, ''), kind;

INSERT INTO daily_spend (owner, day, rail, route_id, kind, amount)
SELECT payer, created_at / 86400000, 'x402', route_id, '', SUM(amount)
FROM payments WHERE status = 'settled'
GROUP BY payer, created_at / 86400000, route_id;

ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;

ALTER TABLE credit_ledger ADD COLUMN key_id TEXT;
