-- The payment a kept answer was bought with, signature included. Kept line for line beside the
-- other backend's 0007.
--
-- A hex SHA-256 of the payment's scheme payload (keys sorted). A kept answer is served again
-- only to the very payment that bought it: the payer and nonce alone are public once the
-- payment settles, and must not be enough to fetch the answer. Empty on rows written before
-- this column existed, which then match no retry.

ALTER TABLE paid_responses ADD COLUMN payload_digest TEXT NOT NULL DEFAULT '';
