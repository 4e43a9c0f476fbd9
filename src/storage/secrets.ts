import type { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";

/**
 * Secrets the gateway makes for itself: the first process that asks for one by name creates it
 * (32 random bytes) in the database, every later ask on any process reads that row, so all nodes
 * on one database agree with no configuration. Values are kept in memory once read; never logged.
 */
export interface SecretStore {
  get(name: string): Promise<string>;
}

export const newSecret = () => randomBytes(32).toString("base64url");

/** Remembers each secret once read; a failed read is not remembered (the next call tries again). */
export abstract class CachedSecrets implements SecretStore {
  private readonly known = new Map<string, Promise<string>>();

  get(name: string): Promise<string> {
    let value = this.known.get(name);
    if (!value) {
      value = this.load(name);
      this.known.set(name, value);
      value.catch(() => this.known.delete(name));
    }
    return value;
  }

  protected abstract load(name: string): Promise<string>;
}

export class SqliteSecretStore extends CachedSecrets {
  constructor(private readonly sqlite: Database) {
    super();
  }

  protected async load(name: string): Promise<string> {
    this.sqlite
      .query("INSERT INTO gateway_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING")
      .run(name, newSecret());
    const row = this.sqlite.query<{ value: string }, [string]>("SELECT value FROM gateway_secrets WHERE name = ?").get(name);
    if (!row) throw new Error(`gateway secret ${name} could not be stored`);
    return row.value;
  }
}
