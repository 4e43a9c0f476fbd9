import { desc, eq } from "drizzle-orm";
import type { CreditLedger } from "../credits/ledger";
import type { Storage } from "../storage/db";
import { accounts, apiKeys } from "../storage/schema";
import { generateApiKey, hashApiKey, KEY_PREFIX, maskKey, newId } from "./keys";

export interface AuthInfo {
  keyId: string;
  accountId: string;
  plan: string;
  label: string;
}

export interface KeyView {
  id: string;
  label: string;
  account_id: string;
  plan: string;
  status: "active" | "revoked";
  masked_key: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedKey {
  id: string;
  key: string;
  label: string;
  account_id: string;
  plan: string;
  prefix: string;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * API keys and accounts. Lookups are served from a small in-memory cache whose entries live at most
 * `cacheTtlMs`, so a key revoked by another process (the CLI) stops working within that time, while
 * revocations made through this store take effect on the very next request.
 */
export class KeyStore {
  private cache = new Map<string, { info: AuthInfo | null; at: number }>();
  private lastUsed = new Map<string, number>();
  private flushTimer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private storage: Storage,
    private ledger: CreditLedger,
    private opts: { welcomeCredits: number; cacheTtlMs?: number; now?: () => number } = { welcomeCredits: 100 },
  ) {}

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

  createAccount(opts: { name?: string; plan?: string; credits?: number } = {}): { id: string; plan: string; balance: number } {
    const id = newId("acc");
    const plan = opts.plan ?? "free";
    const credits = opts.credits ?? this.opts.welcomeCredits;
    this.storage.sqlite.transaction(() => {
      this.storage.db
        .insert(accounts)
        .values({ id, name: opts.name ?? null, plan, balance: 0 })
        .run();
      if (credits > 0) this.ledger.grant(id, credits, "welcome", "welcome credits");
    })();
    return { id, plan, balance: credits };
  }

  accountExists(id: string): boolean {
    return this.storage.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, id)).get() !== undefined;
  }

  createKey(opts: { label: string; accountId?: string; plan?: string; credits?: number }): CreatedKey {
    const key = generateApiKey();
    const id = newId("key");
    let accountId = opts.accountId;
    let plan = opts.plan;
    this.storage.sqlite.transaction(() => {
      if (accountId) {
        const acc = this.storage.db.select().from(accounts).where(eq(accounts.id, accountId)).get();
        if (!acc) throw new KeyStoreError(`account ${accountId} not found`);
        plan ??= acc.plan;
        if (opts.credits && opts.credits > 0) this.ledger.grant(accountId, opts.credits, "grant", "granted with new key");
      } else {
        const acc = this.createAccount({ plan: plan ?? "free", credits: opts.credits });
        accountId = acc.id;
        plan = acc.plan;
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
        })
        .run();
    })();
    return { id, key, label: opts.label, account_id: accountId!, plan: plan ?? "free", prefix: KEY_PREFIX };
  }

  /** Resolves a presented key; null for unknown and revoked keys alike. */
  authenticate(presented: string): AuthInfo | null {
    const hash = hashApiKey(presented);
    const now = this.now();
    const hit = this.cache.get(hash);
    let info: AuthInfo | null;
    if (hit && now - hit.at < (this.opts.cacheTtlMs ?? 1000)) info = hit.info;
    else {
      const row = this.storage.db.select().from(apiKeys).where(eq(apiKeys.keyHash, hash)).get();
      info =
        row && row.status === "active" ? { keyId: row.id, accountId: row.accountId, plan: row.plan, label: row.label } : null;
      if (this.cache.size > 50_000) this.cache.clear();
      this.cache.set(hash, { info, at: now });
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

  revoke(id: string, accountId?: string): boolean {
    const row = this.storage.db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
    if (!row || (accountId && row.accountId !== accountId)) return false;
    if (row.status !== "revoked") {
      this.storage.db.update(apiKeys).set({ status: "revoked", revokedAt: this.now() }).where(eq(apiKeys.id, id)).run();
    }
    this.cache.delete(row.keyHash);
    return true;
  }

  get(id: string): KeyView | null {
    const row = this.storage.db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
    return row ? this.view(row) : null;
  }

  list(accountId?: string): KeyView[] {
    const q = this.storage.db.select().from(apiKeys);
    const rows = (accountId ? q.where(eq(apiKeys.accountId, accountId)) : q).orderBy(desc(apiKeys.createdAt)).all();
    return rows.map((r) => this.view(r));
  }

  private view(r: typeof apiKeys.$inferSelect): KeyView {
    const pendingUse = this.lastUsed.get(r.id);
    return {
      id: r.id,
      label: r.label,
      account_id: r.accountId,
      plan: r.plan,
      status: r.status,
      masked_key: maskKey(r.prefix, r.last4),
      prefix: r.prefix,
      created_at: iso(r.createdAt)!,
      last_used_at: iso(Math.max(pendingUse ?? 0, r.lastUsedAt ?? 0) || null),
      revoked_at: iso(r.revokedAt),
    };
  }
}

export class KeyStoreError extends Error {}
