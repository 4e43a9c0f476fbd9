CREATE TABLE "credit_holds" (
	"id" uuid PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"amount" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "credit_holds_account_idx" ON "credit_holds" USING btree ("account_id","expires_at");--> statement-breakpoint
-- Takes a hold of p_amount credits on p_account, or none: NULL when the balance minus every live
-- hold (any node) does not cover it; otherwise what is left after it. One call, one round trip.
-- Exact because every hold is taken under the account's advisory lock (key space 7263012), and
-- this function is VOLATILE plpgsql under READ COMMITTED: each statement below reads a snapshot
-- taken after the lock was granted, so it sees every hold committed before it, and the balance
-- and the holds of a charge that removed its hold together, in one snapshot. Expired holds (their
-- node died) no longer count, and are swept here without waiting for any row another
-- transaction holds.
CREATE FUNCTION credit_hold(p_id uuid, p_account text, p_amount bigint, p_lease_ms bigint)
RETURNS double precision LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms bigint;
  available bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(7263012, hashtext(p_account));
  now_ms := (extract(epoch from clock_timestamp()) * 1000)::bigint;
  DELETE FROM credit_holds WHERE id IN (
    SELECT id FROM credit_holds WHERE account_id = p_account AND expires_at <= now_ms FOR UPDATE SKIP LOCKED);
  SELECT a.balance - coalesce((SELECT sum(h.amount) FROM credit_holds h
      WHERE h.account_id = p_account AND h.expires_at > now_ms), 0)
    INTO available FROM accounts a WHERE a.id = p_account;
  IF available IS NULL OR available < p_amount THEN
    RETURN NULL;
  END IF;
  INSERT INTO credit_holds (id, account_id, amount, expires_at) VALUES (p_id, p_account, p_amount, now_ms + p_lease_ms);
  RETURN available - p_amount;
END
$$;
