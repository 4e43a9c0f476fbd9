import type { MaybePromise } from "../../src/maybe";

/** The value of a service call known to answer at once (the embedded SQLite and memory services); throws otherwise. */
export function valueNow<T>(v: MaybePromise<T>): T {
  if (v instanceof Promise) throw new Error("this service answers asynchronously: await it");
  return v;
}
