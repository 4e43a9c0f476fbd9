ALTER TABLE "api_keys" ADD COLUMN "policy" text;--> statement-breakpoint
ALTER TABLE "credit_holds" ADD COLUMN "key_id" text;--> statement-breakpoint
CREATE INDEX "credit_holds_key_idx" ON "credit_holds" USING btree ("key_id","expires_at");--> statement-breakpoint
CREATE INDEX "ledger_key_time_idx" ON "ledger" USING btree ("key_id","created_at");--> statement-breakpoint
-- credit_hold() for a key with a monthly_credit_limit: the same hold, refused also when the key's
-- charges since p_since (the first instant of the UTC month, ms) plus its live holds on every
-- node, plus p_amount, pass p_limit. Exact for the same reason as credit_hold(): a key's holds are
-- all taken under its account's advisory lock, and one statement reads the key's ledger rows and
-- holds in one snapshot (a charge removes its hold and writes its row together).
-- remaining: what is left of the balance after the hold, NULL when refused; key_used: the key's
-- spend plus holds before this one when the key's limit refused (NULL otherwise).
CREATE FUNCTION credit_hold_key(p_id uuid, p_account text, p_amount bigint, p_lease_ms bigint,
  p_key text, p_limit bigint, p_since bigint, OUT remaining double precision, OUT key_used double precision)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ms bigint;
  available bigint;
  used bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(7263012, hashtext(p_account));
  now_ms := (extract(epoch from clock_timestamp()) * 1000)::bigint;
  DELETE FROM credit_holds WHERE id IN (
    SELECT id FROM credit_holds WHERE account_id = p_account AND expires_at <= now_ms FOR UPDATE SKIP LOCKED);
  SELECT coalesce((SELECT -sum(l.amount) FROM ledger l
      WHERE l.key_id = p_key AND l.kind = 'charge' AND l.created_at >= p_since), 0)
    + coalesce((SELECT sum(h.amount) FROM credit_holds h WHERE h.key_id = p_key AND h.expires_at > now_ms), 0)
    INTO used;
  IF used + p_amount > p_limit THEN
    key_used := used;
    RETURN;
  END IF;
  SELECT a.balance - coalesce((SELECT sum(h.amount) FROM credit_holds h
      WHERE h.account_id = p_account AND h.expires_at > now_ms), 0)
    INTO available FROM accounts a WHERE a.id = p_account;
  IF available IS NULL OR available < p_amount THEN
    RETURN;
  END IF;
  INSERT INTO credit_holds (id, account_id, amount, expires_at, key_id)
    VALUES (p_id, p_account, p_amount, now_ms + p_lease_ms, p_key);
  remaining := available - p_amount;
END
$$;
