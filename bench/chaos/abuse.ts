/**
 * Abuse by request shape and by tenant, against a real gateway process on loopback (issue 25),
 * bounded to well under 30 s. One gateway and one upstream simulator serve every case; each case
 * is an entry of CASES and reports its own figures and verdict:
 *
 * - schema shapes: the worst caller schemas of test/helpers/adversarial.ts (SCHEMA_SHAPES: 49,000
 *   "[]" suffixes, deep nesting, thousands of fields or allowed values, long names), five rounds
 *   of each to every function field that takes a schema, 8 requests at a time, with a key that
 *   has no credits, while /health is probed every 20 ms. Pass: every answer a 400/413 envelope,
 *   nothing charged, /health never slower than 500 ms.
 * - one tenant's timeouts: tenant A sends five calls built to time out (max_tokens 100,000 to a
 *   model that takes 3 s, the provider's timeout 500 ms); tenant B's ordinary call to the same
 *   model right after is answered. Pass: B gets 200, not 502 circuit_open.
 *
 * A case is `{ name, run(ctx) }` returning `{ ok, line }`; a new kind of abuse (a dropped stream
 * and its charge, many keys of one account) is one more entry using the same gateway, simulator
 * and keys.
 */

import { healthWhile, SCHEMA_SHAPES, schemaTakingFields } from "../../test/helpers/adversarial";
import { type SpawnedGateway, spawnGateway } from "../../test/helpers/spawned";
import { simProvider, startUpstream, type Upstream } from "../../test/helpers/upstream";
import { type ChaosHome, chaosHome, waitReady } from "../lib/chaos";

interface Ctx {
  g: SpawnedGateway;
  home: ChaosHome;
  sim: Upstream;
}

interface AbuseCase {
  name: string;
  run(ctx: Ctx): Promise<{ ok: boolean; line: string }>;
}

const HEALTH_LIMIT_MS = 500;
/** every shape goes to every schema field this many times, so /health is probed many times meanwhile */
const ROUNDS = 5;
/** requests in flight at once: /health then measures what one request holds the thread for, not a queue */
const CONCURRENCY = 8;

/** `work` over `items`, `n` at a time, results in order. */
async function pool<T, R>(items: T[], n: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
  return out;
}

const schemaShapes: AbuseCase = {
  name: "schema shapes",
  async run({ g, home }) {
    const { key, accountId } = home.key(0);
    const fields = schemaTakingFields();
    const sends = Array.from({ length: ROUNDS }, () => fields)
      .flat()
      .flatMap(([def, field]) =>
        Object.entries(SCHEMA_SHAPES).map(([shape, make]) => ({
          what: `${def.name}.${field}/${shape}`,
          path: def.path,
          body: JSON.stringify({ ...def.example.request, [field]: make() }),
        })),
      );
    const send = (x: (typeof sends)[number]) =>
      fetch(g.url + x.path, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: x.body,
      }).then(async (r) => ({ what: x.what, status: r.status, json: (await r.json()) as { success?: boolean } }));
    const { result, worstMs, probes } = await healthWhile(g.url, pool(sends, CONCURRENCY, send));
    const wrong = result.filter((r) => (r.status !== 400 && r.status !== 413) || r.json.success !== false);
    const charged = home.charges(accountId).size;
    const ok = wrong.length === 0 && charged === 0 && worstMs < HEALTH_LIMIT_MS;
    return {
      ok,
      line: `${sends.length} requests (${Object.keys(SCHEMA_SHAPES).length} shapes x ${fields.length} schema fields x ${ROUNDS}) with a 0-credit key: not 400/413 ${wrong.length}${
        wrong.length
          ? ` (${wrong
              .slice(0, 3)
              .map((w) => `${w.what} ${w.status}`)
              .join(", ")})`
          : ""
      }, charged ${charged}; /health max ${worstMs.toFixed(0)} ms over ${probes} probes`,
    };
  },
};

const oneTenantsTimeouts: AbuseCase = {
  name: "one tenant's timeouts",
  async run({ g, home, sim }) {
    const a = home.key(1000).key;
    const b = home.key(1000).key;
    const model = "abuse-slow-model";
    const chat = (key: string, body: Record<string, unknown>) =>
      fetch(`${g.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "cache-control": "no-store" },
        body: JSON.stringify({ model, ...body }),
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as { error?: { message?: string } } }));
    sim.program([{ delayMs: 3000, times: 5 }], { model });
    const attacks = await Promise.all(
      [0, 1, 2, 3, 4].map((i) => chat(a, { max_tokens: 100_000, messages: [{ role: "user", content: `Write book ${i}` }] })),
    );
    const other = await chat(b, { messages: [{ role: "user", content: "Say hi" }] });
    const timedOut = attacks.filter((r) => r.status === 502).length;
    return {
      ok: other.status === 200,
      line: `tenant A: ${timedOut}/5 calls with max_tokens 100,000 timed out (502); tenant B right after: ${other.status}${other.json.error?.message ? ` (${other.json.error.message})` : ""}`,
    };
  },
};

const CASES: AbuseCase[] = [schemaShapes, oneTenantsTimeouts];

export async function run() {
  const sim = await startUpstream({ record: false });
  const home = chaosHome(
    "abuse",
    `${simProvider({ url: `${sim.url}/v1`, model: "sim-model", extra: "timeout_ms = 500" })}
[breaker]
failure_threshold = 2
cooldown_ms = 60000
`,
  );
  const g = await spawnGateway(home.env);
  const lines: string[] = [];
  let ok = true;
  try {
    await waitReady(g.url);
    for (const c of CASES) {
      const r = await c.run({ g, home, sim });
      ok &&= r.ok;
      lines.push(`${c.name}: ${r.ok ? "ok" : "FAILED"}, ${r.line}`);
    }
    return { name: "abuse", line: lines.join("; "), ok };
  } finally {
    g.proc.kill("SIGKILL");
    await g.exited;
    home.cleanup();
    await sim.close();
  }
}

if (import.meta.main) console.log(await run());
