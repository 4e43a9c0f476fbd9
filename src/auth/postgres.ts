import { and, desc, eq } from "drizzle-orm";
import { auditDraft, changedFields } from "../audit/chain";
import type { AuditBy } from "../audit/interface";
import { appendAuditIn } from "../audit/postgres";
import type { PostgresCreditLedger } from "../credits/postgres";
import { newId } from "../ids";
import { type PgStorage, pgCall } from "../storage/postgres";
import { accounts, apiKeys, members } from "../storage/schema-pg";
import { checkNewAccount, checkNewKey } from "./attributes";
import { accountFields, keyFields, policyFields } from "./audit";
import {
  type AccountRow,
  type AuthInfo,
  type CreatedKey,
  KeyLimitError,
  type KeyMaker,
  type KeyPage,
  type KeyStore,
  KeyStoreError,
  type KeyStoreOptions,
  type KeyView,
  type NewAccountOptions,
  type NewKeyOptions,
  type PolicyChangeOptions,
} from "./interface";
import { KeyCache } from "./key-cache";
import { generateApiKey, hashApiKey, KEY_PREFIX, keyView } from "./keys";
import { applyPolicyPatch, type PolicyPatch, policyFromColumn, policyToColumn, tagsFromColumn } from "./policy";

const accountRow = (a: typeof accounts.$inferSelect): AccountRow => ({
  id: a.id,
  name: a.name,
  plan: a.plan,
  balance: Number(a.balance),
  created_at: new Date(Number(a.createdAt)).toISOString(),
  tags: tagsFromColumn(a.tags) ?? null,
});

/**
 * Accounts and API keys in PostgreSQL, shared by every node. Lookups go through the key cache
 * (entries live at most one second); a revocation is broadcast by the caller of `onRevoke` so
 * other nodes drop the key at once, the TTL being the fallback.
 */
export class PostgresKeyStore implements KeyStore {
  private cache: KeyCache;
  private lastUsed = new Map<string, number>();
  private flushTimer: ReturnType<typeof setInterval> | null = null;
  onRevoke: ((keyHash: string) => void) | null = null;

  constructor(
    private pg: PgStorage,
    private ledger: PostgresCreditLedger,
    private opts: KeyStoreOptions,
  ) {
    this.cache = new KeyCache(opts.cacheTtlMs ?? 1000);
  }

  startBackgroundFlush(intervalMs = 5000): void {
    this.flushTimer ??= setInterval(() => void this.flushLastUsed(), intervalMs);
    this.flushTimer.unref?.();
  }

  async stop(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = null;
    await this.flushLastUsed();
  }

  createAccount(given: NewAccountOptions = {}) {
    const opts = checkNewAccount(given, this.opts.plans);
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const id = newId("acc");
        const plan = opts.plan ?? "free";
        const credits = opts.credits ?? this.opts.welcomeCredits;
        const tags = opts.tags ? JSON.stringify(opts.tags) : null;
        await tx`INSERT INTO accounts (id, name, plan, balance, tags) VALUES (${id}, ${opts.name ?? null}, ${plan}, 0, ${tags})`;
        if (credits > 0) await this.ledger.grantIn(tx, id, credits, "welcome", "welcome credits");
        const email = opts.login?.email.toLowerCase();
        if (opts.login)
          // the login an account is made with is its first member, an owner (docs/teams.md)
          await tx`INSERT INTO members (id, account_id, email, role, password_hash, created_at, password_changed_at)
            VALUES (${newId("mem")}, ${id}, ${email}, 'owner', ${opts.login.passwordHash}, ${Date.now()}, ${Date.now()})`;
        if (opts.audit) {
          const after = accountFields({ name: opts.name ?? null, plan, balance: credits, tags });
          if (email) after.email = email;
          const action = opts.audit.actor === null ? "account.signup" : "account.create";
          await appendAuditIn(tx, auditDraft(opts.audit, action, id, id, null, after));
        }
        return { id, plan, balance: credits };
      }),
    );
  }

  accountExists(id: string): Promise<boolean> {
    return pgCall(this.pg, async () => (await this.pg.sql`SELECT 1 FROM accounts WHERE id = ${id}`).length > 0);
  }

  getAccount(id: string): Promise<AccountRow | null> {
    return pgCall(this.pg, async () => {
      const [a] = await this.pg.db.select().from(accounts).where(eq(accounts.id, id));
      return a ? accountRow(a) : null;
    });
  }

  listAccounts(limit: number, offset: number): Promise<AccountRow[]> {
    return pgCall(this.pg, async () =>
      (await this.pg.db.select().from(accounts).orderBy(desc(accounts.createdAt)).limit(limit).offset(offset)).map(accountRow),
    );
  }

  createKey(given: NewKeyOptions): Promise<CreatedKey> {
    const opts = checkNewKey(given, this.opts.plans, Date.now());
    return pgCall(this.pg, () =>
      this.pg.sql.begin(async (tx) => {
        const key = generateApiKey();
        const id = newId("key");
        let accountId = opts.accountId;
        let plan = opts.plan;
        const newAccount = !accountId;
        if (accountId) {
          const [acc] = await tx`SELECT plan FROM accounts WHERE id = ${accountId} FOR UPDATE`;
          if (!acc) throw new KeyStoreError(`account ${accountId} not found`);
          // the account row is locked above, so concurrent creations count one after another
          const max = this.opts.maxKeys?.(acc.plan as string);
          if (max !== undefined) {
            const [{ n }] =
              await tx`SELECT count(*)::int AS n FROM api_keys WHERE account_id = ${accountId} AND status = 'active'`;
            if (n >= max) throw new KeyLimitError(max);
          }
          plan ??= acc.plan as string;
          if (opts.credits && opts.credits > 0)
            await this.ledger.grantIn(tx, accountId, opts.credits, "grant", "granted with new key");
        } else {
          accountId = newId("acc");
          plan ??= "free";
          const credits = opts.credits ?? this.opts.welcomeCredits;
          await tx`INSERT INTO accounts (id, plan, balance) VALUES (${accountId}, ${plan}, 0)`;
          if (credits > 0) await this.ledger.grantIn(tx, accountId, credits, "welcome", "welcome credits");
        }
        await tx`INSERT INTO api_keys (id, account_id, label, plan, prefix, last4, key_hash, policy)
          VALUES (${id}, ${accountId}, ${opts.label}, ${plan}, ${KEY_PREFIX}, ${key.slice(-4)}, ${hashApiKey(key)},
            ${policyToColumn(opts.policy)})`;
        if (opts.audit) {
          const after = keyFields({
            label: opts.label,
            plan,
            status: "active",
            prefix: KEY_PREFIX,
            policy: policyToColumn(opts.policy),
          });
          const extra = { ...(newAccount ? { new_account: true } : {}), ...(opts.credits ? { credits: opts.credits } : {}) };
          await appendAuditIn(tx, auditDraft(opts.audit, "key.create", accountId, id, null, { ...after, ...extra }));
        }
        return { id, key, label: opts.label, account_id: accountId, plan, prefix: KEY_PREFIX };
      }),
    );
  }

  authenticate(presented: string): AuthInfo | null | Promise<AuthInfo | null> {
    const hash = hashApiKey(presented);
    const cached = this.cache.get(hash);
    if (cached !== undefined) {
      if (cached) this.lastUsed.set(cached.keyId, Date.now());
      return cached;
    }
    return pgCall(this.pg, async () => {
      const [row] = await this.pg.sql`SELECT k.id, k.account_id, k.plan, k.label, k.status, k.policy, a.tags AS account_tags
        FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ${hash}`;
      let info: AuthInfo | null = null;
      if (row && row.status === "active") {
        info = { keyId: row.id, accountId: row.account_id, plan: row.plan, label: row.label };
        const policy = policyFromColumn(row.policy);
        if (policy) info.policy = policy;
        const tags = tagsFromColumn(row.account_tags);
        if (tags) info.accountTags = tags;
      }
      this.cache.set(hash, info);
      if (info) this.lastUsed.set(info.keyId, Date.now());
      return info;
    });
  }

  async flushLastUsed(): Promise<void> {
    if (this.lastUsed.size === 0) return;
    const entries = [...this.lastUsed];
    this.lastUsed.clear();
    try {
      await pgCall(
        this.pg,
        () => this.pg.sql`UPDATE api_keys AS k SET last_used_at = v.at
          FROM (SELECT unnest(${this.pg.sql.array(
            entries.map((e) => e[0]),
            "TEXT",
          )}::text[]) AS id,
                       unnest(${this.pg.sql.array(
                         entries.map((e) => e[1]),
                         "INT8",
                       )}::bigint[]) AS at) AS v
          WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.at)`,
      );
    } catch {
      for (const [id, at] of entries) if (!this.lastUsed.has(id)) this.lastUsed.set(id, at);
    }
  }

  revoke(id: string, accountId?: string, audit?: AuditBy): Promise<boolean> {
    return pgCall(this.pg, async () => {
      const row = await this.pg.sql.begin(async (tx) => {
        const [r] = await tx`SELECT status, key_hash, account_id FROM api_keys WHERE id = ${id}
          AND (${accountId ?? null}::text IS NULL OR account_id = ${accountId ?? null}) FOR UPDATE`;
        if (!r) return null;
        await tx`UPDATE api_keys SET status = 'revoked', revoked_at = coalesce(revoked_at, ${Date.now()}) WHERE id = ${id}`;
        if (audit) {
          const change = changedFields({ status: r.status }, { status: "revoked" });
          await appendAuditIn(tx, auditDraft(audit, "key.revoke", r.account_id, id, change.before, change.after));
        }
        return r as { key_hash: string };
      });
      if (!row) return false;
      this.cache.forget(row.key_hash);
      this.onRevoke?.(row.key_hash);
      return true;
    });
  }

  setPolicy(id: string, patch: PolicyPatch, opts: PolicyChangeOptions = {}): Promise<KeyView | null> {
    return pgCall(this.pg, async () => {
      const row = await this.pg.sql.begin(async (tx) => {
        const [r] = await tx`SELECT key_hash, account_id, policy FROM api_keys WHERE id = ${id} FOR UPDATE`;
        if (!r || (opts.accountId && r.account_id !== opts.accountId)) return null;
        const before = policyFromColumn(r.policy);
        const after = applyPolicyPatch(before, patch);
        opts.check?.(before, after);
        const policy = policyToColumn(after);
        await tx`UPDATE api_keys SET policy = ${policy} WHERE id = ${id}`;
        if (opts.audit) {
          const change = changedFields(policyFields(r.policy), policyFields(policy));
          await appendAuditIn(tx, auditDraft(opts.audit, "key.policy.update", r.account_id, id, change.before, change.after));
        }
        return r;
      });
      if (!row) return null;
      this.cache.forget(row.key_hash);
      this.onRevoke?.(row.key_hash);
      const [updated] = await this.pg.db.select().from(apiKeys).where(eq(apiKeys.id, id));
      return this.view(updated);
    });
  }

  forget(keyHash: string): void {
    this.cache.forget(keyHash);
  }

  setAccountTags(id: string, tags: Record<string, string> | null, audit?: AuditBy): Promise<AccountRow | null> {
    return pgCall(this.pg, async () => {
      const updated = await this.pg.sql.begin(async (tx) => {
        const [before] = await tx`SELECT tags FROM accounts WHERE id = ${id} FOR UPDATE`;
        if (!before) return null;
        const [u] = await tx`UPDATE accounts SET tags = ${tags ? JSON.stringify(tags) : null} WHERE id = ${id}
          RETURNING id, name, plan, balance, created_at AS "createdAt", tags`;
        if (audit) {
          const change = changedFields({ tags: tagsFromColumn(before.tags) ?? null }, { tags: tags ?? null });
          await appendAuditIn(tx, auditDraft(audit, "account.tags.update", id, id, change.before, change.after));
        }
        return u as typeof accounts.$inferSelect;
      });
      if (!updated) return null;
      const hashes = await this.pg.db.select({ h: apiKeys.keyHash }).from(apiKeys).where(eq(apiKeys.accountId, id));
      for (const { h } of hashes) {
        this.cache.forget(h);
        this.onRevoke?.(h);
      }
      return accountRow(updated);
    });
  }

  get(id: string): Promise<KeyView | null> {
    return pgCall(this.pg, async () => {
      const [row] = await this.pg.db.select().from(apiKeys).where(eq(apiKeys.id, id));
      return row ? this.view(row) : null;
    });
  }

  keyMaker(id: string): Promise<KeyMaker | null> {
    return pgCall(this.pg, async () => {
      const [row] = await this.pg.db
        .select({ memberId: apiKeys.ownerMemberId, role: members.role })
        .from(apiKeys)
        .leftJoin(members, and(eq(members.id, apiKeys.ownerMemberId), eq(members.accountId, apiKeys.accountId)))
        .where(eq(apiKeys.id, id));
      return row ? { memberId: row.memberId, role: row.role ?? null } : null;
    });
  }

  list(accountId?: string, page?: KeyPage): Promise<KeyView[]> {
    return pgCall(this.pg, async () => {
      const q = this.pg.db.select().from(apiKeys);
      const ordered = (accountId ? q.where(eq(apiKeys.accountId, accountId)) : q).orderBy(
        desc(apiKeys.createdAt),
        desc(apiKeys.id),
      );
      const rows = await (page ? ordered.limit(page.limit).offset(page.offset) : ordered);
      return rows.map((r) => this.view(r));
    });
  }

  private view(r: typeof apiKeys.$inferSelect): KeyView {
    return keyView(
      {
        ...r,
        createdAt: Number(r.createdAt),
        lastUsedAt: r.lastUsedAt === null ? null : Number(r.lastUsedAt),
        revokedAt: r.revokedAt === null ? null : Number(r.revokedAt),
      },
      this.lastUsed.get(r.id),
    );
  }
}
