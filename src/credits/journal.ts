import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";

/**
 * One charge of a call admitted against a lease, committed to the node's journal before its answer
 * and shipped to PostgreSQL later (credits/postgres.ts, docs/many-nodes.md#credit-journal).
 */
export interface JournalEntry {
  /** the journal's sequence number: increasing, never reused (AUTOINCREMENT), the key PostgreSQL dedupes on */
  seq: number;
  accountId: string;
  amount: number;
  /** the lease the call was admitted against, and the allowance carved with it */
  leaseId: string;
  allowanceId: string;
  keyId: string;
  fn: string;
  requestId: string;
  provider: string | null;
  cached: boolean;
  /** when it was charged (ms): the ledger row's created_at */
  at: number;
  inputTokens: number | null;
  outputTokens: number | null;
}

export class JournalError extends Error {}

interface Row {
  seq: number;
  account: string;
  amount: number;
  lease: string;
  allowance: string;
  key: string;
  fn: string;
  rid: string;
  prov: string | null;
  cached: number;
  at: number;
  ti: number | null;
  tout: number | null;
}

/**
 * A node's credit journal: an embedded SQLite file (WAL, synchronous NORMAL, as single-node mode
 * commits its charges: durable across a crash of the process) of the charges not yet shipped to
 * PostgreSQL. The file holds its node's id and a random journal id (PostgreSQL keeps, per journal
 * id, the last sequence shipped). Opened in exclusive locking mode: while one process has it open,
 * another (a second node with the same id, or `textai credits journal ship` on a running node's
 * file) is refused.
 */
export class CreditJournal {
  readonly nodeId: string;
  readonly journalId: string;
  private db: Database;
  private insert;
  private remove;

  /** Opens (creating it if `create`) the journal at `path`; `nodeId` null reads the node from the file. */
  constructor(
    readonly path: string,
    nodeId: string | null,
    opts: { create?: boolean } = {},
  ) {
    const create = opts.create ?? true;
    if (create) mkdirSync(dirname(path), { recursive: true });
    try {
      this.db = new Database(path, { create, readwrite: true, strict: true });
    } catch (err) {
      throw new JournalError(`cannot open the credit journal ${path}: ${(err as Error).message}`);
    }
    try {
      this.db.exec("PRAGMA busy_timeout = 0");
      this.db.exec("PRAGMA locking_mode = EXCLUSIVE");
      this.db.exec("PRAGMA journal_mode = WAL");
      this.db.exec("PRAGMA synchronous = NORMAL");
      // takes the file's lock now (held until close): a second process fails here
      this.db.exec("BEGIN EXCLUSIVE");
      // an existing file that is not a journal (a node's database, say) is left as it was
      if (!create && !this.db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get())
        throw new JournalError(`${path} is not a credit journal`);
      this.db.exec(`CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL,
          amount INTEGER NOT NULL, lease TEXT NOT NULL, allowance TEXT NOT NULL, key TEXT NOT NULL, fn TEXT NOT NULL,
          rid TEXT NOT NULL, prov TEXT, cached INTEGER NOT NULL, at INTEGER NOT NULL, ti INTEGER, tout INTEGER)`);
      const meta = new Map((this.db.query("SELECT k, v FROM meta").all() as { k: string; v: string }[]).map((r) => [r.k, r.v]));
      let node = meta.get("node_id");
      let journal = meta.get("journal_id");
      if (!node || !journal) {
        if (!nodeId) throw new JournalError(`${path} is not a credit journal (no node id in it)`);
        node = nodeId;
        journal = crypto.randomUUID();
        this.db.query("INSERT OR REPLACE INTO meta (k, v) VALUES ('node_id', ?), ('journal_id', ?)").run(node, journal);
      } else if (nodeId && node !== nodeId) {
        throw new JournalError(
          `the credit journal ${path} belongs to node ${node}, not ${nodeId}: ship it with \`textai credits journal ship ${path}\`, or give this node its own journal path`,
        );
      }
      this.db.exec("COMMIT");
      this.nodeId = node;
      this.journalId = journal;
    } catch (err) {
      try {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        this.db.close();
      } catch {}
      if (err instanceof JournalError) throw err;
      const m = (err as Error).message;
      throw new JournalError(
        /locked|busy/i.test(m)
          ? `the credit journal ${path} is open in another process (a node running on it?): ${m}`
          : `the credit journal ${path}: ${m}`,
      );
    }
    this.insert = this.db.query(
      `INSERT INTO entries (account, amount, lease, allowance, key, fn, rid, prov, cached, at, ti, tout)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
    );
    this.remove = this.db.query("DELETE FROM entries WHERE seq <= ?");
  }

  /** Commits `entries` in one transaction; answers them with their sequence numbers. */
  append(entries: Omit<JournalEntry, "seq">[]): JournalEntry[] {
    const out: JournalEntry[] = [];
    this.db.transaction(() => {
      for (const e of entries) {
        const { seq } = this.insert.get(
          e.accountId,
          e.amount,
          e.leaseId,
          e.allowanceId,
          e.keyId,
          e.fn,
          e.requestId,
          e.provider,
          e.cached ? 1 : 0,
          e.at,
          e.inputTokens,
          e.outputTokens,
        ) as { seq: number };
        out.push({ ...e, seq });
      }
    })();
    return out;
  }

  /** Every entry not yet shipped, oldest first. */
  pending(): JournalEntry[] {
    return (this.db.query("SELECT * FROM entries ORDER BY seq").all() as Row[]).map((r) => ({
      seq: r.seq,
      accountId: r.account,
      amount: r.amount,
      leaseId: r.lease,
      allowanceId: r.allowance,
      keyId: r.key,
      fn: r.fn,
      requestId: r.rid,
      provider: r.prov,
      cached: r.cached === 1,
      at: r.at,
      inputTokens: r.ti,
      outputTokens: r.tout,
    }));
  }

  /** The entries up to `seq` were committed in PostgreSQL: deleted here. */
  shipped(seq: number): void {
    this.remove.run(seq);
  }

  close(): void {
    this.db.close();
  }
}
