/** What a service method returns: a value at once (memory, SQLite) or later (PostgreSQL, Redis). */
export type MaybePromise<T> = T | Promise<T>;

/** The value of a call known to answer at once (the embedded SQLite and memory services); throws otherwise. */
export function valueNow<T>(v: MaybePromise<T>): T {
  if (v instanceof Promise) throw new Error("this service answers asynchronously: await it");
  return v;
}
