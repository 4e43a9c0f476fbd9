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
 * - dropped streams: 20 tenants each open a /v1 chat stream, read a few chunks and hang up before
 *   its end. Pass: every one of them is charged (once), for what it was sent.
 * - many keys: an account on a plan of 5 keys and 6 calls a minute makes keys until refused, then
 *   spreads 30 calls over all of them. Pass: the sixth key is refused, and no more than 6 calls
 *   are admitted whatever key they carry.
 *
 * - non-finite hold (issue 35.2): an account with balance 0 opens /v1 streams with caps of 1e308
 *   (times n = 128), 2^53 and a Responses max_output_tokens of 1e308, to a model whose output price
 *   is 0 (so cap x price was Infinity x 0 = NaN, which every comparison admitted), while /health is
 *   probed. Pass: every answer a 400/402 envelope, no stream frame delivered, no provider called,
 *   nothing charged, /health never slower than 500 ms.
 * - field-name freeze (issue 35.1): six json-extractor calls at once whose schema names one field
 *   with 24 words joined by "_", on a text of 82 of them (on d793a1c each held the thread 1.1 s,
 *   the six /health 6.9 s), while /health is polled every 10 ms. Pass: every answer a 200 or 413,
 *   and no poll waited behind more than 100 ms of the gateway's main-thread CPU (the worst wall
 *   wait is reported too: on a shared machine it also counts the time the gateway was descheduled).
 *
 * A case is `{ name, run(ctx) }` returning `{ ok, line }`; a new kind of abuse is one more entry
 * using the same gateway, simulator and keys.
 */

import { FIELD_NAME_FREEZE, healthLag, healthWhile, SCHEMA_SHAPES, schemaTakingFields } from "../../test/helpers/adversarial";
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
const ADMIN_TOKEN = "abuse-chaos-operator-token-0123456789abcdef";
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

const droppedStreams: AbuseCase = {
  name: "dropped streams",
  async run({ g, home }) {
    const tenants = Array.from({ length: 20 }, () => home.key(1000));
    const results = await Promise.all(
      tenants.map(async ({ key }) => {
        const ac = new AbortController();
        const res = await fetch(`${g.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "cache-control": "no-store" },
          body: JSON.stringify({
            model: "sim-model",
            stream: true,
            max_tokens: 400,
            messages: [{ role: "user", content: "Tell me a long story about the sea. ".repeat(20) }],
          }),
          signal: ac.signal,
        });
        let frames = 0;
        try {
          const reader = res.body!.getReader();
          while (frames < 3) {
            const { done } = await reader.read();
            if (done) break;
            frames++;
          }
          ac.abort();
        } catch {
          // the abort itself
        }
        return { status: res.status, frames };
      }),
    );
    // the charge is written once the gateway has seen the client leave
    const deadline = Date.now() + 5000;
    let charged = tenants.map((t) => home.charges(t.accountId).size);
    while (charged.some((n) => n === 0) && Date.now() < deadline) {
      await Bun.sleep(100);
      charged = tenants.map((t) => home.charges(t.accountId).size);
    }
    const started = results.filter((r) => r.status === 200 && r.frames > 0).length;
    const free = charged.filter((n) => n === 0).length;
    const twice = charged.filter((n) => n > 1).length;
    return {
      ok: started === tenants.length && free === 0 && twice === 0,
      line: `${started}/${tenants.length} streams read in part and dropped: charged ${tenants.length - free}, free ${free}, charged twice ${twice}`,
    };
  },
};

const manyKeys: AbuseCase = {
  name: "many keys",
  async run({ g }) {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
    const post = (path: string, body: unknown) =>
      fetch(g.url + path, { method: "POST", headers: admin, body: JSON.stringify(body) }).then(async (r) => ({
        status: r.status,
        json: (await r.json()) as { data?: { result?: { id?: string; key?: string } } },
      }));
    const account = (await post("/admin/v1/accounts", { name: "many keys", plan: "tight", credits: 1000 })).json.data?.result?.id;
    const keys: string[] = [];
    let refusedAt = 0;
    for (let i = 1; i <= 8 && !refusedAt; i++) {
      const r = await post("/admin/v1/keys", { label: `k${i}`, account_id: account });
      if (r.status === 201 && r.json.data?.result?.key) keys.push(r.json.data.result.key);
      else refusedAt = i;
    }
    const statuses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        fetch(`${g.url}/api/v1/ai/sentiment-analysis`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": keys[i % keys.length] ?? "", "cache-control": "no-store" },
          body: JSON.stringify({ text: `Lovely day number ${i}.` }),
        }).then((r) => r.status),
      ),
    );
    const admitted = statuses.filter((s) => s === 200).length;
    const limited = statuses.filter((s) => s === 429).length;
    return {
      ok: keys.length === 5 && refusedAt === 6 && admitted <= 6 && admitted + limited === statuses.length,
      line: `keys made ${keys.length} (refused at the ${refusedAt}th), 30 calls over them: admitted ${admitted} (limit 6), 429 ${limited}`,
    };
  },
};

const nonFiniteHold: AbuseCase = {
  name: "non-finite hold",
  async run({ g, home, sim }) {
    const { key, accountId } = home.key(0);
    const model = "abuse-free-output";
    const messages = [{ role: "user", content: "Tell me everything you know." }];
    const sends: [path: string, body: Record<string, unknown>][] = [
      ["/v1/chat/completions", { model, stream: true, n: 128, max_tokens: 1e308, messages }],
      ["/v1/chat/completions", { model, stream: true, max_completion_tokens: 2 ** 53, messages }],
      [
        "/v1/chat/completions",
        { model, stream: true, n: 128, max_tokens: 1e308, messages, stream_options: { include_usage: true } },
      ],
      ["/v1/responses", { model, stream: true, max_output_tokens: 1e308, input: "Tell me everything you know." }],
    ];
    const before = sim.calls.count;
    const { result, worstMs } = await healthWhile(
      g.url,
      Promise.all(
        sends.map(([path, body]) =>
          fetch(g.url + path, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
            body: JSON.stringify(body),
          }).then(async (r) => ({ status: r.status, text: await r.text() })),
        ),
      ),
    );
    const wrong = result.filter((r) => (r.status !== 400 && r.status !== 402) || r.text.includes("data:"));
    const delivered = result.filter((r) => r.text.includes("data:")).length;
    const called = sim.calls.count - before;
    const charged = home.charges(accountId).size;
    return {
      ok: wrong.length === 0 && called === 0 && charged === 0 && worstMs < HEALTH_LIMIT_MS,
      line: `${sends.length} streams with caps of 1e308 / 2^53 to a model whose output is free, from a 0-credit account: answered ${result.map((r) => r.status).join(",")}, streams delivered ${delivered}, provider calls ${called}, charged ${charged}; /health max ${worstMs.toFixed(0)} ms`,
    };
  },
};

/** The bar of issue 35: no /health poll waits behind more than this of the gateway's event loop (plus one /proc tick). */
const HOLD_MS = 100;

const fieldNameFreeze: AbuseCase = {
  name: "field-name freeze",
  async run({ g, home }) {
    const { key } = home.key(1000);
    const send = () =>
      fetch(`${g.url}/api/v1/ai/json-extractor`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, "cache-control": "no-store" },
        body: JSON.stringify(FIELD_NAME_FREEZE),
      }).then((r) => r.status);
    const { result, worstMs, worstCpuMs, probes } = await healthLag(g.url, Promise.all(Array.from({ length: 6 }, send)), {
      pid: g.proc.pid,
    });
    const wrong = result.filter((s) => s !== 200 && s !== 413);
    return {
      ok: wrong.length === 0 && worstCpuMs <= HOLD_MS + 10,
      line: `6 at once: ${result.join(" ")}; /health worst wait ${worstMs.toFixed(0)} ms, behind ${worstCpuMs} ms of the gateway's thread (bar ${HOLD_MS}) over ${probes} probes`,
    };
  },
};

const CASES: AbuseCase[] = [schemaShapes, oneTenantsTimeouts, droppedStreams, manyKeys, nonFiniteHold, fieldNameFreeze];

export async function run() {
  const sim = await startUpstream({ record: false });
  const home = chaosHome(
    "abuse",
    `${simProvider({ url: `${sim.url}/v1`, model: "sim-model", extra: 'timeout_ms = 500\nmodel_patterns = ["abuse-*"]' })}
[breaker]
failure_threshold = 2
cooldown_ms = 60000

[plans.tight]
max_keys = 5
[plans.tight.rate_limits]
"sentiment-analysis" = 6

[pricing.models]
"abuse-free-output" = { input = 1, output = 0 }
`,
    { TEXTAI_ADMIN_TOKEN: ADMIN_TOKEN },
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
