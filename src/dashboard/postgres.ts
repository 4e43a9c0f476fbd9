import type { SQL } from "bun";
import type { AuditBy, AuditDraft } from "../audit/interface";
import { appendAuditIn } from "../audit/postgres";
import { newId } from "../ids";
import { pgCall } from "../storage/postgres";
import { loginEntry, passwordEntry, planEntry } from "./audit";
import type { AccountSummary, DashboardStore, LedgerRow, Login, Session, SessionLimits } from "./interface";
import type { Role } from "./members";
import { PostgresMemberStore } from "./members-postgres";
import { sessionExpired } from "./security";

const TOUCH_EVERY_MS = 60_000;

type LoginRow = { account_id: string; id: string; role: Role; email: string; password_hash: string };
const login = (r: LoginRow | undefined): Login | null =>
  r ? { accountId: r.account_id, memberId: r.id, role: r.role, email: r.email, passwordHash: r.password_hash } : null;

/** The account's first owner (the login the account was made with), locked in `tx`. */
async function firstOwner(tx: SQL, accountId: string): Promise<(LoginRow & { password_changed_at: unknown }) | undefined> {
  const [r] = await tx`SELECT account_id, id, role, email, password_hash, password_changed_at FROM members
    WHERE account_id = ${accountId} AND role = 'owner' ORDER BY created_at, id LIMIT 1 FOR UPDATE`;
  return r;
}

/** The dashboard's store in PostgreSQL (drizzle/pg 0001_dashboard, 0018_members), shared by every node. */
export class PostgresDashboardStore extends PostgresMemberStore implements DashboardStore {
  loginByEmail(email: string): Promise<Login | null> {
    return pgCall(this.pg, async () => {
      const [r] = await this.pg
        .sql`SELECT account_id, id, role, email, password_hash FROM members WHERE email = ${email.toLowerCase()}`;
      return login(r);
    });
  }

  loginOf(accountId: string): Promise<Login | null> {
    return pgCall(this.pg, async () => {
      const [r] = await this.pg.sql`SELECT account_id, id, role, email, password_hash FROM members
        WHERE account_id = ${accountId} AND role = 'owner' ORDER BY created_at, id LIMIT 1`;
      return login(r);
    });
  }

  setLogin(accountId: string, email: string, passwordHash: string, audit?: AuditBy): Promise<boolean> {
    const e = email.toLowerCase();
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const owner = await firstOwner(tx, accountId);
        const [taken] = await tx`SELECT 1 AS x FROM members WHERE email = ${e} AND id <> ${owner?.id ?? ""}`;
        if (taken) return false;
        const before = owner ? { email: owner.email, changedAt: Number(owner.password_changed_at) } : null;
        const at = Date.now();
        // two nodes giving one email to two accounts at once: the unique index refuses the second
        if (owner)
          await tx`UPDATE members SET email = ${e}, password_hash = ${passwordHash}, password_changed_at = ${at} WHERE id = ${owner.id}`;
        else
          await tx`INSERT INTO members (id, account_id, email, role, password_hash, created_at, password_changed_at)
            VALUES (${newId("mem")}, ${accountId}, ${e}, 'owner', ${passwordHash}, ${at}, ${at})`;
        await tx`DELETE FROM dashboard_sessions WHERE account_id = ${accountId}`;
        if (audit) await appendAuditIn(tx, loginEntry(audit, accountId, before, { email: e, changedAt: at }));
        return true;
      }),
    );
  }

  setPassword(accountId: string, passwordHash: string, audit?: AuditBy, memberId?: string): Promise<void> {
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const id = memberId ?? (await firstOwner(tx, accountId))?.id;
        if (!id) return;
        const [before] =
          await tx`SELECT password_changed_at FROM members WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;
        if (!before) return;
        const at = Date.now();
        await tx`UPDATE members SET password_hash = ${passwordHash}, password_changed_at = ${at} WHERE id = ${id}`;
        await tx`DELETE FROM dashboard_sessions WHERE member_id = ${id}`;
        if (audit) await appendAuditIn(tx, passwordEntry(audit, accountId, Number(before.password_changed_at), at));
      }),
    );
  }

  createSession(s: Session, entry?: AuditDraft): Promise<void> {
    const insert = (tx: SQL) => tx`
        INSERT INTO dashboard_sessions (token_hash, account_id, kind, created_at, last_seen_at, member_id, actor)
        VALUES (${s.tokenHash}, ${s.accountId}, ${s.kind}, ${s.createdAt}, ${s.lastSeenAt}, ${s.memberId ?? null}, ${s.actor ?? null})`;
    return pgCall(this.pg, async () => {
      if (!entry) {
        await insert(this.pg.sql);
        return;
      }
      await this.pg.sql.begin(async (tx) => {
        await insert(tx);
        await appendAuditIn(tx, entry);
      });
    });
  }

  touchSession(tokenHash: string, now: number, limits: SessionLimits): Promise<Session | null> {
    return pgCall(this.pg, async () => {
      const [r] = await this.pg.sql`
        SELECT token_hash, account_id, member_id, actor, kind, created_at, last_seen_at FROM dashboard_sessions WHERE token_hash = ${tokenHash}`;
      if (!r) return null;
      const s: Session = {
        tokenHash: r.token_hash,
        accountId: r.account_id,
        memberId: r.member_id ?? null,
        actor: r.actor ?? null,
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
        LEFT JOIN members l ON l.id = (SELECT m.id FROM members m WHERE m.account_id = a.id AND m.role = 'owner'
          ORDER BY m.created_at, m.id LIMIT 1)
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
