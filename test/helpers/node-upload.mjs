// Sends one large POST body with Node's own HTTP client (node:http), as a user's program would, and
// prints what came back as one JSON line: {status, body} or {error}. The body is written as fast as
// the connection takes it, in 64 KiB pieces, never held whole.
// Usage: node node-upload.mjs <url> <bytes> <sized|chunked> [header=value ...]
import http from "node:http";

const [url, size, framing, ...extra] = process.argv.slice(2);
const total = Number(size);
const headers = { "content-type": "application/json" };
for (const h of extra) {
  const i = h.indexOf("=");
  headers[h.slice(0, i)] = h.slice(i + 1);
}
if (framing === "sized") headers["content-length"] = String(total);
const result = await new Promise((resolve) => {
  const req = http.request(url, { method: "POST", headers }, (res) => {
    let body = "";
    res.setEncoding("utf8");
    res.on("data", (d) => (body += d));
    res.on("end", () => resolve({ status: res.statusCode, connection: res.headers.connection, body }));
    res.on("error", (e) => resolve({ error: `response: ${e.code ?? e.message}` }));
  });
  req.on("error", (e) => resolve({ error: e.code ?? e.message }));
  const piece = Buffer.alloc(64 * 1024, 0x61);
  let sent = 0;
  const pump = () => {
    while (sent < total) {
      const n = Math.min(piece.length, total - sent);
      sent += n;
      if (!req.write(n === piece.length ? piece : piece.subarray(0, n))) return void req.once("drain", pump);
    }
    req.end();
  };
  req.write('{"text":"');
  pump();
});
console.log(JSON.stringify(result));
