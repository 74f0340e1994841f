-- Idempotency keys are remembered for a bounded time: each append forgets its
-- conversation's keys older than the store's key lifetime, so it needs them by age.
CREATE INDEX append_keys_by_age ON append_keys (conversation, created_at);
