/**
 * Fuzz run: 6,000 mutated requests (seeded, so a failure replays) against a spawned gateway on
 * loopback, 8 at a time. Each starts from a valid request of a real endpoint (every function's
 * example, the account, resource and admin endpoints) and gets one or more mutations: fields
 * dropped, retyped, nulled, renamed or added, strings made long or odd (control characters,
 * lone surrogates, emoji), numbers made huge, negative or fractional, nesting made deep, keys
 * spelled "__proto__" or "\u0063onstructor", the body truncated or not JSON at all, the content
 * type or method wrong, the path bent. Reports crashes (the process died or stopped answering
 * /health), gateway 5xx (other than the offline engine's honest 503 no_provider) and answers that
 * are not the JSON envelope of contract section 4 with a matching x-request-id.
 */
import { FUNCTIONS } from "../../src/functions/registry";
import { spawnGateway } from "../../test/helpers/spawned";
import { chaosHome, waitReady } from "../lib/chaos";

const REQUESTS = 6000;
const CONCURRENCY = 8;
const ADMIN_TOKEN = "chaos-admin-token-0123456789abcdef";

/** mulberry32: small, seeded, good enough to pick mutations */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface Seed {
  method: string;
  path: string;
  body?: Json;
  admin?: boolean;
}

const ODD_STRINGS = [
  "",
  " ",
  "\u0000\u0001\u001f",
  "\ud800",
  "😀".repeat(500),
  "a".repeat(20_000),
  "!".repeat(20_000),
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "%00%ff",
  "\u202e\u200d",
  "null",
  "1e309",
];
const ODD_VALUES: Json[] = [null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, [], {}, [[[]]], { a: { b: { c: 1 } } }];

function seeds(): Seed[] {
  const out: Seed[] = FUNCTIONS.map((d) => ({ method: "POST", path: d.path, body: d.example.request as Json }));
  out.push(
    { method: "GET", path: "/api/v1/account/usage" },
    { method: "GET", path: "/api/v1/account/usage-summary" },
    { method: "GET", path: "/api/v1/account/api-key/current" },
    { method: "POST", path: "/api/v1/knowledge-bases", body: { name: "docs", description: "help center" } },
    { method: "GET", path: "/api/v1/knowledge-bases" },
    {
      method: "POST",
      path: "/api/v1/ai/knowledge-bases",
      body: {
        documents: ["Shipping takes 5 days.", { title: "Returns", content: "Returns within 30 days." }],
        query: "shipping",
      },
    },
    {
      method: "POST",
      path: "/api/v1/ai/faq-collections",
      body: { name: "faq", faqs: [{ question: "How long is shipping?", answer: "5 days." }] },
    },
    { method: "POST", path: "/api/v1/chatbots", body: { name: "bot", mode: "support" } },
    { method: "POST", path: "/admin/v1/keys", body: { label: "fuzz" }, admin: true },
    { method: "POST", path: "/admin/v1/accounts", body: { email: "fuzz@example.com" }, admin: true },
    { method: "GET", path: "/admin/v1/accounts", admin: true },
  );
  return out;
}

function mutateValue(v: Json, r: () => number, depth = 0): Json {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)] as T;
  if (depth < 3 && v && typeof v === "object" && r() < 0.6) {
    if (Array.isArray(v)) {
      const copy = [...v];
      if (copy.length && r() < 0.5) copy[Math.floor(r() * copy.length)] = mutateValue(copy[0] ?? null, r, depth + 1);
      else copy.push(pick(ODD_VALUES));
      return copy;
    }
    const copy = { ...v };
    const keys = Object.keys(copy);
    const k = keys.length ? pick(keys) : "x";
    const what = r();
    if (what < 0.2) delete copy[k];
    else if (what < 0.35) copy[`${k}${pick(["_", "s", ""])}${pick(["x", "", "2"])}`] = copy[k] ?? null;
    else if (what < 0.45) copy[pick(["__proto__", "constructor", "prototype", "api_key", "model", "stream"])] = pick(ODD_VALUES);
    else copy[k] = mutateValue(copy[k] ?? null, r, depth + 1);
    return copy;
  }
  const what = r();
  if (what < 0.35) return pick(ODD_STRINGS);
  if (what < 0.7) return pick(ODD_VALUES);
  if (typeof v === "string") return v.split("").reverse().join("") + pick(ODD_STRINGS);
  if (typeof v === "number") return v * pick([-1, 1e9, 0.5, 0]);
  return pick(ODD_VALUES);
}

function deep(n: number): string {
  return `${"[".repeat(n)}${"]".repeat(n)}`;
}

interface Built {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function build(seed: Seed, r: () => number, key: string): Built {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (seed.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  else headers["x-api-key"] = key;
  let method = seed.method;
  let path = seed.path;
  let body = seed.body === undefined ? undefined : JSON.stringify(mutateValue(seed.body, r));
  const extra = r();
  if (extra < 0.05 && body) body = body.slice(0, Math.floor(r() * body.length));
  else if (extra < 0.08) body = "not json at all";
  else if (extra < 0.1) body = `{"text":"x","a":${deep(64)}}`;
  else if (extra < 0.12) body = String.raw`{"text":"x","\u0063onstructor":{"prototype":{"polluted":1}},"\u005f_proto__":{"p":1}}`;
  else if (extra < 0.14) headers["content-type"] = "text/plain";
  else if (extra < 0.16) method = ["GET", "PUT", "DELETE", "PATCH"][Math.floor(r() * 4)] as string;
  else if (extra < 0.18) path = `${path}/${encodeURIComponent("../x")}`;
  else if (extra < 0.2) path = path.replace(/[a-z]$/, "");
  else if (extra < 0.22) delete headers["x-api-key"];
  else if (extra < 0.24) headers["idempotency-key"] = "k".repeat(Math.floor(r() * 300));
  if (method === "GET" || method === "DELETE") body = undefined;
  else body ??= "{}";
  return { method, path, headers, body };
}

export async function run() {
  const home = chaosHome("fuzz", "", { TEXTAI_ADMIN_TOKEN: ADMIN_TOKEN });
  const g = await spawnGateway(home.env);
  try {
    await waitReady(g.url);
    const { key } = home.key(100_000_000);
    const all = seeds();
    const r = prng(12);
    let sent = 0;
    let answered = 0;
    let connectionErrors = 0;
    let noEnvelope = 0;
    const fiveXx = new Map<string, number>();
    const examples: string[] = [];
    const statuses = new Map<number, number>();
    const worker = async () => {
      while (sent < REQUESTS) {
        sent++;
        const req = build(all[Math.floor(r() * all.length)] as Seed, r, key);
        let res: Response;
        try {
          res = await fetch(g.url + req.path, { method: req.method, headers: req.headers, body: req.body });
        } catch {
          connectionErrors++;
          continue;
        }
        answered++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const text = await res.text();
        let env: { success?: unknown; request_id?: unknown; error?: { code?: unknown } } | null = null;
        try {
          env = JSON.parse(text);
        } catch {
          env = null;
        }
        const enveloped =
          env !== null &&
          typeof env.success === "boolean" &&
          typeof env.request_id === "string" &&
          res.headers.get("x-request-id") === env.request_id &&
          (env.success || typeof env.error?.code === "string");
        if (!enveloped) {
          noEnvelope++;
          if (examples.length < 3) examples.push(`${req.method} ${req.path} -> ${res.status} ${text.slice(0, 80)}`);
        }
        if (res.status >= 500) {
          const code = String(env?.error?.code ?? res.status);
          fiveXx.set(code, (fiveXx.get(code) ?? 0) + 1);
          if (code !== "no_provider" && examples.length < 3) examples.push(`${req.method} ${req.path} -> ${res.status} ${code}`);
        }
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (performance.now() - started) / 1000;
    const alive = g.proc.exitCode === null && (await fetch(`${g.url}/health`).catch(() => null))?.status === 200;
    const honest = fiveXx.get("no_provider") ?? 0;
    const bad5xx = [...fiveXx].filter(([c]) => c !== "no_provider").reduce((s, [, n]) => s + n, 0);
    const byStatus = [...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}:${n}`)
      .join(" ");
    return {
      name: "fuzz",
      line: `${answered} of ${REQUESTS} mutated requests answered in ${seconds.toFixed(1)} s (${byStatus}); crashes ${alive ? 0 : 1}; connection errors ${connectionErrors}; gateway 5xx ${bad5xx} (plus ${honest} honest 503 no_provider); without envelope ${noEnvelope}${examples.length ? `; e.g. ${examples.join(" | ")}` : ""}`,
      ok: alive && connectionErrors === 0 && bad5xx === 0 && noEnvelope === 0,
    };
  } finally {
    g.proc.kill("SIGKILL");
    await g.exited;
    home.cleanup();
  }
}

if (import.meta.main) console.log(await run());
