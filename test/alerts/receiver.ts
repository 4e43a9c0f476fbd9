/** A real HTTP receiver for alert deliveries: answers 500 to its first `failFirst` requests, then 200, and keeps every request. */
export interface Received {
  status: number;
  signature: string;
  body: string;
  json: { id: string; type: string; created: number; data: Record<string, unknown> };
}

export interface Receiver {
  url: string;
  received: Received[];
  /** the ids answered 2xx, with how many times each */
  acked(): Map<string, number>;
  until(check: () => boolean, ms?: number): Promise<void>;
  stop(): void;
}

export function startReceiver(failFirst = 0): Receiver {
  const received: Received[] = [];
  let failures = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const body = await req.text();
      const status = failures < failFirst ? 500 : 200;
      if (status === 500) failures++;
      received.push({ status, signature: req.headers.get("textai-signature") ?? "", body, json: JSON.parse(body) });
      return new Response(status === 200 ? "ok" : "try again", { status });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hook`,
    received,
    acked() {
      const m = new Map<string, number>();
      for (const r of received) if (r.status === 200) m.set(r.json.id, (m.get(r.json.id) ?? 0) + 1);
      return m;
    },
    async until(check, ms = 8000) {
      const end = Date.now() + ms;
      while (!check()) {
        if (Date.now() > end)
          throw new Error(
            `receiver: condition not met in ${ms} ms; got ${JSON.stringify(received.map((r) => [r.status, r.json.type, r.json.id]))}`,
          );
        await Bun.sleep(20);
      }
    },
    stop: () => server.stop(true),
  };
}

/** The signature check of docs/alerts.md, run as the doc writes it: its `js` block after the verify-signature marker. */
export async function docVerify(): Promise<(header: string, body: string, secret: string) => boolean> {
  const doc = await Bun.file(new URL("../../docs/alerts.md", import.meta.url)).text();
  const at = doc.indexOf("<!-- test: verify-signature");
  const block = /```js\n([\s\S]*?)```/.exec(doc.slice(at));
  if (at < 0 || !block) throw new Error("docs/alerts.md has no verify-signature block");
  const path = `${require("node:os").tmpdir()}/textai-verify-${process.pid}-${Date.now()}.mjs`;
  await Bun.write(path, `${block[1]}\nexport { verify };\n`);
  const mod = await import(path);
  require("node:fs").rmSync(path);
  return mod.verify;
}
