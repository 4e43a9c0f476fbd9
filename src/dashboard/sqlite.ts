import type { AuditBy, AuditDraft } from "../audit/interface";
import { appendAudit } from "../audit/sqlite";
import { newId } from "../ids";
import { loginEntry, passwordEntry, planEntry } from "./audit";
import type { AccountSummary, DashboardStore, LedgerRow, Login, Session, SessionLimits } from "./interface";
import { SqliteMemberStore } from "./members-sqlite";
import { sessionExpired } from "./security";

const TOUCH_EVERY_MS = 60_000;

const LOGIN = "SELECT account_id AS accountId, id AS memberId, role, email, password_hash AS passwordHash FROM members";

/** The dashboard's store on the embedded SQLite file (migrations 0007_dashboard, 0020_members). */
export class SqliteDashboardStore extends SqliteMemberStore implements DashboardStore {
  loginByEmail(email: string): Login | null {
    return this.sqlite.query<Login, [string]>(`${LOGIN} WHERE email = ?`).get(email.toLowerCase());
  }

  loginOf(accountId: string): Login | null {
    return this.sqlite
      .query<Login, [string]>(`${LOGIN} WHERE account_id = ? AND role = 'owner' ORDER BY created_at, id LIMIT 1`)
      .get(accountId);
  }

  setLogin(accountId: string, email: string, passwordHash: string, audit?: AuditBy): boolean {
    const e = email.toLowerCase();
    return this.sqlite
      .transaction(() => {
        const other = this.loginByEmail(e);
        const owner = this.loginOf(accountId);
        if (other && other.memberId !== owner?.memberId) return false;
        const before = owner ? this.changedAt(owner.memberId) : null;
        const at = Date.now();
        if (owner)
          this.sqlite
            .query("UPDATE members SET email = ?, password_hash = ?, password_changed_at = ? WHERE id = ?")
            .run(e, passwordHash, at, owner.memberId);
        else
          this.sqlite
            .query(
              "INSERT INTO members (id, account_id, email, role, password_hash, created_at, password_changed_at) VALUES (?1, ?2, ?3, 'owner', ?4, ?5, ?5)",
            )
            .run(newId("mem"), accountId, e, passwordHash, at);
        this.sqlite.query("DELETE FROM dashboard_sessions WHERE account_id = ?").run(accountId);
        if (audit) appendAudit(this.sqlite, loginEntry(audit, accountId, before, { email: e, changedAt: at }));
        return true;
      })
      .immediate();
  }

  setPassword(accountId: string, passwordHash: string, audit?: AuditBy, memberId?: string): void {
    this.sqlite
      .transaction(() => {
        const id = memberId ?? this.loginOf(accountId)?.memberId;
        if (!id) return;
        const before = this.changedAt(id);
        const at = Date.now();
        this.sqlite
          .query("UPDATE members SET password_hash = ?, password_changed_at = ? WHERE id = ? AND account_id = ?")
          .run(passwordHash, at, id, accountId);
        this.sqlite.query("DELETE FROM dashboard_sessions WHERE member_id = ?").run(id);
        if (audit) appendAudit(this.sqlite, passwordEntry(audit, accountId, before?.changedAt ?? null, at));
      })
      .immediate();
  }

  /** The member's email and when its password last changed (null: no such member). */
  private changedAt(memberId: string): { email: string; changedAt: number } | null {
    return this.sqlite
      .query<{ email: string; changedAt: number }, [string]>(
        "SELECT email, password_changed_at AS changedAt FROM members WHERE id = ?",
      )
      .get(memberId);
  }

  createSession(s: Session, entry?: AuditDraft): void {
    this.sqlite
      .transaction(() => {
        this.sqlite
          .query(
            "INSERT INTO dashboard_sessions (token_hash, account_id, kind, created_at, last_seen_at, member_id, actor) VALUES (?, ?, ?, ?, ?, ?, ?)",
          )
          .run(s.tokenHash, s.accountId, s.kind, s.createdAt, s.lastSeenAt, s.memberId ?? null, s.actor ?? null);
        if (entry) appendAudit(this.sqlite, entry);
      })
      .immediate();
  }

  touchSession(tokenHash: string, now: number, limits: SessionLimits): Session | null {
    const s = this.sqlite
      .query<Session, [string]>(
        "SELECT token_hash AS tokenHash, account_id AS accountId, member_id AS memberId, actor, kind, created_at AS createdAt, last_seen_at AS lastSeenAt FROM dashboard_sessions WHERE token_hash = ?",
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
        "SELECT a.id, a.name, l.email, a.plan, a.balance, a.created_at AS created FROM accounts a LEFT JOIN members l ON l.account_id = a.id AND l.id = (SELECT m.id FROM members m WHERE m.account_id = a.id AND m.role = 'owner' ORDER BY m.created_at, m.id LIMIT 1) WHERE ?1 = '%%' OR lower(a.id) LIKE ?1 ESCAPE '\\' OR lower(coalesce(a.name, '')) LIKE ?1 ESCAPE '\\' OR coalesce(l.email, '') LIKE ?1 ESCAPE '\\' ORDER BY a.created_at DESC LIMIT ?2",
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
