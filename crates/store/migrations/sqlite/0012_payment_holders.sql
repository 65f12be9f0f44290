-- Which process holds a reservation, and when each process was last seen. Kept line for line
-- beside the other backend's 0012_payment_holders.sql.
--
-- A process beats every few seconds. A reservation whose holder stopped beating was interrupted
-- by that process stopping (a crash, a kill): reconciliation decides it at once from the chain
-- instead of waiting out the abandonment window. A holder with no row (an older process, or one
-- that has not beaten yet) is taken as alive, the safe side.

ALTER TABLE payments ADD COLUMN holder TEXT;

CREATE TABLE paywall_instances (
    id      TEXT PRIMARY KEY,
    seen_at BIGINT NOT NULL
);
