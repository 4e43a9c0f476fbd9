/**
 * The physical-limit baseline of the full path: a bare forwarder with no keys, credits, limits,
 * cache, validation or SDK, that passes each request to the upstream and its answer back. The
 * bench runs it pinned to the gateway's core; the gateway's full path is compared with it.
 *
 *   bun bench/forwarder.ts --port 9100 --upstream http://127.0.0.1:9000
 */
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const upstream = arg("upstream") ?? "http://127.0.0.1:9000";
const port = Number(arg("port") ?? 9100);

Bun.serve({
  port,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    const res = await fetch(upstream + url.pathname, {
      method: req.method,
      headers: {
        "content-type": req.headers.get("content-type") ?? "application/json",
        authorization: req.headers.get("authorization") ?? "",
      },
      body: req.method === "GET" ? undefined : await req.arrayBuffer(),
    });
    return new Response(res.body, { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "" } });
  },
});
console.log(`forwarder on ${port} -> ${upstream}`);
