// The offline engine's large parts load after the listener is up (the grammar engine on first use),
// never before /ready answers. This needs a process of its
// own: the test runner shares one process between files, and other files load every engine.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "textai-lazy-"));
const env = {
  ...process.env,
  TEXTAI_DB: join(dir, "lazy.db"),
  TEXTAI_LOG_LEVEL: "warn",
  TEXTAI_DRAIN_GRACE_MS: "0",
  TEXTAI_ADMIN_TOKEN: "lazy-admin-0123456789abcdef0123456789",
} as Record<string, string>;
/** /metrics and the details of /ready are the operator's */
const operator = { headers: { authorization: "Bearer lazy-admin-0123456789abcdef0123456789" } };
let server: Bun.Subprocess<"ignore", "pipe", "pipe">;
let url = "";
let key = "";

/** Series of one metric as label text -> value, from the Prometheus text of /metrics. */
async function metric(name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`, operator)).text();
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = line.match(/^(\w+)(\{[^}]*\})? (\S+)$/);
    if (m && m[1] === name) out.set(m[2] ?? "", Number(m[3]));
  }
  return out;
}

const call = (path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

beforeAll(async () => {
  const created = Bun.spawnSync([process.execPath, "src/cli.ts", "keys", "create", "--label", "lazy", "--json"], {
    cwd: ROOT,
    env,
  });
  key = JSON.parse(created.stdout.toString()).key;
  server = Bun.spawn([process.execPath, "src/cli.ts", "serve", "--port", "0"], {
    cwd: ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = server.stdout.getReader();
  let out = "";
  while (!/listening on (\S+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${out}`);
    out += new TextDecoder().decode(value);
  }
  url = out.match(/listening on (\S+)/)![1];
  reader.releaseLock();
}, 30_000);

afterAll(async () => {
  server.kill("SIGTERM");
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe("offline engine parts load after the listener is up, the grammar engine on first use", () => {
  test("a fresh server is ready at once; the event loop's engine parts then warm in the background, not the grammar engine", async () => {
    const ready = await fetch(`${url}/ready`, operator);
    const body = (await ready.json()) as { data: { result: { engines_loaded: string[] } } };
    expect(ready.status).toBe(200);
    expect(body.data.result.engines_loaded).not.toContain("grammar");
    // the sliced parts (src/offline-engine/engines.ts) load one after the other, the language model last
    const warm = [
      "dates",
      "keyword-stopwords",
      "sentiment-lexicon",
      "pii-name-gazetteer",
      "pii-place-gazetteer",
      "pii-given-names",
      "pii-script-stopwords",
      "language",
      "word-frequencies",
    ];
    let loaded: string[] = [];
    for (const until = Date.now() + 30_000; Date.now() < until && !warm.every((e) => loaded.includes(e)); await Bun.sleep(100))
      loaded = ((await (await fetch(`${url}/ready`, operator)).json()) as typeof body).data.result.engines_loaded;
    expect([...loaded].sort()).toEqual([...warm].sort());
    expect((await metric("textai_engine_memory_bytes")).has('{engine="grammar"}')).toBe(false);
    const rss = (await metric("textai_process_resident_memory_bytes")).get("") ?? 0;
    // about 70 MB before the warm-up on the development machine, 150 to 200 MB after (the language
    // model about 55 to 100); the grammar engine alone adds over 200 MB
    expect(rss).toBeGreaterThan(10 * 2 ** 20);
    expect(rss).toBeLessThan(300 * 2 ** 20);
    const heap = await metric("textai_heap_bytes");
    expect(heap.get('{kind="live_after_gc"}')).toBeGreaterThan(0);
  }, 40_000);

  test("the first grammar calls wait for the engine, then /metrics reports its memory", async () => {
    // two at once: they share one load and both get a corrected text
    const t0 = performance.now();
    let loading = true;
    const grammar = Promise.all([
      call("/api/v1/ai/grammar-fix", { text: "Their going too the store tomorow." }),
      call("/api/v1/ai/grammar-fix", { text: "She dont like it." }),
    ]).finally(() => {
      loading = false;
    });
    // the engine loads in its worker: the server keeps answering meanwhile
    let slowestHealth = 0;
    while (loading) {
      const t = performance.now();
      await (await fetch(`${url}/health`)).text();
      slowestHealth = Math.max(slowestHealth, performance.now() - t);
      await Bun.sleep(20);
    }
    const answers = await grammar;
    const loadMs = performance.now() - t0;
    expect(slowestHealth).toBeLessThan(loadMs / 2);
    for (const a of answers) expect(a.status).toBe(200);
    const first = (await answers[0].json()) as { data: { result: { corrected_text: string } } };
    expect(first.data.result.corrected_text).toContain("tomorrow");
    const engines = await metric("textai_engine_memory_bytes");
    expect(engines.get('{engine="grammar"}')).toBeGreaterThan(20 * 2 ** 20);
    expect((await metric("textai_engine_load_seconds")).get('{engine="grammar"}')).toBeGreaterThan(0);
  }, 60_000);

  test("a language-dependent analysis is answered with the warmed language model", async () => {
    const r = await call("/api/v1/ai/comment-analyze", {
      comment: "This product is really excellent, thank you so much for the quick delivery!",
    });
    const body = (await r.json()) as { data: { result: { language: string } } };
    expect({ status: r.status, body }).toMatchObject({ status: 200 });
    expect(body.data.result.language).toBe("en");
    const ready = (await (await fetch(`${url}/ready`, operator)).json()) as { data: { result: { engines_loaded: string[] } } };
    expect(ready.data.result.engines_loaded).toContain("language");
    expect(ready.data.result.engines_loaded).toContain("grammar");
  }, 30_000);
});

describe("a gateway that routes functions to a provider first: the offline engine is only its fallback", () => {
  test("nothing of the engine loads at start; the first offline call loads the parts it uses (in slices, waiting), no others, and is answered", async () => {
    const own = mkdtempSync(join(tmpdir(), "textai-lazy-fallback-"));
    const config = join(own, "config.toml");
    // a provider nobody listens on, first on the routes; the offline engine after it
    await Bun.write(
      config,
      '[[providers]]\nname = "remote"\ntype = "openai-compatible"\nbase_url = "http://127.0.0.1:9/v1"\ndefault_model = "m"\n',
    );
    const e = { ...env, TEXTAI_DB: join(own, "t.db"), TEXTAI_CONFIG: config };
    const created = Bun.spawnSync([process.execPath, "src/cli.ts", "keys", "create", "--label", "fb", "--json"], {
      cwd: ROOT,
      env: e,
    });
    const k = JSON.parse(created.stdout.toString()).key as string;
    const proc = Bun.spawn([process.execPath, "src/cli.ts", "serve", "--port", "0"], {
      cwd: ROOT,
      env: e,
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      while (!/listening on (\S+)/.test(out)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`server exited: ${out}`);
        out += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      const at = (out.match(/listening on (\S+)/) as RegExpMatchArray)[1];
      const loaded = async () =>
        ((await (await fetch(`${at}/ready`, operator)).json()) as { data: { result: { engines_loaded: string[] } } }).data.result
          .engines_loaded;
      // a gateway that serves offline by default has begun loading well within this
      await Bun.sleep(3000);
      expect(await loaded()).toEqual([]);
      // the provider is down: the call falls back to the offline engine, which loads and answers
      const r = await fetch(`${at}/api/v1/ai/sentiment-analysis`, {
        method: "POST",
        headers: { "x-api-key": k, "content-type": "application/json" },
        body: JSON.stringify({ text: "What a lovely, helpful answer." }),
      });
      const text = await r.text();
      expect(r.status, text).toBe(200);
      expect((JSON.parse(text) as { meta: { provider: string } }).meta.provider).toBe("local");
      const after = await loaded();
      expect(after).toContain("sentiment-lexicon");
      // only the parts the call used: not the knowledge search's word list, nor the PII name lists
      // (all of them together hold 80 to 130 MB that every garbage collection then pays for)
      expect(after).not.toContain("word-frequencies");
      expect(after).not.toContain("pii-given-names");
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(own, { recursive: true, force: true });
    }
  }, 40_000);
});
