import { SQL } from "bun";

/**
 * The one way tests and benches make and remove a PostgreSQL database on a shared server: a name of
 * their own (`textai_<kind>_<12 hex>`), and a drop that refuses any database this process did not
 * create here. A shared server may hold someone else's data; nothing else in test/, bench/ or .ci/
 * may say DROP DATABASE (test/cluster/redis-isolation.test.ts reads them all).
 */
const made = new Set<string>();

/** Creates a database of this process's own on the server at `adminUrl`; its name and URL. */
export async function createOwnDatabase(adminUrl: string, kind: string): Promise<{ name: string; url: string }> {
  if (!/^[a-z]+$/.test(kind)) throw new Error(`a database kind is lower-case letters: ${kind}`);
  const name = `textai_${kind}_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const admin = new SQL(adminUrl, { max: 1, connectionTimeout: 5 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  made.add(name);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

/** Drops a database createOwnDatabase made in this process (closing what still holds it); refuses any other. */
export async function dropOwnDatabase(adminUrl: string, name: string): Promise<void> {
  if (!made.has(name)) throw new Error(`not a database this process created: ${name}`);
  const admin = new SQL(adminUrl, { max: 1 });
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    made.delete(name);
  } finally {
    await admin.close();
  }
}
