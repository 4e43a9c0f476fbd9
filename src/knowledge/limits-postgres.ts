/** The per-account limits of knowledge resources in PostgreSQL, passed one creation at a time under an advisory lock. */
import type { TransactionSQL } from "bun";
import { invalidRequest } from "../errors";

/**
 * Refuses a creation past the account's limit (400 naming `name`). Under a per-account advisory
 * lock held to the end of the transaction, so two nodes cannot both pass the last place.
 */
export async function withinLimit(
  tx: TransactionSQL,
  accountId: string,
  table: "knowledge_bases" | "faq_collections" | "chatbots",
  limit: number,
  plural: string,
  error = () => invalidRequest(`an account can hold at most ${limit} ${plural}; delete one first`, "name"),
): Promise<void> {
  await lockAccount(tx, accountId);
  const [owned] = await tx.unsafe(`SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`, [accountId]);
  if (Number(owned?.n ?? 0) >= limit) throw error();
}

/** The account's knowledge lock, to the end of the transaction: creations and uploads pass its limits one at a time. */
export const lockAccount = (tx: TransactionSQL, accountId: string) =>
  tx`SELECT pg_advisory_xact_lock(hashtext(${`knowledge:${accountId}`}))`;
