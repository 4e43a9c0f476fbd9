import { and, desc, eq } from "drizzle-orm";
import { auditDraft, changedFields } from "../audit/chain";
import type { AuditBy } from "../audit/interface";
import { appendAudit } from "../audit/sqlite";
import type { SqliteCreditLedger } from "../credits/sqlite";
import { newId } from "../ids";
import type { Storage } from "../storage/db";
import { accounts, apiKeys, members } from "../storage/schema";
import { checkNewAccount, checkNewKey } from "./attributes";
import { accountFields, keyFields, policyFields } from "./audit";
import type {
  AccountRow,
  AuthInfo,
  CreatedKey,
  KeyMaker,
  KeyPage,
  KeyStore,
  KeyStoreOptions,
  KeyView,
  NewAccountOptions,
  NewKeyOptions,
  PolicyChangeOptions,
} from "./interface";
import { KeyLimitError, KeyStoreError } from "./interface";
import { KeyCache } from "./key-cache";
import { generateApiKey, hashApiKey, KEY_PREFIX, keyView } from "./keys";
import { applyPolicyPatch, type PolicyPatch, policyFromColumn, policyToColumn, tagsFromColumn } from "./policy";

/**
 * API keys and accounts in SQLite. Lookups are served from the key cache (entries live at most
 * `cacheTtlMs`), so a key revoked by another process (the CLI) stops working within that time, while
 * revocations made through this store take effect on the very next request.
 */
export class SqliteKeyStore implements KeyStore {
  private cache: KeyCache;
  onRevoke: ((keyHash: string) => void) | null = null;
  private lastUsed = new Map<string, number>();
  private flushTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private storage: Storage,
    private ledger: SqliteCreditLedger,
    private opts: KeyStoreOptions & { now?: () => number } = { welcomeCredits: 100 },
  ) {
    this.cache = new KeyCache(opts.cacheTtlMs ?? 1000, () => this.now());
  }

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  startBackgroundFlush(intervalMs = 5000): void {
    this.flushTimer ??= setInterval(() => this.flushLastUsed(), intervalMs);
    this.flushTimer.unref?.();
  }

  stop(): void {
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = null;
    this.flushLastUsed();
  }

  createAccount(given: NewAccountOptions = {}): { id: string; plan: string; balance: number } {
    const opts = checkNewAccount(given, this.opts.plans);
    const id = newId("acc");
    const plan = opts.plan ?? "free";
    const credits = opts.credits ?? this.opts.welcomeCredits;
    const { sqlite } = this.storage;
    sqlite
      .transaction(() => {
        this.storage.db
          .insert(accounts)
          .values({ id, name: opts.name ?? null, plan, balance: 0, tags: opts.tags ? JSON.stringify(opts.tags) : null })
          .run();
        if (credits > 0) this.ledger.grant(id, credits, "welcome", "welcome credits");
        if (opts.login)
          // the login an account is made with is its first member, an owner (docs/teams.md)
          sqlite
            .query(
              "INSERT INTO members (id, account_id, email, role, password_hash, created_at, password_changed_at) VALUES (?1, ?2, ?3, 'owner', ?4, ?5, ?5)",
            )
            .run(newId("mem"), id, opts.login.email.toLowerCase(), opts.login.passwordHash, Date.now());
        if (opts.audit) {
          const after = accountFields({
            name: opts.name ?? null,
            plan,
            balance: credits,
            tags: opts.tags ? JSON.stringify(opts.tags) : null,
          });
          if (opts.login) after.email = opts.login.email.toLowerCase();
          const action = opts.audit.actor === null ? "account.signup" : "account.create";
          appendAudit(sqlite, auditDraft(opts.audit, action, id, id, null, after));
        }
      })
      .immediate();
    return { id, plan, balance: credits };
  }

  accountExists(id: string): boolean {
    return this.storage.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, id)).get() !== undefined;
  }

  createKey(given: NewKeyOptions): CreatedKey {
    const opts = checkNewKey(given, this.opts.plans, this.now());
    const key = generateApiKey();
    const id = newId("key");
    let accountId = opts.accountId;
    let plan = opts.plan;
    let newAccount = false;
    this.storage.sqlite
      .transaction(() => {
        if (accountId) {
          const acc = this.storage.db.select().from(accounts).where(eq(accounts.id, accountId)).get();
          if (!acc) throw new KeyStoreError(`account ${accountId} not found`);
          const max = this.opts.maxKeys?.(acc.plan);
          if (max !== undefined) {
            const n = this.storage.sqlite
              .query<{ n: number }, [string]>("SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND status = 'active'")
              .get(accountId)!.n;
            if (n >= max) throw new KeyLimitError(max);
          }
          plan ??= acc.plan;
          if (opts.credits && opts.credits > 0) this.ledger.grant(accountId, opts.credits, "grant", "granted with new key");
        } else {
          const acc = this.createAccount({ plan: plan ?? "free", credits: opts.credits });
          accountId = acc.id;
          plan = acc.plan;
          newAccount = true;
        }
        this.storage.db
          .insert(apiKeys)
          .values({
            id,
            accountId,
            label: opts.label,
            plan: plan ?? "free",
            prefix: KEY_PREFIX,
            last4: key.slice(-4),
            keyHash: hashApiKey(key),
            policy: policyToColumn(opts.policy),
          })
          .run();
        if (opts.audit) {
          const after = keyFields({
            label: opts.label,
            plan: plan ?? "free",
            status: "active",
            prefix: KEY_PREFIX,
            policy: policyToColumn(opts.policy),
          });
          const extra = { ...(newAccount ? { new_account: true } : {}), ...(opts.credits ? { credits: opts.credits } : {}) };
          appendAudit(this.storage.sqlite, auditDraft(opts.audit, "key.create", accountId!, id, null, { ...after, ...extra }));
        }
      })
      .immediate();
    return { id, key, label: opts.label, account_id: accountId!, plan: plan ?? "free", prefix: KEY_PREFIX };
  }

  /** Resolves a presented key; null for unknown and revoked keys alike. */
  authenticate(presented: string): AuthInfo | null {
    const hash = hashApiKey(presented);
    const now = this.now();
    let info = this.cache.get(hash);
    if (info === undefined) {
      const row = this.storage.db
        .select({ key: apiKeys, accountTags: accounts.tags })
        .from(apiKeys)
        .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
        .where(eq(apiKeys.keyHash, hash))
        .get();
      info = row && row.key.status === "active" ? authInfo(row.key, row.accountTags) : null;
      this.cache.set(hash, info);
    }
    if (info) this.lastUsed.set(info.keyId, now);
    return info;
  }

  /** last_used_at is batched: one write per key per flush instead of one per request. */
  flushLastUsed(): void {
    if (this.lastUsed.size === 0) return;
    const entries = [...this.lastUsed];
    this.lastUsed.clear();
    try {
      const stmt = this.storage.sqlite.query(
        "UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)",
      );
      this.storage.sqlite.transaction(() => {
        for (const [id, at] of entries) stmt.run(at, id, at);
      })();
    } catch {
      // the database is busy or read-only: keep the timestamps for the next flush
      for (const [id, at] of entries) if (!this.lastUsed.has(id)) this.lastUsed.set(id, at);
    }
  }

  revoke(id: string, accountId?: string, audit?: AuditBy): boolean {
    const { sqlite } = this.storage;
    const row = sqlite
      .transaction(() => {
        const r = this.storage.db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
        if (!r || (accountId && r.accountId !== accountId)) return null;
        const revokedAt = r.revokedAt ?? this.now();
        if (r.status !== "revoked")
          this.storage.db.update(apiKeys).set({ status: "revoked", revokedAt }).where(eq(apiKeys.id, id)).run();
        if (audit) {
          const change = changedFields({ status: r.status }, { status: "revoked" });
          appendAudit(sqlite, auditDraft(audit, "key.revoke", r.accountId, id, change.before, change.after));
        }
        return r;
      })
      .immediate();
    if (!row) return false;
    this.cache.forget(row.keyHash);
    this.onRevoke?.(row.keyHash);
    return true;
  }

  setPolicy(id: string, patch: PolicyPatch, opts: PolicyChangeOptions = {}): KeyView | null {
    const row = this.storage.sqlite
      .transaction(() => {
        const r = this.storage.db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
        if (!r || (opts.accountId && r.accountId !== opts.accountId)) return null;
        const before = policyFromColumn(r.policy);
        const after = applyPolicyPatch(before, patch);
        opts.check?.(before, after);
        const policy = policyToColumn(after);
        this.storage.db.update(apiKeys).set({ policy }).where(eq(apiKeys.id, id)).run();
        if (opts.audit) {
          const change = changedFields(policyFields(r.policy), policyFields(policy));
          appendAudit(
            this.storage.sqlite,
            auditDraft(opts.audit, "key.policy.update", r.accountId, id, change.before, change.after),
          );
        }
        return { ...r, policy };
      })
      .immediate();
    if (!row) return null;
    this.cache.forget(row.keyHash);
    this.onRevoke?.(row.keyHash);
    return this.view(row);
  }

  forget(keyHash: string): void {
    this.cache.forget(keyHash);
  }

  setAccountTags(id: string, tags: Record<string, string> | null, audit?: AuditBy): AccountRow | null {
    const { sqlite } = this.storage;
    const updated = sqlite
      .transaction(() => {
        const before = this.storage.db.select({ tags: accounts.tags }).from(accounts).where(eq(accounts.id, id)).get();
        if (!before) return undefined;
        const u = this.storage.db
          .update(accounts)
          .set({ tags: tags ? JSON.stringify(tags) : null })
          .where(eq(accounts.id, id))
          .returning()
          .get();
        if (audit) {
          const change = changedFields({ tags: tagsFromColumn(before.tags) ?? null }, { tags: tags ?? null });
          appendAudit(sqlite, auditDraft(audit, "account.tags.update", id, id, change.before, change.after));
        }
        return u;
      })
      .immediate();
    if (!updated) return null;
    const hashes = this.storage.db.select({ h: apiKeys.keyHash }).from(apiKeys).where(eq(apiKeys.accountId, id)).all();
    for (const { h } of hashes) {
      this.cache.forget(h);
      this.onRevoke?.(h);
    }
    return accountRow(updated);
  }

  getAccount(id: string): AccountRow | null {
    const acc = this.storage.db.select().from(accounts).where(eq(accounts.id, id)).get();
    return acc ? accountRow(acc) : null;
  }

  listAccounts(limit: number, offset: number): AccountRow[] {
    return this.storage.db
      .select()
      .from(accounts)
      .orderBy(desc(accounts.createdAt))
      .limit(limit)
      .offset(offset)
      .all()
      .map(accountRow);
  }

  get(id: string): KeyView | null {
    const row = this.storage.db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
    return row ? this.view(row) : null;
  }

  keyMaker(id: string): KeyMaker | null {
    const row = this.storage.db
      .select({ memberId: apiKeys.ownerMemberId, role: members.role })
      .from(apiKeys)
      .leftJoin(members, and(eq(members.id, apiKeys.ownerMemberId), eq(members.accountId, apiKeys.accountId)))
      .where(eq(apiKeys.id, id))
      .get();
    return row ? { memberId: row.memberId, role: row.role ?? null } : null;
  }

  list(accountId?: string, page?: KeyPage): KeyView[] {
    const q = this.storage.db.select().from(apiKeys);
    const ordered = (accountId ? q.where(eq(apiKeys.accountId, accountId)) : q).orderBy(
      desc(apiKeys.createdAt),
      desc(apiKeys.id),
    );
    const rows = (page ? ordered.limit(page.limit).offset(page.offset) : ordered).all();
    return rows.map((r) => this.view(r));
  }

  private view(r: typeof apiKeys.$inferSelect): KeyView {
    return keyView(r, this.lastUsed.get(r.id));
  }
}

const authInfo = (row: typeof apiKeys.$inferSelect, accountTags: string | null): AuthInfo => {
  const info: AuthInfo = { keyId: row.id, accountId: row.accountId, plan: row.plan, label: row.label };
  const policy = policyFromColumn(row.policy);
  if (policy) info.policy = policy;
  const tags = tagsFromColumn(accountTags);
  if (tags) info.accountTags = tags;
  return info;
};

const accountRow = (a: typeof accounts.$inferSelect): AccountRow => ({
  id: a.id,
  name: a.name,
  plan: a.plan,
  balance: a.balance,
  created_at: new Date(a.createdAt).toISOString(),
  tags: tagsFromColumn(a.tags) ?? null,
});
