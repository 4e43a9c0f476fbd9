-- credit_batch() reads each account's live holds (and each limited key's) through the holds' indexes,
-- (account_id, expires_at) and (key_id, expires_at). Holds are short-lived rows: every call's hold
-- is inserted and, one batch later, deleted, so those indexes fill with entries of deleted rows
-- between two vacuums (tens of thousands a minute under load). A plain index scan marks such an
-- entry dead once its row is gone for everyone, and later scans skip it; a bitmap scan, which the
-- planner prefers for these sums, never does, so each batch read every entry since the last vacuum
-- (0.7 ms for one account after 11,000 calls, growing with load until autovacuum came round).
-- bench/README.md, 2026-11-27.
ALTER FUNCTION credit_batch(jsonb) SET enable_bitmapscan = off;
--> statement-breakpoint
ALTER FUNCTION credit_batch(jsonb) SET enable_seqscan = off;
