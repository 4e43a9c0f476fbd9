#!/usr/bin/env bun
import { KeyStore, KeyStoreError } from "./auth/key-store";
import { ConfigError, loadConfig } from "./config";
import { CreditLedger } from "./credits/ledger";
import { openStorage } from "./storage/db";

const USAGE = `textai — Text-AI Gateway

  textai serve [--port N] [--host H]
  textai keys create --label TEXT [--account ID] [--plan NAME] [--credits N] [--json]
  textai keys list [--account ID] [--json]
  textai keys revoke ID
  textai credits grant --account ID --amount N [--reason TEXT]
  textai usage --account ID [--json]

Configuration comes from environment variables (PORT, HOST, TEXTAI_DB, TEXTAI_CONFIG, ...); see README.`;

class UsageError extends Error {}

function parseFlags(args: string[]): { positional: string[]; flags: Record<string, string | true> } {
  const positional: string[] = [];
  const flags: Record<string, string | true> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a.startsWith("--")) {
      const [name, inline] = a.slice(2).split("=", 2);
      if (inline !== undefined) flags[name] = inline;
      else if (i + 1 < args.length && !args[i + 1].startsWith("--")) flags[name] = args[++i];
      else flags[name] = true;
    } else positional.push(a);
  }
  return { positional, flags };
}

const str = (flags: Record<string, string | true>, name: string, required = false): string | undefined => {
  const v = flags[name];
  if (v === undefined) {
    if (required) throw new UsageError(`--${name} is required`);
    return undefined;
  }
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
};

const int = (flags: Record<string, string | true>, name: string, required = false): number | undefined => {
  const v = str(flags, name, required);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number >= 0`);
  return n;
};

function table(rows: Record<string, unknown>[], cols: string[]): string {
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? "").length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(cols), ...rows.map((r) => line(cols.map((c) => String(r[c] ?? ""))))].join("\n");
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, sub, ...rest] = argv;
  if (!cmd || cmd === "help" || cmd === "--help" || cmd === "-h") {
    console.log(USAGE);
    return cmd ? 0 : 1;
  }
  const config = loadConfig(process.env);
  if (cmd === "serve") {
    const { flags } = parseFlags(argv.slice(1));
    const port = int(flags, "port");
    if (port !== undefined) config.port = port;
    const host = str(flags, "host");
    if (host) config.host = host;
    const { startServer } = await import("./server");
    const server = startServer(config);
    console.log(`Text-AI Gateway listening on ${server.url}`);
    // The grammar engine takes seconds to load: do it now, in the background, not on the first
    // call; /ready answers 503 until it is done, so a load balancer sends traffic only after.
    server.deps.lifecycle.warming = true;
    void import("./local/grammar")
      .then((g) => g.warmGrammar())
      .catch(() => {})
      .finally(() => {
        server.deps.lifecycle.warming = false;
      });
    const shutdown = async () => {
      await server.stop();
      process.exit(0);
    };
    process.on("SIGTERM", shutdown);
    process.on("SIGINT", shutdown);
    return -1;
  }

  const storage = openStorage(config.dbPath, { busyTimeoutMs: config.dbBusyTimeoutMs });
  const ledger = new CreditLedger(storage);
  const keys = new KeyStore(storage, ledger, { welcomeCredits: config.welcomeCredits });
  try {
    // keys and credits take a sub-verb; serve and usage take their flags right after the command
    const { positional, flags } = parseFlags(cmd === "keys" || cmd === "credits" ? rest : argv.slice(1));
    const json = flags.json === true;
    if (cmd === "keys" && sub === "create") {
      const created = keys.createKey({
        label: str(flags, "label", true)!,
        accountId: str(flags, "account"),
        plan: str(flags, "plan"),
        credits: int(flags, "credits"),
      });
      if (json) console.log(JSON.stringify(created));
      else {
        console.log(`Created key ${created.id} for account ${created.account_id} (plan ${created.plan}).`);
        console.log(`\n  ${created.key}\n\nStore it now: it is shown only once and cannot be recovered.`);
      }
      return 0;
    }
    if (cmd === "keys" && sub === "list") {
      const list = keys.list(str(flags, "account"));
      if (json) console.log(JSON.stringify(list));
      else
        console.log(
          table(list as unknown as Record<string, unknown>[], [
            "id",
            "label",
            "account_id",
            "status",
            "masked_key",
            "created_at",
            "last_used_at",
          ]),
        );
      return 0;
    }
    if (cmd === "keys" && sub === "revoke") {
      const id = positional[0];
      if (!id) throw new UsageError("keys revoke needs a key id");
      if (!keys.revoke(id)) {
        console.error(`no key ${id}`);
        return 1;
      }
      console.log(`Revoked ${id}.`);
      return 0;
    }
    if (cmd === "credits" && sub === "grant") {
      const account = str(flags, "account", true)!;
      const amount = int(flags, "amount", true)!;
      if (amount < 1) throw new UsageError("--amount must be at least 1");
      if (!keys.accountExists(account)) {
        console.error(`no account ${account}`);
        return 1;
      }
      const balance = ledger.grant(account, amount, "grant", str(flags, "reason") ?? "granted with the CLI");
      console.log(`Granted ${amount} credits to ${account}; balance ${balance}.`);
      return 0;
    }
    if (cmd === "usage") {
      const account = str(flags, "account", true)!;
      if (!keys.accountExists(account)) {
        console.error(`no account ${account}`);
        return 1;
      }
      const usage = ledger.monthToDate(account);
      if (json) console.log(JSON.stringify(usage));
      else {
        console.log(`Account ${account} (plan ${usage.plan}): balance ${usage.balance}`);
        console.log(
          `This month: ${usage.requests} requests, ${usage.credits_used} credits used, ${usage.credits_granted} granted, ${usage.cached_requests} cached`,
        );
        if (usage.by_function.length) console.log(`\n${table(usage.by_function, ["function", "requests", "credits", "cached"])}`);
      }
      return 0;
    }
    throw new UsageError(`unknown command: ${[cmd, sub].filter(Boolean).join(" ")}`);
  } finally {
    storage.close();
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (err) => {
      if (err instanceof UsageError || err instanceof ConfigError || err instanceof KeyStoreError) {
        console.error(`error: ${err.message}`);
        if (err instanceof UsageError) console.error(`\n${USAGE}`);
        process.exit(2);
      }
      console.error(`error: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
