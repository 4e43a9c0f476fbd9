-- Node leases (issue 40): a node takes a block of an account's balance as one hold row of its own
-- (a lease), admits calls against it in memory, and charges them in its batches by shrinking the
-- lease by what each charges, in the transaction that debits the balance. A lease is a hold like any
-- other: every node's admission spares it, its node renews it, and one whose node died stops
-- counting when its expiry passes (swept by the next batch on the account), so its unspent part
-- returns by itself. New operations of credit_batch():
--   lease:  {"k":"l","i":index,"a":account,"n":most wanted,"mn":least wanted,"h":lease id,"l":lease ms}
--           granted min(n, (balance - live holds) / 20) when that is at least mn; remaining = what is
--           left after it (NULL: refused), key_used = the amount granted
--   charge: {"k":"c", ... ,"h":lease id,"ls":true,"l":lease ms}: a call admitted against a lease;
--           charged as a held call while the lease lives (shrinking it, and renewing it for l ms:
--           under load the node's own batches hold its row and a renewal that skips locked rows
--           would miss it), else as a charge without a hold; key_used = 1 when the lease lived
-- Leases are ordered with the account's holds (after its charges), and lock as holds do.
ALTER TYPE credit_batch_op ADD ATTRIBUTE ls boolean;
--> statement-breakpoint
ALTER TYPE credit_batch_op ADD ATTRIBUTE mn bigint;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION credit_batch(p_ops jsonb)
RETURNS TABLE (op_index integer, remaining double precision, key_used double precision, claimed boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  -- parsed once, in the order they are decided: account (bytes), its charges, then its holds
  ops credit_batch_op[];
  op credit_batch_op;
  now_ms bigint;
  accs text[];
  lock_accs text[];
  row_accs text[];
  acc text;
  bals bigint[];
  helds bigint[];
  pos integer := 0;
  cur text := NULL;
  bal bigint;
  held bigint;
  -- keys with a monthly limit in the batch: key -> month-to-date charges plus live holds
  used_of jsonb;
  claimed_ids text[] := '{}';
  any_gone boolean;
  any_idem boolean;
  any_lim boolean;
  spent bigint;
  ok boolean;
  out_ix integer[] := '{}';
  out_rem double precision[] := '{}';
  out_used double precision[] := '{}';
  out_claimed boolean[] := '{}';
  charged_ix integer[] := '{}';
  new_ids uuid[] := '{}';
  new_accs text[] := '{}';
  new_amts bigint[] := '{}';
  new_keys text[] := '{}';
  new_exp bigint[] := '{}';
  any_lease boolean;
  live_leases uuid[] := '{}';
  grant_n bigint;
BEGIN
  SELECT array_agg(x ORDER BY x.a COLLATE "C", x.k, x.i),
      array_agg(DISTINCT x.a COLLATE "C" ORDER BY x.a COLLATE "C") FILTER (WHERE x.k IN ('h', 'l', 'c')),
      array_agg(DISTINCT x.a COLLATE "C" ORDER BY x.a COLLATE "C") FILTER (WHERE x.k IN ('h', 'l') OR (x.k = 'c' AND (x.h IS NULL OR x.ls))),
      array_agg(DISTINCT x.a COLLATE "C" ORDER BY x.a COLLATE "C") FILTER (WHERE x.k = 'c'),
      coalesce(bool_or(x.k = 'r' OR (x.k = 'c' AND x.h IS NOT NULL AND x.ls IS NOT TRUE)), false),
      coalesce(bool_or(x.k = 'c' AND x.ls), false),
      coalesce(bool_or(x.k = 'c' AND x.idem), false),
      coalesce(bool_or(x.lim IS NOT NULL AND (x.k = 'h' OR (x.k = 'c' AND x.h IS NULL))), false)
    INTO ops, accs, lock_accs, row_accs, any_gone, any_lease, any_idem, any_lim
    FROM jsonb_populate_recordset(NULL::credit_batch_op, p_ops) AS x;
  IF ops IS NULL THEN
    RETURN;
  END IF;
  -- first, before any lock: the holds given back, and those of the calls charged now (charged or
  -- not, a charge ends its hold). Rows of this node's own holds, which no other transaction waits
  -- for (sweeps and renewals skip rows another transaction holds).
  IF any_gone THEN
    DELETE FROM credit_holds WHERE id IN (SELECT x.h FROM unnest(ops) AS x
      WHERE x.k = 'r' OR (x.k = 'c' AND x.h IS NOT NULL AND x.ls IS NOT TRUE));
  END IF;
  -- charges of calls admitted against this node's leases shrink them by what they charge, before
  -- any lock (this node's own rows, like the deletes above). A lease that ran out (its node could
  -- not renew it, and a sweep returned it) shrinks nothing: those charges are decided below as
  -- charges without a hold, sparing every live hold.
  IF any_lease THEN
    WITH d AS (SELECT x.h, sum(x.n) AS n, max(x.l) AS l FROM unnest(ops) AS x WHERE x.k = 'c' AND x.ls GROUP BY x.h),
      upd AS (UPDATE credit_holds c SET amount = c.amount - d.n,
          expires_at = greatest(c.expires_at, (extract(epoch from clock_timestamp()) * 1000)::bigint + coalesce(d.l, 0))
        FROM d
        WHERE c.id = d.h AND c.amount >= d.n AND c.expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint
        RETURNING c.id)
    SELECT coalesce(array_agg(upd.id), '{}') INTO live_leases FROM upd;
  END IF;
  IF accs IS NULL THEN
    RETURN;
  END IF;
  -- Idempotency-Key charges record their request ids (no account lock needed): one a retry's
  -- takeover voided first is not applied; if that void is still in flight, this waits for it
  IF any_idem THEN
    WITH ins AS (
      INSERT INTO idempotent_charges (request_id, account_id, state, created_at)
        SELECT x.rid, x.a, 'charged', x.at FROM unnest(ops) AS x WHERE x.k = 'c' AND x.idem
        ON CONFLICT (request_id) DO NOTHING RETURNING request_id)
    SELECT coalesce(array_agg(ins.request_id), '{}') INTO claimed_ids FROM ins;
  END IF;
  IF lock_accs IS NOT NULL THEN
    FOREACH acc IN ARRAY lock_accs LOOP
      PERFORM pg_advisory_xact_lock(7263012, hashtext(acc));
    END LOOP;
  END IF;
  IF row_accs IS NOT NULL THEN
    PERFORM 1 FROM accounts a WHERE a.id = ANY(row_accs) ORDER BY a.id COLLATE "C" FOR UPDATE;
  END IF;
  now_ms := (extract(epoch from clock_timestamp()) * 1000)::bigint;
  IF lock_accs IS NOT NULL THEN
    -- the holds of dead nodes, expired: swept without waiting for any row another transaction holds
    DELETE FROM credit_holds WHERE id IN (SELECT c.id FROM credit_holds c
      WHERE c.account_id = ANY(lock_accs) AND c.expires_at <= now_ms FOR UPDATE SKIP LOCKED);
  END IF;
  -- the one snapshot every decision below is made from
  SELECT array_agg(a.balance ORDER BY u.ord), array_agg(coalesce((SELECT sum(c.amount) FROM credit_holds c
        WHERE c.account_id = u.id AND c.expires_at > now_ms), 0) ORDER BY u.ord)
    INTO bals, helds
    FROM unnest(accs) WITH ORDINALITY AS u(id, ord) LEFT JOIN accounts a ON a.id = u.id;
  used_of := '{}';
  IF any_lim THEN
    SELECT coalesce(jsonb_object_agg(q.key, q.used), '{}') INTO used_of FROM (
      SELECT DISTINCT ON (x.key) x.key, coalesce((SELECT -sum(l.amount) FROM ledger l WHERE l.key_id = x.key
          AND l.kind = 'charge' AND l.created_at >= x.since), 0)
        + coalesce((SELECT sum(c.amount) FROM credit_holds c WHERE c.key_id = x.key AND c.expires_at > now_ms), 0) AS used
      FROM unnest(ops) AS x WHERE x.lim IS NOT NULL AND (x.k = 'h' OR (x.k = 'c' AND x.h IS NULL))) q;
  END IF;

  FOREACH op IN ARRAY ops LOOP
    CONTINUE WHEN op.k = 'r';
    IF op.a IS DISTINCT FROM cur THEN
      IF cur IS NOT NULL THEN
        bals[pos] := bal;
        helds[pos] := held;
      END IF;
      cur := op.a;
      pos := array_position(accs, cur);
      bal := bals[pos];
      held := helds[pos];
    END IF;
    out_ix := out_ix || op.i;
    IF op.k = 'c' THEN
      ok := op.idem IS NOT TRUE OR op.rid = ANY(claimed_ids);
      out_claimed := out_claimed || ok;
      IF op.h IS NOT NULL AND (op.ls IS NOT TRUE OR op.h = ANY(live_leases)) THEN
        -- a held call: its hold (deleted above, so not in the snapshot), or its lease (shrunk
        -- above by what it charges), kept its credits
        ok := ok AND bal IS NOT NULL AND bal - op.n >= 0;
      ELSE
        ok := ok AND bal IS NOT NULL AND bal - op.n >= held
          AND (op.lim IS NULL OR (used_of->>op.key)::bigint + op.n <= op.lim);
      END IF;
      IF ok THEN
        bal := bal - op.n;
        charged_ix := charged_ix || op.i;
        IF op.key IS NOT NULL AND used_of ? op.key THEN
          used_of := jsonb_set(used_of, ARRAY[op.key], to_jsonb((used_of->>op.key)::bigint + op.n));
        END IF;
        out_rem := out_rem || bal::double precision;
      ELSE
        out_rem := out_rem || NULL::double precision;
      END IF;
      -- a leased charge says whether its lease lived (1: shrunk, and renewed for op.l)
      out_used := out_used || CASE WHEN op.ls AND op.h = ANY(live_leases) THEN 1::double precision END;
      CONTINUE;
    END IF;
    out_claimed := out_claimed || true;
    IF op.k = 'l' THEN
      -- a lease: up to op.n, at most a twentieth of what the balance less every live hold leaves,
      -- granted only if that is at least op.mn (what is granted comes back in key_used): an
      -- account close to empty gets no leases, so no node keeps its last credits from the others
      out_used := out_used || NULL::double precision;
      grant_n := CASE WHEN bal IS NULL THEN 0 ELSE least(op.n, (bal - held) / 20) END;
      IF grant_n < greatest(op.mn, 1) THEN
        out_rem := out_rem || NULL::double precision;
        CONTINUE;
      END IF;
      held := held + grant_n;
      out_rem := out_rem || (bal - held)::double precision;
      out_used[cardinality(out_used)] := grant_n::double precision;
      new_ids := new_ids || op.h;
      new_accs := new_accs || cur;
      new_amts := new_amts || grant_n;
      new_keys := new_keys || NULL::text;
      new_exp := new_exp || (now_ms + op.l);
      CONTINUE;
    END IF;
    -- a hold
    IF op.lim IS NOT NULL THEN
      spent := (used_of->>op.key)::bigint;
      IF spent + op.n > op.lim THEN
        out_rem := out_rem || NULL::double precision;
        out_used := out_used || spent::double precision;
        CONTINUE;
      END IF;
    END IF;
    out_used := out_used || NULL::double precision;
    IF bal IS NULL OR bal - held < op.n THEN
      out_rem := out_rem || NULL::double precision;
      CONTINUE;
    END IF;
    held := held + op.n;
    out_rem := out_rem || (bal - held)::double precision;
    IF op.lim IS NOT NULL THEN
      used_of := jsonb_set(used_of, ARRAY[op.key], to_jsonb((used_of->>op.key)::bigint + op.n));
    END IF;
    new_ids := new_ids || op.h;
    new_accs := new_accs || cur;
    new_amts := new_amts || op.n;
    new_keys := new_keys || CASE WHEN op.lim IS NULL THEN NULL ELSE op.key END;
    new_exp := new_exp || (now_ms + op.l);
  END LOOP;

  IF cardinality(charged_ix) > 0 THEN
    UPDATE accounts a SET balance = a.balance - d.total FROM (
      SELECT x.a, sum(x.n) AS total FROM unnest(ops) AS x WHERE x.k = 'c' AND x.i = ANY(charged_ix) GROUP BY x.a) d
    WHERE a.id = d.a;
    INSERT INTO ledger (account_id, key_id, amount, kind, function, request_id, provider, cached, created_at,
        input_tokens, output_tokens)
      SELECT x.a, x.key, -x.n, 'charge', x.fn, x.rid, x.prov, coalesce(x.cached, false), x.at, x.ti, x.tout
      FROM unnest(ops) AS x WHERE x.k = 'c' AND x.i = ANY(charged_ix) ORDER BY x.i;
    INSERT INTO usage_daily AS u (account_id, day, kind, function, provider, requests, credits, cached,
        input_tokens, output_tokens)
      SELECT x.a, x.day, 'charge', x.fn, coalesce(x.prov, ''), count(*), sum(x.n),
        count(*) FILTER (WHERE x.cached), coalesce(sum(x.ti), 0), coalesce(sum(x.tout), 0)
      FROM unnest(ops) AS x WHERE x.k = 'c' AND x.i = ANY(charged_ix)
      GROUP BY x.a, x.day, x.fn, coalesce(x.prov, '')
      ON CONFLICT (account_id, day, kind, function, provider) DO UPDATE SET requests = u.requests + excluded.requests,
        credits = u.credits + excluded.credits, cached = u.cached + excluded.cached,
        input_tokens = u.input_tokens + excluded.input_tokens, output_tokens = u.output_tokens + excluded.output_tokens;
  END IF;
  IF cardinality(new_ids) > 0 THEN
    INSERT INTO credit_holds (id, account_id, amount, expires_at, key_id)
      SELECT * FROM unnest(new_ids, new_accs, new_amts, new_exp, new_keys);
  END IF;
  RETURN QUERY SELECT * FROM unnest(out_ix, out_rem, out_used, out_claimed);
END
$$;
--> statement-breakpoint
ALTER FUNCTION credit_batch(jsonb) SET enable_bitmapscan = off;
--> statement-breakpoint
ALTER FUNCTION credit_batch(jsonb) SET enable_seqscan = off;
