/**
 * Diagnostic, not a load bench: the gateway's CPU per /v1/chat/completions request with the bench's
 * 1 KB PII prompt, unguarded (plan bench) against guarded (plan guarded: redact_pii on every kind +
 * restore_pii), sent a few at a time in alternating blocks, CPU read from /proc for the gateway process.
 *   bun bench/guard-ab.ts [--requests 2000] [--warmup 400] [--prof DIR] [--fresh]
 * Also the CPU per request of each of the gateway's threads (/proc/PID/task): the JavaScript thread
 * ("bun"), the JIT compiler's ("JITWorker"), fetch's ("HTTP Client"), the allocator's and the
 * collector's. JavaScriptCore compiles a function's optimized tiers only after thousands of calls,
 * and a function called once per request (most of the recognizer's) gets there after thousands of
 * requests: until then the compiler's thread costs the guarded path tens of µs per request more
 * (--warmup 10000 to measure after it).
 */
import { join } from "node:path";
import { startGateway } from "./lib/gateway";
import { cpuMs, freePort, ROOT, spawnChild, threadCpuMs, waitFor } from "./lib/proc";
import { freshBodies, PII_PROMPT_NUMBERS, piiPrompt } from "./lib/requests";

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const REQUESTS = Number(arg("--requests", "2000"));
/** requests of each plan sent before the timed blocks */
const WARMUP = Number(arg("--warmup", "400"));
const PROF = arg("--prof", "");
/** one plan only (bench or guarded), for a profile of that path alone */
const ONLY = arg("--only", "");

const body = JSON.stringify({ model: "sim-model", messages: [{ role: "user", content: piiPrompt(1024) }], max_tokens: 64 });
/** --fresh: every request's prompt new (its order and ticket numbers changed), so the guard remembers none */
const FRESH = process.argv.includes("--fresh");
const nextFresh = freshBodies(body, PII_PROMPT_NUMBERS);
const bodyOf = () => (FRESH ? nextFresh() : body);
const simPort = freePort();
const statsPort = freePort();
const sim = spawnChild(["bun", join(ROOT, "bench", "sim.ts"), "--port", String(simPort), "--stats-port", String(statsPort)], {
  log: "/tmp/guard-ab-sim.log",
});
await waitFor(`http://127.0.0.1:${statsPort}/stats`);
const gw = await startGateway({
  simUrl: `http://127.0.0.1:${simPort}`,
  keyPlans: ["bench", "guarded"],
  bunFlags: PROF ? ["--cpu-prof", `--cpu-prof-dir=${PROF}`] : [],
});
/** Server-Timing stages per plan (wall ms, as the gateway reports them) */
const stages: Record<string, number[]> = {};
try {
  const send = async (plan: string, n: number) => {
    const one = async () => {
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${gw.keys[plan]}`, "content-type": "application/json", "cache-control": "no-cache" },
        body: bodyOf(),
      });
      if (r.status !== 200) throw new Error(`${plan}: ${r.status} ${await r.text()}`);
      for (const part of (r.headers.get("server-timing") ?? "").split(", ")) {
        const [stage, dur] = part.split(";dur=");
        if (!dur) continue;
        const key = `${plan} ${stage}`;
        const list = stages[key] ?? [];
        list.push(Number(dur));
        stages[key] = list;
      }
      await r.arrayBuffer();
    };
    // four at a time
    for (let i = 0; i < n; i += 4) await Promise.all([one(), one(), one(), one()]);
  };
  // --load-gazetteer: one guarded request first, so an unguarded-only run has the recognizer's tables loaded too
  if (process.argv.includes("--load-gazetteer")) await send("guarded", 4);
  if (ONLY !== "guarded") await send("bench", WARMUP);
  if (ONLY !== "bench") await send("guarded", WARMUP);
  const totals: Record<string, number> = { bench: 0, guarded: 0 };
  const threads: Record<string, Record<string, number>> = { bench: {}, guarded: {} };
  const block = 200;
  for (let b = 0; b < REQUESTS / block; b++) {
    for (const plan of b % 2 ? ["guarded", "bench"] : ["bench", "guarded"]) {
      if (ONLY && plan !== ONLY) continue;
      const c0 = cpuMs(gw.pid);
      const t0 = threadCpuMs(gw.pid);
      await send(plan, block);
      totals[plan] += cpuMs(gw.pid) - c0;
      const t1 = threadCpuMs(gw.pid);
      for (const [name, ms] of Object.entries(t1)) threads[plan][name] = (threads[plan][name] ?? 0) + ms - (t0[name] ?? 0);
    }
  }
  const perReq = (plan: string) => (totals[plan] * 1000) / REQUESTS;
  console.log(
    `gateway CPU µs/request over ${REQUESTS} each: unguarded ${perReq("bench").toFixed(0)}, guarded ${perReq("guarded").toFixed(0)}, added ${(perReq("guarded") - perReq("bench")).toFixed(0)}`,
  );
  for (const plan of ["bench", "guarded"]) {
    if (ONLY && plan !== ONLY) continue;
    const named = Object.entries(threads[plan])
      .filter(([, ms]) => ms > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([name, ms]) => `${name} ${((ms * 1000) / REQUESTS).toFixed(0)}`);
    console.log(`per thread, µs/request, ${plan === "bench" ? "unguarded" : "guarded"}: ${named.join(", ")}`);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    "Server-Timing medians (µs):",
    Object.entries(stages)
      .map(([k, xs]) => `${k} ${(med(xs) * 1000).toFixed(0)}`)
      .join(", "),
  );
} finally {
  await gw.stop();
  await sim.stop();
}
