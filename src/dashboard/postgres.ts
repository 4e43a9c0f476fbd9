import type { SQL } from "bun";
import type { AuditBy } from "../audit/interface";
import { appendAuditIn } from "../audit/postgres";
import { type PgStorage, pgCall } from "../storage/postgres";
import { loginEntry, passwordEntry, planEntry } from "./audit";
import type { AccountSummary, DashboardStore, LedgerRow, Login, Session, SessionLimits } from "./interface";
import { sessionExpired } from "./security";

const TOUCH_EVERY_MS = 60_000;

type LoginRow = { account_id: string; email: string; password_hash: string };
const login = (r: LoginRow | undefined): Login | null =>
  r ? { accountId: r.account_id, email: r.email, passwordHash: r.password_hash } : null;

/** The login's email and when its password last changed (null: no login). */
async function changedAt(tx: SQL, accountId: string): Promise<{ email: string; changedAt: number } | null> {
  const [r] = await tx`SELECT email, password_changed_at FROM logins WHERE account_id = ${accountId} FOR UPDATE`;
  return r ? { email: r.email, changedAt: Number(r.password_changed_at) } : null;
}

/** The dashboard's store in PostgreSQL (drizzle/pg 0001_dashboard), shared by every node. */
export class PostgresDashboardStore implements DashboardStore {
  constructor(private pg: PgStorage) {}

  loginByEmail(email: string): Promise<Login | null> {
    return pgCall(this.pg, async () => {
      const [r] = await this.pg.sql`SELECT account_id, email, password_hash FROM logins WHERE email = ${email.toLowerCase()}`;
      return login(r);
    });
  }

  loginOf(accountId: string): Promise<Login | null> {
    return pgCall(this.pg, async () => {
      const [r] = await this.pg.sql`SELECT account_id, email, password_hash FROM logins WHERE account_id = ${accountId}`;
      return login(r);
    });
  }

  setLogin(accountId: string, email: string, passwordHash: string, audit?: AuditBy): Promise<boolean> {
    const e = email.toLowerCase();
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const [taken] = await tx`SELECT 1 AS x FROM logins WHERE email = ${e} AND account_id <> ${accountId}`;
        if (taken) return false;
        const before = await changedAt(tx, accountId);
        const at = Date.now();
        // two nodes giving one email to two accounts at once: the unique index refuses the second
        await tx`
          INSERT INTO logins (account_id, email, password_hash, password_changed_at)
          VALUES (${accountId}, ${e}, ${passwordHash}, ${at})
          ON CONFLICT (account_id) DO UPDATE SET email = excluded.email, password_hash = excluded.password_hash,
            password_changed_at = excluded.password_changed_at`;
        await tx`DELETE FROM dashboard_sessions WHERE account_id = ${accountId}`;
        if (audit) await appendAuditIn(tx, loginEntry(audit, accountId, before, { email: e, changedAt: at }));
        return true;
      }),
    );
  }

  setPassword(accountId: string, passwordHash: string, audit?: AuditBy): Promise<void> {
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const before = await changedAt(tx, accountId);
        const at = Date.now();
        await tx`UPDATE logins SET password_hash = ${passwordHash}, password_changed_at = ${at} WHERE account_id = ${accountId}`;
        await tx`DELETE FROM dashboard_sessions WHERE account_id = ${accountId}`;
        if (audit) await appendAuditIn(tx, passwordEntry(audit, accountId, before?.changedAt ?? null, at));
      }),
    );
  }

  createSession(s: Session): Promise<void> {
    return pgCall(this.pg, async () => {
      await this.pg.sql`
        INSERT INTO dashboard_sessions (token_hash, account_id, kind, created_at, last_seen_at)
        VALUES (${s.tokenHash}, ${s.accountId}, ${s.kind}, ${s.createdAt}, ${s.lastSeenAt})`;
    });
  }

  touchSession(tokenHash: string, now: number, limits: SessionLimits): Promise<Session | null> {
    return pgCall(this.pg, async () => {
      const [r] = await this.pg.sql`
        SELECT token_hash, account_id, kind, created_at, last_seen_at FROM dashboard_sessions WHERE token_hash = ${tokenHash}`;
      if (!r) return null;
      const s: Session = {
        tokenHash: r.token_hash,
        accountId: r.account_id,
        kind: r.kind,
        createdAt: Number(r.created_at),
        lastSeenAt: Number(r.last_seen_at),
      };
      if (sessionExpired(s, now, limits)) {
        await this.deleteSession(tokenHash);
        return null;
      }
      if (now - s.lastSeenAt > TOUCH_EVERY_MS) {
        await this.pg.sql`UPDATE dashboard_sessions SET last_seen_at = ${now} WHERE token_hash = ${tokenHash}`;
        s.lastSeenAt = now;
      }
      return s;
    });
  }

  deleteSession(tokenHash: string): Promise<void> {
    return pgCall(this.pg, async () => {
      await this.pg.sql`DELETE FROM dashboard_sessions WHERE token_hash = ${tokenHash}`;
    });
  }

  sweepSessions(now: number, limits: SessionLimits): Promise<number> {
    const [a, o] = [limits.account, limits.operator];
    return pgCall(this.pg, async () => {
      const gone = await this.pg.sql`
        DELETE FROM dashboard_sessions
        WHERE (kind = 'operator' AND (last_seen_at < ${now - o.idleMs} OR created_at < ${now - o.lifetimeMs}))
           OR (kind <> 'operator' AND (last_seen_at < ${now - a.idleMs} OR created_at < ${now - a.lifetimeMs}))
        RETURNING token_hash`;
      return gone.length;
    });
  }

  searchAccounts(q: string, limit: number): Promise<AccountSummary[]> {
    const like = `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return pgCall(this.pg, async () => {
      const rows = await this.pg.sql`
        SELECT a.id, a.name, l.email, a.plan, a.balance, a.created_at FROM accounts a
        LEFT JOIN logins l ON l.account_id = a.id
        WHERE ${like} = '%%' OR lower(a.id) LIKE ${like} OR lower(coalesce(a.name, '')) LIKE ${like}
          OR coalesce(l.email, '') LIKE ${like}
        ORDER BY a.created_at DESC LIMIT ${limit}`;
      return rows.map((r: Record<string, unknown>) => ({
        id: r.id as string,
        name: (r.name as string | null) ?? null,
        email: (r.email as string | null) ?? null,
        plan: r.plan as string,
        balance: Number(r.balance),
        created_at: new Date(Number(r.created_at)).toISOString(),
      }));
    });
  }

  setPlan(accountId: string, plan: string, audit?: AuditBy): Promise<boolean> {
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const [before] = await tx`SELECT plan FROM accounts WHERE id = ${accountId} FOR UPDATE`;
        if (!before) return false;
        await tx`UPDATE accounts SET plan = ${plan} WHERE id = ${accountId}`;
        await tx`UPDATE api_keys SET plan = ${plan} WHERE account_id = ${accountId}`;
        if (audit) await appendAuditIn(tx, planEntry(audit, accountId, before.plan, plan));
        return true;
      }),
    );
  }

  ledgerPage(accountId: string, limit: number, offset: number): Promise<{ rows: LedgerRow[]; total: number }> {
    return pgCall(this.pg, async () => {
      const [{ n }] = await this.pg.sql`SELECT count(*) AS n FROM ledger WHERE account_id = ${accountId}`;
      const rows = await this.pg.sql`
        SELECT public_id, kind, amount, function, key_id, request_id, reason, input_tokens, output_tokens, created_at FROM ledger
        WHERE account_id = ${accountId} ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`;
      return {
        total: Number(n),
        rows: rows.map((r: Record<string, unknown>) => ({
          id: r.public_id as string,
          kind: r.kind as LedgerRow["kind"],
          amount: Number(r.amount),
          function: (r.function as string | null) ?? null,
          key_id: (r.key_id as string | null) ?? null,
          request_id: (r.request_id as string | null) ?? null,
          reason: (r.reason as string | null) ?? null,
          input_tokens: r.input_tokens === null || r.input_tokens === undefined ? null : Number(r.input_tokens),
          output_tokens: r.output_tokens === null || r.output_tokens === undefined ? null : Number(r.output_tokens),
          created_at: new Date(Number(r.created_at)).toISOString(),
        })),
      };
    });
  }
}
