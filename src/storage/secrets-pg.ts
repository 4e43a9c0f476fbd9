import { type PgStorage, pgCall } from "./postgres";
import { CachedSecrets, newSecret } from "./secrets";

/** Nodes starting at once may both insert: ON CONFLICT keeps the first, and both read it back. */
export class PostgresSecretStore extends CachedSecrets {
  constructor(private readonly pg: PgStorage) {
    super();
  }

  protected load(name: string): Promise<string> {
    return pgCall(this.pg, async () => {
      await this.pg.sql`INSERT INTO gateway_secrets (name, value) VALUES (${name}, ${newSecret()}) ON CONFLICT (name) DO NOTHING`;
      const [row] = await this.pg.sql`SELECT value FROM gateway_secrets WHERE name = ${name}`;
      if (!row) throw new Error(`gateway secret ${name} could not be stored`);
      return row.value as string;
    });
  }
}
