-- Node-local credit journal (issue 40, docs/many-nodes.md#credit-journal). A node admitting calls
-- against its lease commits their charges to a SQLite file of its own and ships them here in
-- batches, through credit_batch(). New:
--   credit_holds.node_id: the node a lease (or allowance) row belongs to, so a node restarting, or
--     an operator, finds its rows; credit_holds.lease_of: on an allowance row, its lease's id.
--   An ALLOWANCE is a hold row carved with a lease (op "ax" credits, row "xa", expires_at the
--     largest bigint: it never runs out by time). The node keeps its unshipped journal charges of
--     the lease at or under it. When the lease lapses (its node died or was cut off), the lease's row
--     stops counting at its expiry as before, and the allowance stays, in doubt, until the node's
--     journal is shipped (its charges come out of it) and the node gives it back, or an operator
--     forfeits it (`textai credits journal forfeit`).
--   credit_journal_shipped: per journal file (its random id) the highest sequence number shipped,
--     updated in the batch's transaction: an entry at or below it is never applied again (a node
--     killed between PostgreSQL's commit and its local delete reships it).
-- New operation attributes: charge {"sq": sequence, "jr": journal id, "nd": node id, "xa":
-- allowance id} (with "h" the lease id and "ls" true); lease {"ax": allowance, "xa": its id, "nd"}.
-- A charge's key_used: 1 its lease lived, 3 its lease was gone and its allowance covered it, 2 a
-- journal entry applied before (nothing done).
ALTER TABLE credit_holds ADD COLUMN node_id text;
--> statement-breakpoint
ALTER TABLE credit_holds ADD COLUMN lease_of uuid;
--> statement-breakpoint
CREATE INDEX credit_holds_node_idx ON credit_holds (node_id) WHERE node_id IS NOT NULL;
--> statement-breakpoint
CREATE TABLE credit_journal_shipped (
  journal_id text PRIMARY KEY,
  node_id text NOT NULL,
  shipped_seq bigint NOT NULL,
  shipped_at bigint NOT NULL
);
--> statement-breakpoint
ALTER TYPE credit_batch_op ADD ATTRIBUTE sq bigint;
--> statement-breakpoint
ALTER TYPE credit_batch_op ADD ATTRIBUTE jr text;
--> statement-breakpoint
ALTER TYPE credit_batch_op ADD ATTRIBUTE nd text;
--> statement-breakpoint
ALTER TYPE credit_batch_op ADD ATTRIBUTE xa uuid;
--> statement-breakpoint
ALTER TYPE credit_batch_op ADD ATTRIBUTE ax bigint;
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
  -- journal (migration 0020): charges shipped from nodes' journals
  any_journal boolean;
  shipped_of jsonb := '{}';
  dup_ix integer[] := '{}';
  live_allow uuid[] := '{}';
  new_nodes text[] := '{}';
  new_lease_of uuid[] := '{}';
BEGIN
  SELECT array_agg(x ORDER BY x.a COLLATE "C", x.k, x.i),
      array_agg(DISTINCT x.a COLLATE "C" ORDER BY x.a COLLATE "C") FILTER (WHERE x.k IN ('h', 'l', 'c')),
      array_agg(DISTINCT x.a COLLATE "C" ORDER BY x.a COLLATE "C") FILTER (WHERE x.k IN ('h', 'l') OR (x.k = 'c' AND (x.h IS NULL OR x.ls))),
      array_agg(DISTINCT x.a COLLATE "C" ORDER BY x.a COLLATE "C") FILTER (WHERE x.k = 'c'),
      coalesce(bool_or(x.k = 'r' OR (x.k = 'c' AND x.h IS NOT NULL AND x.ls IS NOT TRUE)), false),
      coalesce(bool_or(x.k = 'c' AND x.ls), false),
      coalesce(bool_or(x.k = 'c' AND x.idem), false),
      coalesce(bool_or(x.lim IS NOT NULL AND (x.k = 'h' OR (x.k = 'c' AND x.h IS NULL))), false),
      coalesce(bool_or(x.k = 'c' AND x.sq IS NOT NULL), false)
    INTO ops, accs, lock_accs, row_accs, any_gone, any_lease, any_idem, any_lim, any_journal
    FROM jsonb_populate_recordset(NULL::credit_batch_op, p_ops) AS x;
  IF ops IS NULL THEN
    RETURN;
  END IF;
  -- charges shipped from a node's journal: each journal's last shipped sequence, its row locked
  -- (a node and an operator shipping the same file wait for each other); an entry at or below it
  -- was applied by an earlier batch (its node died before deleting it) and is not applied again
  IF any_journal THEN
    INSERT INTO credit_journal_shipped (journal_id, node_id, shipped_seq, shipped_at)
      SELECT DISTINCT ON (x.jr) x.jr, x.nd, 0, (extract(epoch from clock_timestamp()) * 1000)::bigint
      FROM unnest(ops) AS x WHERE x.k = 'c' AND x.sq IS NOT NULL
      ON CONFLICT (journal_id) DO NOTHING;
    SELECT coalesce(jsonb_object_agg(s.journal_id, s.shipped_seq), '{}') INTO shipped_of FROM (
      SELECT j.journal_id, j.shipped_seq FROM credit_journal_shipped j
      WHERE j.journal_id IN (SELECT x.jr FROM unnest(ops) AS x WHERE x.k = 'c' AND x.sq IS NOT NULL)
      ORDER BY j.journal_id COLLATE "C" FOR UPDATE) s;
    SELECT coalesce(array_agg(x.i), '{}') INTO dup_ix FROM unnest(ops) AS x
      WHERE x.k = 'c' AND x.sq IS NOT NULL AND x.sq <= (shipped_of->>x.jr)::bigint;
    UPDATE credit_journal_shipped j SET shipped_seq = greatest(j.shipped_seq, m.sq),
        shipped_at = (extract(epoch from clock_timestamp()) * 1000)::bigint
      FROM (SELECT x.jr, max(x.sq) AS sq FROM unnest(ops) AS x WHERE x.k = 'c' AND x.sq IS NOT NULL GROUP BY x.jr) m
      WHERE j.journal_id = m.jr;
    IF cardinality(dup_ix) > 0 THEN
      ops := ARRAY(SELECT ops[s] FROM generate_subscripts(ops, 1) AS s WHERE NOT ((ops[s]).i = ANY(dup_ix)) ORDER BY s);
    END IF;
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
  -- journal charges of a lease that is gone (it lapsed: its node was cut off or died) come out of
  -- the lease's allowance, the in-doubt hold kept for them (this node's own row, never expiring)
  IF any_journal THEN
    WITH d AS (SELECT x.xa, sum(x.n) AS n FROM unnest(ops) AS x
        WHERE x.k = 'c' AND x.ls AND x.xa IS NOT NULL AND NOT (x.h = ANY(live_leases)) GROUP BY x.xa),
      upd AS (UPDATE credit_holds c SET amount = c.amount - d.n FROM d WHERE c.id = d.xa AND c.amount >= d.n
        RETURNING c.id)
    SELECT coalesce(array_agg(upd.id), '{}') INTO live_allow FROM upd;
  END IF;
  IF accs IS NULL THEN
    RETURN QUERY SELECT u.i, NULL::double precision, 2::double precision, true FROM unnest(dup_ix) AS u(i);
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
      IF op.h IS NOT NULL AND (op.ls IS NOT TRUE OR op.h = ANY(live_leases) OR op.xa = ANY(live_allow)) THEN
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
      -- (3: the lease was gone, its allowance covered a journal charge)
      out_used := out_used || CASE WHEN op.ls AND op.h = ANY(live_leases) THEN 1::double precision
        WHEN op.xa = ANY(live_allow) THEN 3::double precision END;
      CONTINUE;
    END IF;
    out_claimed := out_claimed || true;
    IF op.k = 'l' THEN
      -- a lease: up to op.n, at most a twentieth of what the balance less every live hold leaves,
      -- granted only if that is at least op.mn (what is granted comes back in key_used): an
      -- account close to empty gets no leases, so no node keeps its last credits from the others
      -- With a journal (op.ax > 0, migration 0020), an allowance of op.ax more is carved with it
      -- (row op.xa, never expiring): what the node's unshipped journal charges of the lease never
      -- exceed, kept in doubt when the lease lapses until the journal is shipped or forfeited. The
      -- lease is then what the twentieth leaves after the allowance, and at least the allowance.
      out_used := out_used || NULL::double precision;
      grant_n := CASE WHEN bal IS NULL THEN 0 ELSE least(op.n, (bal - held) / 20 - coalesce(op.ax, 0)) END;
      IF grant_n < greatest(op.mn, coalesce(op.ax, 0), 1) THEN
        out_rem := out_rem || NULL::double precision;
        CONTINUE;
      END IF;
      held := held + grant_n + coalesce(op.ax, 0);
      out_rem := out_rem || (bal - held)::double precision;
      out_used[cardinality(out_used)] := grant_n::double precision;
      new_ids := new_ids || op.h;
      new_accs := new_accs || cur;
      new_amts := new_amts || grant_n;
      new_keys := new_keys || NULL::text;
      new_exp := new_exp || (now_ms + op.l);
      new_nodes := new_nodes || op.nd;
      new_lease_of := new_lease_of || NULL::uuid;
      IF coalesce(op.ax, 0) > 0 THEN
        new_ids := new_ids || op.xa;
        new_accs := new_accs || cur;
        new_amts := new_amts || op.ax;
        new_keys := new_keys || NULL::text;
        new_exp := new_exp || 9223372036854775807;
        new_nodes := new_nodes || op.nd;
        new_lease_of := new_lease_of || op.h;
      END IF;
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
    new_nodes := new_nodes || NULL::text;
    new_lease_of := new_lease_of || NULL::uuid;
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
    INSERT INTO credit_holds (id, account_id, amount, expires_at, key_id, node_id, lease_of)
      SELECT * FROM unnest(new_ids, new_accs, new_amts, new_exp, new_keys, new_nodes, new_lease_of);
  END IF;
  -- journal entries applied before: answered as such (key_used 2), nothing done
  RETURN QUERY SELECT * FROM unnest(out_ix, out_rem, out_used, out_claimed)
    UNION ALL SELECT u.i, NULL::double precision, 2::double precision, true FROM unnest(dup_ix) AS u(i);
END
$$;
--> statement-breakpoint
ALTER FUNCTION credit_batch(jsonb) SET enable_bitmapscan = off;
--> statement-breakpoint
ALTER FUNCTION credit_batch(jsonb) SET enable_seqscan = off;
