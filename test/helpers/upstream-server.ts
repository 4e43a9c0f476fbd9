/**
 * The upstream simulator (upstream.ts) as a process of its own, for trying `/v1` without a vendor
 * account (docs/openai-compatible.md#try-v1-without-a-vendor-account):
 *
 *   npx -y bun@1.4.5 test/helpers/upstream-server.ts --port 9100 [--latency-ms N]
 *
 * An OpenAI-compatible server on 127.0.0.1 that answers every model (chat completions, plain and
 * streamed, the Responses API, embeddings, images) with synthetic text. It keeps no record of what
 * it is sent. `--port 0` picks a free port; the first line printed names the address.
 */
import { startUpstream } from "./upstream";

function option(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(args[i + 1]);
  if (!Number.isInteger(value) || value < 0) {
    console.error(
      `${name} needs a whole number (got ${args[i + 1] ?? "nothing"}); usage: upstream-server.ts [--port N] [--latency-ms N]`,
    );
    process.exit(2);
  }
  return value;
}

const args = process.argv.slice(2);
const port = option(args, "--port", 9100);
const sim = await startUpstream({ port, latencyMs: option(args, "--latency-ms", 0), record: false }).catch((err) => {
  console.error(`upstream simulator: cannot listen on 127.0.0.1:${port} (${(err as Error).message}); pick another with --port`);
  process.exit(1);
});
console.log(`upstream simulator listening on ${sim.url} (OpenAI-compatible base_url ${sim.url}/v1); Ctrl-C stops it`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    void sim.close().then(() => process.exit(0));
  });
