-- When a payment's authorization stops being usable. Kept line for line beside the other
-- backend's 0006.
--
-- Unix seconds: an EIP-3009 authorization's validBefore. Reconciliation needs it to call an
-- unused authorization final: before then a settlement already sent may still land. NULL for
-- payments with no such bound (Solana, whose transactions expire with their blockhash) and for
-- rows written before this column existed.

ALTER TABLE payments ADD COLUMN valid_before BIGINT;
