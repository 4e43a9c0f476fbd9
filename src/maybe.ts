/** What a service method returns: a value at once (memory, SQLite) or later (PostgreSQL, Redis). */
export type MaybePromise<T> = T | Promise<T>;
