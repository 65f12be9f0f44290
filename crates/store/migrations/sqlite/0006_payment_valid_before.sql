-- When a payment's authorization stops being usable. Kept line for line beside the other
-- backend's 0006.
--
-- Unix seconds: an EIP-3009 authorization's validBefore, or for a Solana payment a bound well
-- past its transaction's blockhash (ten minutes after it arrived). Reconciliation needs it to
-- call an unused authorization final: before then a settlement already sent may still land.
-- NULL where no bound is known (rows written before this column existed).

ALTER TABLE payments ADD COLUMN valid_before BIGINT;
