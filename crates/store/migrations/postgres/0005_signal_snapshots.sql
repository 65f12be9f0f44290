-- Snapshots of the signal engine. Kept line for line beside the other backend's 0005.
--
-- One row per refresh: the whole snapshot as JSON text (the routes serve it as is), keyed by
-- the instant it was computed. Every row is kept, because the public track record compares
-- past picks and exits with prices now.

CREATE TABLE signal_snapshots (
    generated_at BIGINT PRIMARY KEY,
    body         TEXT NOT NULL
);
