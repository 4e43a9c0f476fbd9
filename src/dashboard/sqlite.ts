import type { Database } from "bun:sqlite";
import type { AuditBy } from "../audit/interface";
import { appendAudit } from "../audit/sqlite";
import { loginEntry, passwordEntry, planEntry } from "./audit";
import type { AccountSummary, DashboardStore, LedgerRow, Login, Session, SessionLimits } from "./interface";
import { sessionExpired } from "./security";

const TOUCH_EVERY_MS = 60_000;

/** The dashboard's store on the embedded SQLite file (migration 0007_dashboard). */
export class SqliteDashboardStore implements DashboardStore {
  constructor(private sqlite: Database) {}

  loginByEmail(email: string): Login | null {
    return this.sqlite
      .query<Login, [string]>("SELECT account_id AS accountId, email, password_hash AS passwordHash FROM logins WHERE email = ?")
      .get(email.toLowerCase());
  }

  loginOf(accountId: string): Login | null {
    return this.sqlite
      .query<Login, [string]>(
        "SELECT account_id AS accountId, email, password_hash AS passwordHash FROM logins WHERE account_id = ?",
      )
      .get(accountId);
  }

  setLogin(accountId: string, email: string, passwordHash: string, audit?: AuditBy): boolean {
    const e = email.toLowerCase();
    return this.sqlite
      .transaction(() => {
        const other = this.loginByEmail(e);
        if (other && other.accountId !== accountId) return false;
        const before = this.changedAt(accountId);
        const at = Date.now();
        this.sqlite
          .query(
            "INSERT INTO logins (account_id, email, password_hash, password_changed_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (account_id) DO UPDATE SET email = excluded.email, password_hash = excluded.password_hash, password_changed_at = excluded.password_changed_at",
          )
          .run(accountId, e, passwordHash, at);
        this.sqlite.query("DELETE FROM dashboard_sessions WHERE account_id = ?").run(accountId);
        if (audit) appendAudit(this.sqlite, loginEntry(audit, accountId, before, { email: e, changedAt: at }));
        return true;
      })
      .immediate();
  }

  setPassword(accountId: string, passwordHash: string, audit?: AuditBy): void {
    this.sqlite
      .transaction(() => {
        const before = this.changedAt(accountId);
        const at = Date.now();
        this.sqlite
          .query("UPDATE logins SET password_hash = ?, password_changed_at = ? WHERE account_id = ?")
          .run(passwordHash, at, accountId);
        this.sqlite.query("DELETE FROM dashboard_sessions WHERE account_id = ?").run(accountId);
        if (audit) appendAudit(this.sqlite, passwordEntry(audit, accountId, before?.changedAt ?? null, at));
      })
      .immediate();
  }

  /** The login's email and when its password last changed (null: no login). */
  private changedAt(accountId: string): { email: string; changedAt: number } | null {
    return this.sqlite
      .query<{ email: string; changedAt: number }, [string]>(
        "SELECT email, password_changed_at AS changedAt FROM logins WHERE account_id = ?",
      )
      .get(accountId);
  }

  createSession(s: Session): void {
    this.sqlite
      .query("INSERT INTO dashboard_sessions (token_hash, account_id, kind, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)")
      .run(s.tokenHash, s.accountId, s.kind, s.createdAt, s.lastSeenAt);
  }

  touchSession(tokenHash: string, now: number, limits: SessionLimits): Session | null {
    const s = this.sqlite
      .query<Session, [string]>(
        "SELECT token_hash AS tokenHash, account_id AS accountId, kind, created_at AS createdAt, last_seen_at AS lastSeenAt FROM dashboard_sessions WHERE token_hash = ?",
      )
      .get(tokenHash);
    if (!s) return null;
    if (sessionExpired(s, now, limits)) {
      this.deleteSession(tokenHash);
      return null;
    }
    if (now - s.lastSeenAt > TOUCH_EVERY_MS) {
      this.sqlite.query("UPDATE dashboard_sessions SET last_seen_at = ? WHERE token_hash = ?").run(now, tokenHash);
      s.lastSeenAt = now;
    }
    return s;
  }

  deleteSession(tokenHash: string): void {
    this.sqlite.query("DELETE FROM dashboard_sessions WHERE token_hash = ?").run(tokenHash);
  }

  sweepSessions(now: number, limits: SessionLimits): number {
    const [a, o] = [limits.account, limits.operator];
    return this.sqlite
      .query(
        "DELETE FROM dashboard_sessions WHERE (kind = 'operator' AND (last_seen_at < ?1 OR created_at < ?2)) OR (kind <> 'operator' AND (last_seen_at < ?3 OR created_at < ?4))",
      )
      .run(now - o.idleMs, now - o.lifetimeMs, now - a.idleMs, now - a.lifetimeMs).changes;
  }

  searchAccounts(q: string, limit: number): AccountSummary[] {
    const like = `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return this.sqlite
      .query<AccountSummary & { created: number }, [string, number]>(
        "SELECT a.id, a.name, l.email, a.plan, a.balance, a.created_at AS created FROM accounts a LEFT JOIN logins l ON l.account_id = a.id WHERE ?1 = '%%' OR lower(a.id) LIKE ?1 ESCAPE '\\' OR lower(coalesce(a.name, '')) LIKE ?1 ESCAPE '\\' OR coalesce(l.email, '') LIKE ?1 ESCAPE '\\' ORDER BY a.created_at DESC LIMIT ?2",
      )
      .all(like, limit)
      .map(({ created, ...a }) => ({ ...a, created_at: new Date(created).toISOString() }));
  }

  setPlan(accountId: string, plan: string, audit?: AuditBy): boolean {
    return this.sqlite
      .transaction(() => {
        const before = this.sqlite.query<{ plan: string }, [string]>("SELECT plan FROM accounts WHERE id = ?").get(accountId);
        if (!before) return false;
        this.sqlite.query("UPDATE accounts SET plan = ? WHERE id = ?").run(plan, accountId);
        this.sqlite.query("UPDATE api_keys SET plan = ? WHERE account_id = ?").run(plan, accountId);
        if (audit) appendAudit(this.sqlite, planEntry(audit, accountId, before.plan, plan));
        return true;
      })
      .immediate();
  }

  ledgerPage(accountId: string, limit: number, offset: number): { rows: LedgerRow[]; total: number } {
    const total =
      this.sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM ledger WHERE account_id = ?").get(accountId)?.n ?? 0;
    const rows = this.sqlite
      .query<LedgerRow & { created: number }, [string, number, number]>(
        "SELECT public_id AS id, kind, amount, function, key_id, request_id, reason, input_tokens, output_tokens, created_at AS created FROM ledger WHERE account_id = ? ORDER BY ledger.id DESC LIMIT ? OFFSET ?",
      )
      .all(accountId, limit, offset)
      .map(({ created, ...r }) => ({ ...r, created_at: new Date(created).toISOString() }));
    return { rows, total };
  }
}
