-- Sellers. Kept line for line beside the other backend's 0011_sellers.sql.
--
-- seller_agents: an agent a seller's account registered, its listing, its input schema, what
-- answers its invokes (the backend's kind and where: an endpoint; and the sealed secret svc
-- signs them with), and its x402
-- config (JSON, NULL until first set; x402_enabled and price copied out for queries). The
-- counters are the running sums of its calls and withdrawals, kept by the triggers below in the
-- same statement as each entry: balance (settled revenue not yet withdrawn) may never go
-- negative, so concurrent withdrawals cannot take more than it, on either backend. A deleted
-- agent keeps its row (deleted_at), so its money stays accounted for.
-- seller_calls: one row per paid invoke whose seller answered, written before the payment
-- settles ('served'). It earns (its net added to the agent, settled or not) in the same
-- statement that records its payment as settled or verified, by the trigger on payments below,
-- so no earning is lost to a crash between the two; a call whose payment never went through is
-- 'dropped' by a sweeper (a dropped call whose payment comes back still earns). The unique
-- payment key makes each payment earn once.
-- seller_withdrawals: payouts. Writing one takes its amount from the balance (or fails whole);
-- one that fails for good gives it back.
-- seller_daily_calls: invokes per agent per UTC day, counted by one conditional upsert so the
-- daily limit holds across replicas.

CREATE TABLE seller_agents (
    id            TEXT PRIMARY KEY,
    account_id    TEXT NOT NULL REFERENCES accounts (id),
    name          TEXT NOT NULL,
    category      TEXT NOT NULL,
    tags          TEXT NOT NULL,
    description   TEXT NOT NULL,
    examples      TEXT NOT NULL,
    capabilities  TEXT NOT NULL,
    input_schema  TEXT NOT NULL,
    backend       TEXT NOT NULL,
    endpoint      TEXT NOT NULL,
    timeout_ms    BIGINT NOT NULL,
    secret_sealed BLOB NOT NULL,
    config        TEXT,
    x402_enabled  BIGINT NOT NULL DEFAULT 0,
    price         BIGINT NOT NULL DEFAULT 0,
    balance       BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0),
    unsettled     BIGINT NOT NULL DEFAULT 0,
    total_earned  BIGINT NOT NULL DEFAULT 0,
    paid_calls    BIGINT NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    deleted_at    BIGINT
);
CREATE INDEX seller_agents_account ON seller_agents (account_id, created_at);
CREATE INDEX seller_agents_listed ON seller_agents (x402_enabled, paid_calls);

CREATE TABLE seller_calls (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL REFERENCES seller_agents (id),
    network     TEXT NOT NULL,
    payer       TEXT NOT NULL,
    nonce       TEXT NOT NULL,
    price       BIGINT NOT NULL,
    fee         BIGINT NOT NULL,
    net         BIGINT NOT NULL,
    state       TEXT NOT NULL,
    settled     BIGINT NOT NULL DEFAULT 0,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    UNIQUE (network, payer, nonce)
);
CREATE INDEX seller_calls_agent_created ON seller_calls (agent_id, state, created_at);
CREATE INDEX seller_calls_state ON seller_calls (state, created_at);

CREATE TABLE seller_withdrawals (
    id          TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL REFERENCES seller_agents (id),
    amount      BIGINT NOT NULL CHECK (amount > 0),
    destination TEXT NOT NULL,
    network     TEXT NOT NULL,
    status      TEXT NOT NULL,
    automatic   BIGINT NOT NULL,
    tx_hash     TEXT,
    error       TEXT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX seller_withdrawals_agent ON seller_withdrawals (agent_id, created_at);
CREATE INDEX seller_withdrawals_status ON seller_withdrawals (status, created_at);

CREATE TABLE seller_daily_calls (
    agent_id TEXT NOT NULL,
    day      BIGINT NOT NULL,
    calls    BIGINT NOT NULL,
    PRIMARY KEY (agent_id, day)
);

CREATE TRIGGER seller_calls_earned AFTER UPDATE OF state ON seller_calls
WHEN NEW.state = 'earned' AND OLD.state <> 'earned'
BEGIN
    UPDATE seller_agents SET
        balance = balance + CASE WHEN NEW.settled = 1 THEN NEW.net ELSE 0 END,
        unsettled = unsettled + CASE WHEN NEW.settled = 1 THEN 0 ELSE NEW.net END,
        total_earned = total_earned + NEW.net,
        paid_calls = paid_calls + 1
    WHERE id = NEW.agent_id;
END;

CREATE TRIGGER seller_withdrawals_taken AFTER INSERT ON seller_withdrawals
BEGIN
    UPDATE seller_agents SET balance = balance - NEW.amount WHERE id = NEW.agent_id;
END;

CREATE TRIGGER seller_withdrawals_failed AFTER UPDATE OF status ON seller_withdrawals
WHEN NEW.status = 'failed' AND OLD.status <> 'failed'
BEGIN
    UPDATE seller_agents SET balance = balance + NEW.amount WHERE id = NEW.agent_id;
END;

CREATE TRIGGER payments_earn_seller_calls AFTER UPDATE OF status ON payments
WHEN NEW.status IN ('settled', 'unsettled') AND OLD.status NOT IN ('settled', 'unsettled')
BEGIN
    UPDATE seller_calls SET
        state = 'earned',
        settled = CASE WHEN NEW.status = 'settled' THEN 1 ELSE 0 END,
        updated_at = NEW.updated_at
    WHERE network = NEW.network AND payer = NEW.payer AND nonce = NEW.nonce AND state IN ('served', 'dropped')
        AND NEW.route_id = 'seller:' || agent_id;
END;
