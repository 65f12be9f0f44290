-- Agent sandboxes. Kept line for line beside the other backend's 0009_agentbox.sql.
--
-- agentbox_gateways: one row per gateway an account started, moved through its lifecycle
-- (provisioning, configuring, starting, health_check, running, stopping, then stopped or
-- failed with a reason). At most one row per account is active (not stopped or failed): the
-- partial unique index makes two concurrent starts end with one gateway and one conflict.
-- node names the machine whose sandbox it is, so each replica reconciles its own after a
-- restart. What a gateway burnt is read from the credit ledger (references agentbox:<id>:<n>).

CREATE TABLE agentbox_gateways (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    template    TEXT NOT NULL,
    state       TEXT NOT NULL,
    reason      TEXT,
    node        TEXT NOT NULL,
    backend     TEXT NOT NULL,
    memory_mb   BIGINT NOT NULL,
    key_id      TEXT,
    pid         BIGINT,
    created_at  BIGINT NOT NULL,
    started_at  BIGINT,
    updated_at  BIGINT NOT NULL,
    ended_at    BIGINT
);
CREATE UNIQUE INDEX agentbox_gateways_one_active ON agentbox_gateways (account_id)
    WHERE state NOT IN ('stopped', 'failed');
CREATE INDEX agentbox_gateways_account_created ON agentbox_gateways (account_id, created_at);
CREATE INDEX agentbox_gateways_node_state ON agentbox_gateways (node, state);
