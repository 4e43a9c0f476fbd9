import type { RequestLogQuery } from "./interface";

/**
 * The WHERE clause of a request-log query and its parameters, for both stores: `ph(i)` writes the
 * i-th placeholder (`?` in SQLite, `$i` in PostgreSQL). Newest first: the cursor continues below
 * (time, request_id).
 */
export function whereOf(q: RequestLogQuery, ph: (i: number) => string): { where: string; params: (string | number)[] } {
  const parts: string[] = [];
  const params: (string | number)[] = [];
  const add = (sql: (p: () => string) => string, ...values: (string | number)[]) => {
    parts.push(
      sql(() => {
        params.push(values.shift() as string | number);
        return ph(params.length);
      }),
    );
  };
  if (q.accountId !== undefined) add((p) => `account_id = ${p()}`, q.accountId);
  if (q.keyId !== undefined) add((p) => `key_id = ${p()}`, q.keyId);
  if (q.function !== undefined) add((p) => `function = ${p()}`, q.function);
  if (q.statusMin !== undefined && q.statusMin === q.statusMax) add((p) => `status = ${p()}`, q.statusMin);
  else {
    if (q.statusMin !== undefined) add((p) => `status >= ${p()}`, q.statusMin);
    if (q.statusMax !== undefined) add((p) => `status <= ${p()}`, q.statusMax);
  }
  if (q.from !== undefined) add((p) => `time >= ${p()}`, q.from);
  if (q.to !== undefined) add((p) => `time < ${p()}`, q.to);
  if (q.cursor) {
    const { time, requestId } = q.cursor;
    // `time <= ?` on its own lets the index seek to the cursor instead of reading from the newest entry
    add((p) => `time <= ${p()} AND (time < ${p()} OR (time = ${p()} AND request_id < ${p()}))`, time, time, time, requestId);
  }
  return { where: parts.length ? `WHERE ${parts.join(" AND ")}` : "", params };
}

export const ORDER = "ORDER BY time DESC, request_id DESC";
