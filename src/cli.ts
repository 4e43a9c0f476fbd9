#!/usr/bin/env bun
import type { AuditBy } from "./audit/interface";
import { parseAuditQuery, readAuditPage, withActorId } from "./audit/query";
import { KeyStoreError } from "./auth/interface";
import { withMonthSpend } from "./auth/key-detail";
import { emailProblem, hashPassword, passwordProblem } from "./auth/passwords";
import {
  applyPolicyPatch,
  type PolicyField,
  type PolicyPatch,
  parseAccountTags,
  policyPatchFromText,
  policySummary,
} from "./auth/policy";
import { type Config, ConfigError, loadConfig, storeForLog } from "./config";
import { SqliteCreditLedger } from "./credits/sqlite";
import { memberView } from "./dashboard/members";
import { GatewayError } from "./errors";
import { FUNCTIONS } from "./functions/registry";
import { changed, inviteMember, roleFrom } from "./http/routes/members";
import { usageNames } from "./http/routes/usage-names";
import { createWebhook, endpointOf, removeWebhook, rotateWebhook } from "./http/routes/webhooks";
import { warmOfflineFunctions } from "./providers/local";
import { parseLogQuery } from "./requestlog/query";
import { buildServices, type Services } from "./services";
import { VERSION } from "./version";
import { closest, counted } from "./words";

const USAGE = `textai — Text-AI Gateway

  textai version                  (also --version: prints the version)
  textai serve [--port N] [--host H]
  textai keys create --label TEXT [--account ID] [--plan NAME] [--credits N] [POLICY] [--json]
  textai keys update ID POLICY [--json]          (POLICY flags given replace those fields; an empty value clears one)
  textai keys list [--account ID] [--json]
    POLICY: [--functions a,b] [--models m1,m2*] [--rpm N] [--monthly-credits N] [--expires ISO] [--tags k=v,...]
  textai keys revoke ID
  textai credits grant --account ID --amount N [--reason TEXT]
  textai credits reconcile        (SQLite: set every balance to the sum of its ledger)
  textai backup FILE [--json]     (SQLite: a consistent copy of the database, also while a server runs; FILE must not exist)
  textai credits journal status [--node ID] [--json]     (PostgreSQL: nodes' allowances, live and in doubt)
  textai credits journal ship FILE [--json]              (ships a stopped node's credit journal, gives its allowances back)
  textai credits journal forfeit --node ID [--json]      (gives up a node's credits in doubt: its unshipped charges are lost)
  textai usage --account ID [--json]
  textai requests [--account ID] [--function F] [--since ISO] [--until ISO] [--status S] [--key ID] [--limit N] [--json]
  textai accounts create --email EMAIL [--plan NAME] [--credits N] [--json]   (password on stdin)
  textai accounts set-login --account ID --email EMAIL                         (password on stdin)
  textai accounts tags --account ID --tags region=eu[,tier=gold] [--json]      (--tags= clears them)
  textai audit list [--account ID] [--actor A] [--action NAME] [--since ISO] [--limit N] [--json]
  textai audit verify [--json]    (walks the audit chain; exits 1 at its first broken link)
  textai members add --account ID --email EMAIL --role ROLE [--base-url URL] [--json]   (prints the one-time invitation URL)
  textai members list --account ID [--json]
  textai members role --account ID --member MEMBER_ID --role ROLE [--json]   (ROLE: owner, admin, developer, viewer)
  textai members remove --account ID --member MEMBER_ID
  textai webhooks add --url URL --events a,b [--account ID] [--balance-below N] [--spike-factor N] [--expiring-days N] [--format json|slack] [--json]
  textai webhooks list [--account ID] [--json]
  textai webhooks deliveries ID [--limit N] [--json]
  textai webhooks rotate ID [--json]    (a new secret; the one before signs too for 24 h)
  textai webhooks remove ID

Configuration comes from environment variables (PORT, HOST, TEXTAI_DB, TEXTAI_CONFIG, ...); see docs/configuration.md.`;

class UsageError extends Error {}

/** Who makes a change from the command line, for its audit entry (docs/audit.md). */
const BY_CLI: AuditBy = { actor: "cli", client: null };

/** The usage lines of the verb typed (`keys create`, else every `keys` line; with the POLICY line when they take one). */
function verbUsage(argv: string[]): string[] {
  const [cmd, sub] = argv;
  const lines = USAGE.split("\n");
  const verb = (words: string) => lines.filter((l) => l.startsWith(`  textai ${words} `) || l === `  textai ${words}`);
  let own = cmd && sub && !sub.startsWith("-") ? verb(`${cmd} ${sub}`) : [];
  if (own.length === 0 && cmd && !cmd.startsWith("-")) own = verb(cmd);
  const policy = lines.find((l) => l.trimStart().startsWith("POLICY:"));
  if (policy && own.some((l) => l.includes("POLICY"))) own.push(policy);
  return own.map((l) => l.replace(/\s+\(/, "   ("));
}

/** What follows a usage error: the usage lines of the verb typed and where the whole help is, never the whole help. */
export function usageHint(argv: string[]): string {
  const own = verbUsage(argv);
  const usage = own.length ? `usage:\n${own.join("\n")}\n` : "";
  return `${usage}run \`textai --help\` for every command`;
}

/**
 * Refuses a flag the verb's usage lines do not name (`keys create --monthly-credit 5` made a key with
 * no limit at all, exit 0): the usage lines are the one list of what each verb takes, so the help
 * and what is accepted cannot drift apart.
 */
function refuseUnknownFlags(argv: string[], flags: Record<string, string | true>): void {
  const known = new Set(verbUsage(argv).flatMap((l) => [...l.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1] as string)));
  const unknown = Object.keys(flags).find((f) => !known.has(f));
  if (unknown === undefined) return;
  const near = closest(unknown, [...known]);
  throw new UsageError(`unknown flag --${unknown}${near ? `: did you mean --${near}?` : ""}`);
}

/**
 * The flags every usage line of the verb typed names outside brackets and parentheses (`credits
 * grant --account ID --amount N`: account and amount): each must be given, checked before anything
 * is opened (so before an account is looked up).
 */
function refuseMissingFlags(argv: string[], flags: Record<string, string | true>): void {
  const each = verbUsage(argv)
    .filter((l) => l.startsWith("  textai "))
    .map((l) => {
      let depth = 0;
      let bare = "";
      for (const ch of l) {
        if (ch === "[" || ch === "(") depth++;
        else if (ch === "]" || ch === ")") depth--;
        else if (depth === 0) bare += ch;
      }
      return bare.split(" ").filter((w) => w.startsWith("--") && w.length > 2);
    });
  const required = each.length ? each.reduce((a, b) => a.filter((f) => b.includes(f))) : [];
  const missing = required.find((f) => flags[f.slice(2)] === undefined);
  if (missing !== undefined) throw new UsageError(`${missing} is required`);
  // a blank --account names no account: a usage error (exit 2), not "no account" (looked up, exit 1)
  if (typeof flags.account === "string" && flags.account.trim() === "")
    throw new UsageError(
      `--account: is empty: name an account (acc_…)${argv[0] === "keys" ? ", or leave it out to make a new one" : ""}`,
    );
}

/**
 * `--help` (or `-h`) anywhere before a `--`, after any command or verb: that verb's usage on
 * standard output, exit 0, and nothing done (`textai serve --help` starts no server; `textai keys
 * create --help` makes no key). A command it does not know: the whole help.
 */
function askedForHelp(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end < 0 ? argv : argv.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

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

/** A whole number >= 0 written in decimal digits (`Number` read "" and " " as 0 and "0x10" as 16). */
const int = (flags: Record<string, string | true>, name: string, required = false): number | undefined => {
  const v = str(flags, name, required);
  if (v === undefined) return undefined;
  const n = /^\d+$/.test(v.trim()) ? Number(v) : Number.NaN;
  if (!Number.isSafeInteger(n))
    throw new UsageError(`--${name} must be a whole number >= 0${v.trim() === "" ? " (got none)" : ""}`);
  return n;
};

const POLICY_FLAGS = {
  functions: "allowed_functions",
  models: "allowed_models",
  rpm: "rate_limit_per_minute",
  "monthly-credits": "monthly_credit_limit",
  expires: "expires_at",
  tags: "tags",
} as const;

/**
 * The key-policy flags given, as a policy patch (an empty value clears that field; `creating`: a new
 * key's, where an empty value is refused); see docs/key-policies.md. A refusal names its flag (`main`).
 */
function policyFlags(flags: Record<string, string | true>, creating = false): PolicyPatch {
  const fields: { [F in PolicyField]?: string } = {};
  for (const [flag, field] of Object.entries(POLICY_FLAGS)) {
    const v = flags[flag];
    if (v === true)
      throw new UsageError(
        creating ? `--${flag} needs a value` : `--${flag} needs a value (an empty one, --${flag}=, clears it)`,
      );
    if (v !== undefined) fields[field] = v;
  }
  return policyPatchFromText(fields, usageNames(FUNCTIONS), { creating });
}

/** The flag that gives each field a refusal may name (`param`; `policy.tags.region` is `--tags`'s). */
const FLAG_OF_PARAM: Record<string, string> = {
  label: "label",
  account_id: "account",
  plan: "plan",
  credits: "credits",
  amount: "amount",
  reason: "reason",
  email: "email",
  role: "role",
  tags: "tags",
  base_url: "base-url",
  // webhooks add
  events: "events",
  url: "url",
  balance_below: "balance-below",
  spike_factor: "spike-factor",
  expiring_days: "expiring-days",
  ...Object.fromEntries(Object.entries(POLICY_FLAGS).map(([flag, field]) => [`policy.${field}`, flag])),
};

/**
 * A value refused by the shared checks (400 invalid_request: src/auth/attributes.ts, policy.ts,
 * credits/amount.ts) said of the flag that gave it, as a usage error (exit 2):
 * `--label: must be a text of 1 to 200 characters …`.
 */
function flagRefusal(err: GatewayError): UsageError {
  const param = err.param ?? "";
  const field = Object.keys(FLAG_OF_PARAM)
    .filter((k) => param === k || param.startsWith(`${k}.`))
    .sort((a, b) => b.length - a.length)[0];
  // the API's field names in the message are the flags here ("give account_id" is "give --account")
  const flagged = (text: string) => text.replace(API_FIELD_NAMES, (name) => `--${FLAG_OF_PARAM[name]}`);
  if (field === undefined) return new UsageError(flagged(err.message));
  const own = [`${field}: `, `${field}${param === field ? " " : "."}`].find((p) => err.message.startsWith(p));
  const said = own ? err.message.slice(own.length) : err.message;
  return new UsageError(`--${FLAG_OF_PARAM[field]}: ${flagged(said)}`);
}

/** The field names of FLAG_OF_PARAM that are no English word (they hold a "_"), as whole words. */
const API_FIELD_NAMES = new RegExp(
  `\\b(?:${Object.keys(FLAG_OF_PARAM)
    .filter((k) => k.includes("_"))
    .join("|")})\\b`,
  "g",
);

/**
 * A read verb's filters: each query parameter from its flag (`params`: parameter to flag), parsed as
 * the admin API parses them; a parameter's refusal is said of its flag.
 */
function queryFromFlags<Q>(
  flags: Record<string, string | true>,
  params: Record<string, string>,
  parse: (query: Record<string, string | undefined>, opts: { admin: boolean }) => Q,
): Q {
  const query = Object.fromEntries(Object.entries(params).map(([param, flag]) => [param, str(flags, flag)]));
  try {
    return parse(query, { admin: true });
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    throw new UsageError(`--${params[err.param ?? ""] ?? err.param}: ${err.message}`);
  }
}

/** An ISO time as the tables show it: to the second, a space for the T. */
const shownTime = (iso: string) => iso.slice(0, 19).replace("T", " ");

function table(rows: Record<string, unknown>[], cols: string[]): string {
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? "").length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(cols), ...rows.map((r) => line(cols.map((c) => String(r[c] ?? ""))))].join("\n");
}

type Flags = Record<string, string | true>;

/** What a verb is given: the services, its sub-verb, its positional arguments and flags. */
/**
 * "no account X", and in which database (its SQLite file, or the PostgreSQL URL without a
 * password): the CLI opens `./data/textai.db` unless TEXTAI_DB or TEXTAI_DATABASE_URL says
 * otherwise, so an id of another gateway's database is otherwise a puzzle.
 * Said by `main` for every verb's `--account` before the verb runs (`accounts tags` again on a race).
 */
function noAccount(config: Config, account: string): void {
  console.error(`no account ${account} in ${storeForLog(config)}`);
}

interface VerbInput {
  services: Services;
  config: Config;
  sub: string | undefined;
  positional: string[];
  flags: Flags;
  json: boolean;
}

type Verb = (input: VerbInput) => Promise<number>;

/** `serve`: the gateway on its port until SIGTERM or SIGINT; -1 (the process keeps running). */
async function serveVerb(argv: string[], config: Config): Promise<number> {
  const { flags } = parseFlags(argv.slice(1));
  const port = int(flags, "port");
  if (port !== undefined) config.port = port;
  const host = str(flags, "host");
  if (host) config.host = host;
  const { PortInUse, startServer } = await import("./server");
  let server: ReturnType<typeof startServer>;
  try {
    server = startServer(config);
  } catch (err) {
    if (!(err instanceof PortInUse)) throw err;
    console.error(`textai serve: ${err.message}`);
    return 1;
  }
  // PostgreSQL: the checks that wait for the migrated database stop the server they refuse
  const running = server;
  running.checked.catch(async (err: Error) => {
    if (!(err instanceof ConfigError)) {
      running.deps.logger.log("warn", "the start's checks of [sso] could not run", { error: err.message });
      return;
    }
    console.error(`error: ${err.message}`);
    await running.stop();
    process.exit(2);
  });
  // where a newcomer goes next (the landing page's links): README.md quotes these lines, and
  // test/core/readme-startup.test.ts checks that they are what `serve` prints
  console.log(`Text-AI Gateway ${VERSION} listening on ${server.url}`);
  console.log(`  Start here  ${server.url}/  (a landing page with the version and links)`);
  console.log(`  API docs    ${server.url}/docs`);
  console.log(`  Dashboard   ${server.url}/dashboard`);
  console.log(`  Health      ${server.url}/health`);
  // Nothing heavy loads before the listener is up, so /ready answers 200 at once. When the offline
  // engine comes first on every function's route (no provider configured for functions: it serves
  // them all), its parts then load in the background, in slices that leave the event loop free
  // between them (src/offline-engine/engines.ts), and each function runs once on its example
  // (src/providers/local.ts). Otherwise nothing loads until an offline call, which loads the parts it
  // uses the same sliced way and waits for them (an await, not a hold): the parts take 80 to 130 MB of
  // heap, and a gateway that mostly forwards would pay for them in every garbage collection
  // (/v1 CPU per call about 1.2x to 1.7x with them loaded, 2026-12-05; docs/offline-engine.md).
  const allOffline = FUNCTIONS.every((def) => {
    const first = server.deps.router.routeFor(def)[0];
    return first === undefined || server.deps.providers.get(first)?.inProcess === true;
  });
  if (allOffline) void warmOfflineFunctions(FUNCTIONS);
  const shutdown = async () => {
    await server.stop();
    process.exit(0);
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  return -1;
}

/** `keys create`: a key (its plaintext printed once), with a policy when flags give one. */
async function keysCreate({ flags, json, services }: VerbInput): Promise<number> {
  const { keys } = services;
  const created = await keys.createKey({
    label: str(flags, "label", true)!,
    accountId: str(flags, "account"),
    plan: str(flags, "plan"),
    credits: int(flags, "credits"),
    policy: applyPolicyPatch(undefined, policyFlags(flags, true)),
    audit: BY_CLI,
  });
  const policy = (await keys.get(created.id))?.policy;
  if (json) console.log(JSON.stringify(policy && policySummary(policy) !== "-" ? { ...created, policy } : created));
  else {
    console.log(`Created key ${created.id} for account ${created.account_id} (plan ${created.plan}).`);
    if (policy && policySummary(policy) !== "-") console.log(`Policy: ${policySummary(policy)}`);
    console.log(`\n  ${created.key}\n\nStore it now: it is shown only once and cannot be recovered.`);
  }
  return 0;
}

/** `keys list`: every key (masked), or one account's. */
async function keysList({ flags, json, services }: VerbInput): Promise<number> {
  const { keys } = services;
  // an account that does not exist was said so (exit 1, main), not an empty table
  const list = await keys.list(str(flags, "account"));
  if (json) console.log(JSON.stringify(list));
  else
    console.log(
      table(
        list.map((k) => ({ ...k, policy: policySummary(k.policy) })),
        ["id", "label", "account_id", "status", "masked_key", "created_at", "last_used_at", "policy"],
      ),
    );
  return 0;
}

/** `keys update ID`: the policy fields the flags give. */
async function keysUpdate({ positional, flags, json, services }: VerbInput): Promise<number> {
  const { keys, ledger } = services;
  const id = positional[0];
  if (!id) throw new UsageError("keys update needs a key id");
  const patch = policyFlags(flags);
  if (Object.keys(patch).length === 0)
    throw new UsageError(
      `keys update needs at least one of ${Object.keys(POLICY_FLAGS)
        .map((f) => `--${f}`)
        .join(", ")}`,
    );
  const view = await keys.setPolicy(id, patch, { audit: BY_CLI });
  if (!view) {
    console.error(`no key ${id}`);
    return 1;
  }
  const detail = await withMonthSpend(ledger, view);
  if (json) console.log(JSON.stringify(detail));
  else
    console.log(
      `Updated ${id}: ${policySummary(view.policy)} (${counted(detail.month_credits_used, "credit")} spent this month)`,
    );
  return 0;
}

/** `keys revoke ID`. */
async function keysRevoke({ positional, services }: VerbInput): Promise<number> {
  const { keys } = services;
  const id = positional[0];
  if (!id) throw new UsageError("keys revoke needs a key id");
  if (!(await keys.revoke(id, undefined, BY_CLI))) {
    console.error(`no key ${id}`);
    return 1;
  }
  console.log(`Revoked ${id}.`);
  return 0;
}

/** `accounts create` and `accounts set-login`: an account that signs in to the dashboard (password on stdin). */
async function accountLogin({ services, sub, flags, json }: VerbInput): Promise<number> {
  const { keys } = services;
  const store = services.dashboard;
  const email = str(flags, "email", true)!.trim().toLowerCase();
  const problem = emailProblem(email);
  if (problem) throw new GatewayError("invalid_request", problem, { param: "email" });
  const password = await readPassword();
  const weak = passwordProblem(password);
  if (weak) throw new UsageError(weak);
  if (await store.loginByEmail(email)) {
    const existing = await store.loginByEmail(email);
    if (sub === "create" || existing?.accountId !== str(flags, "account")) {
      console.error(`the email ${email} already signs in to another account`);
      return 1;
    }
  }
  let accountId: string;
  const passwordHash = await hashPassword(password);
  if (sub === "create") {
    const login = { email, passwordHash };
    const acc = await keys.createAccount({
      name: email,
      plan: str(flags, "plan"),
      credits: int(flags, "credits"),
      login,
      audit: BY_CLI,
    });
    accountId = acc.id;
  } else {
    // an account that does not exist was said so (main)
    accountId = str(flags, "account", true)!;
    await store.setLogin(accountId, email, passwordHash, BY_CLI);
  }
  const acc = await keys.getAccount(accountId);
  if (json) console.log(JSON.stringify({ account_id: accountId, email, plan: acc?.plan, balance: acc?.balance }));
  else
    console.log(
      sub === "create"
        ? `Created account ${accountId} (plan ${acc?.plan}, balance ${acc?.balance}); it signs in as ${email}.`
        : `Account ${accountId} now signs in as ${email}; its earlier sessions have ended.`,
    );
  return 0;
}

/** `accounts tags`: an account's residency and routing tags (docs/routing.md); `--tags=` clears them. */
async function accountTags({ services, flags, json, config }: VerbInput): Promise<number> {
  const account = str(flags, "account", true)!;
  const raw = flags.tags;
  if (raw === undefined || raw === true)
    throw new UsageError("--tags needs a value, e.g. --tags region=eu,tier=gold (an empty one, --tags=, clears them)");
  let tags: Record<string, string> | null;
  try {
    tags = parseAccountTags(raw);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    throw new UsageError(`--tags: ${err.message}`);
  }
  const acc = await services.keys.setAccountTags(account, tags, BY_CLI);
  if (!acc) {
    noAccount(config, account);
    return 1;
  }
  if (json) console.log(JSON.stringify(acc));
  else console.log(`Account ${account} tags: ${acc.tags ? JSON.stringify(acc.tags) : "none"}`);
  return 0;
}

/** `credits grant`: credits for an account (a ledger entry). */
async function creditsGrant({ flags, services }: VerbInput): Promise<number> {
  const { ledger } = services;
  const account = str(flags, "account", true)!;
  const amount = int(flags, "amount", true)!;
  if (amount < 1) throw new UsageError("--amount must be at least 1");
  const balance = await ledger.grant(account, amount, "grant", str(flags, "reason") ?? "granted with the CLI", BY_CLI);
  console.log(`Granted ${counted(amount, "credit")} to ${account}; balance ${balance}.`);
  return 0;
}

/** `credits reconcile` (SQLite): every balance set to the sum of its ledger. */
async function creditsReconcile({ services }: VerbInput): Promise<number> {
  const { ledger } = services;
  if (!(ledger instanceof SqliteCreditLedger)) {
    // PostgreSQL changes a balance and writes its ledger row in one transaction: they cannot drift
    console.error("credits reconcile is for a SQLite database; on PostgreSQL balances and ledger change together");
    return 1;
  }
  const changed = ledger.reconcile(BY_CLI);
  console.log(`Reconciled balances with the ledger: ${changed} account${changed === 1 ? "" : "s"} corrected.`);
  return 0;
}

/** What `credits journal status` shows of a node: its allowances, those of live leases and those in doubt. */
type JournalNode = {
  node_id: string;
  live_leases: number;
  allowances: number;
  allowance_credits: number;
  in_doubt: number;
  in_doubt_credits: number;
  shipped_seq: number | null;
};

/** A lease row still counting (its node renewing it), by the database's clock. */
const LIVE = "expires_at > (extract(epoch from clock_timestamp()) * 1000)::bigint";

async function journalNodes(sql: import("bun").SQL, node?: string): Promise<JournalNode[]> {
  const rows = await sql.unsafe(
    `WITH n AS (SELECT DISTINCT node_id FROM credit_holds WHERE node_id IS NOT NULL
        UNION SELECT node_id FROM credit_journal_shipped)
     SELECT n.node_id,
       (SELECT count(*) FROM credit_holds l WHERE l.node_id = n.node_id AND l.lease_of IS NULL AND l.${LIVE})::int AS live_leases,
       (SELECT count(*) FROM credit_holds a WHERE a.node_id = n.node_id AND a.lease_of IS NOT NULL)::int AS allowances,
       (SELECT coalesce(sum(a.amount), 0) FROM credit_holds a WHERE a.node_id = n.node_id AND a.lease_of IS NOT NULL)::float8 AS allowance_credits,
       (SELECT count(*) FROM credit_holds a WHERE a.node_id = n.node_id AND a.lease_of IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM credit_holds l WHERE l.id = a.lease_of AND l.${LIVE}))::int AS in_doubt,
       (SELECT coalesce(sum(a.amount), 0) FROM credit_holds a WHERE a.node_id = n.node_id AND a.lease_of IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM credit_holds l WHERE l.id = a.lease_of AND l.${LIVE}))::float8 AS in_doubt_credits,
       (SELECT max(j.shipped_seq) FROM credit_journal_shipped j WHERE j.node_id = n.node_id)::float8 AS shipped_seq
     FROM n WHERE $1::text IS NULL OR n.node_id = $1 ORDER BY n.node_id`,
    [node ?? null],
  );
  return (rows as JournalNode[]).map((r) => ({
    ...r,
    allowance_credits: Number(r.allowance_credits),
    in_doubt_credits: Number(r.in_doubt_credits),
    shipped_seq: r.shipped_seq === null ? null : Number(r.shipped_seq),
  }));
}

const NODE_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * `credits journal status|ship|forfeit` (PostgreSQL, docs/many-nodes.md#credit-journal): what
 * nodes keep in doubt for their journals, shipping a journal file whose node is gone, and giving
 * up a node's credits in doubt.
 */
async function creditsJournal({ positional, flags, json, services }: VerbInput): Promise<number> {
  const [action, ...more] = positional;
  if (action !== "status" && action !== "ship" && action !== "forfeit")
    throw new UsageError("credits journal needs one of: status, ship FILE, forfeit --node ID");
  const pg = services.postgres;
  if (!pg) {
    console.error(
      "credits journal is for PostgreSQL (TEXTAI_DATABASE_URL): a SQLite node charges in its own file, with no journal",
    );
    return 1;
  }
  const node = str(flags, "node");
  if (node !== undefined && !NODE_ID.test(node))
    throw new UsageError("--node must be a node id: 1 to 64 letters, digits, '_', '.' or '-'");
  if (action === "status") {
    if (more.length) throw new UsageError(`credits journal status takes no argument, got "${more[0]}"`);
    const nodes = await journalNodes(pg.sql, node);
    if (json) console.log(JSON.stringify(nodes));
    else if (nodes.length === 0) console.log(node ? `No allowance or journal of node ${node}.` : "No node has a credit journal.");
    else
      console.log(
        table(nodes, [
          "node_id",
          "live_leases",
          "allowances",
          "allowance_credits",
          "in_doubt",
          "in_doubt_credits",
          "shipped_seq",
        ]),
      );
    return 0;
  }
  if (action === "forfeit") {
    if (more.length) throw new UsageError(`credits journal forfeit takes --node ID, got "${more[0]}"`);
    if (node === undefined) throw new UsageError("--node is required");
    const released = await pg.sql.begin(async (tx) => {
      const rows = (await tx.unsafe(
        `DELETE FROM credit_holds a WHERE a.node_id = $1 AND a.lease_of IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM credit_holds l WHERE l.id = a.lease_of AND l.${LIVE})
         RETURNING a.account_id, a.amount::float8 AS amount`,
        [node],
      )) as { account_id: string; amount: number }[];
      const byAccount: Record<string, number> = {};
      for (const r of rows) byAccount[r.account_id] = (byAccount[r.account_id] ?? 0) + Number(r.amount);
      const credits = rows.reduce((n, r) => n + Number(r.amount), 0);
      if (rows.length > 0) {
        const { appendAuditIn } = await import("./audit/postgres");
        await appendAuditIn(tx, {
          actor: "cli",
          client: null,
          action: "credits.journal.forfeit",
          accountId: null,
          targetId: node,
          before: { in_doubt_credits: credits, accounts: byAccount },
          after: { in_doubt_credits: 0 },
        });
      }
      return { credits, accounts: byAccount, allowances: rows.length };
    });
    const [still] = await journalNodes(pg.sql, node);
    if (json) console.log(JSON.stringify({ node_id: node, ...released, live_leases: still?.live_leases ?? 0 }));
    else {
      console.log(
        released.allowances === 0
          ? `Node ${node} has no credits in doubt.`
          : `Forfeited ${counted(released.credits, "credit")} in doubt of node ${node} (${counted(released.allowances, "allowance")}, ${counted(Object.keys(released.accounts).length, "account")}): the accounts can spend them again; charges left in that node's journal are applied later only if the balance still covers them.`,
      );
      if (still && still.live_leases > 0)
        console.log(
          `Node ${node} still holds ${counted(still.live_leases, "live lease")}: it is running, and their allowances stay.`,
        );
    }
    return 0;
  }
  // ship FILE
  const [file, extra] = more;
  if (!file) throw new UsageError("credits journal ship needs the journal FILE");
  if (extra) throw new UsageError(`credits journal ship takes one FILE, got also "${extra}"`);
  if (node !== undefined) throw new UsageError("credits journal ship reads the node from the FILE: no --node");
  if (!(await Bun.file(file).exists())) {
    console.error(`no such file: ${file}`);
    return 1;
  }
  const { CreditJournal } = await import("./credits/journal");
  const { PostgresCreditLedger } = await import("./credits/postgres");
  const ledger = services.ledger;
  if (!(ledger instanceof PostgresCreditLedger)) throw new Error("the ledger is not PostgreSQL's");
  const journal = new CreditJournal(file, null, { create: false });
  const [live] = await journalNodes(pg.sql, journal.nodeId);
  if (live && live.live_leases > 0) {
    journal.close();
    console.error(
      `node ${journal.nodeId} holds ${counted(live.live_leases, "live lease")}: it is running (or died less than a lease ago). Stop it, or wait for its leases to lapse, then ship.`,
    );
    return 1;
  }
  const pending = journal.pending();
  const credits = pending.reduce((n, e) => n + e.amount, 0);
  const shipped = ledger.useJournal(journal, { shipMs: 50 });
  const done = await Promise.race([shipped.then(() => true), Bun.sleep(30_000).then(() => false)]);
  if (!done) {
    console.error("PostgreSQL did not take the journal within 30 s: nothing deleted from it; try again");
    return 1;
  }
  const stats = ledger.journalStats;
  const out = {
    node_id: journal.nodeId,
    entries: pending.length,
    credits,
    applied_before: stats.duplicates,
    not_covered: stats.lost,
  };
  if (json) console.log(JSON.stringify(out));
  else
    console.log(
      `Shipped ${counted(pending.length, "entry")} (${counted(credits, "credit")}) of node ${journal.nodeId}'s journal${stats.duplicates ? ` (${stats.duplicates} applied before, skipped)` : ""}${stats.lost ? `; ${stats.lost} not covered (forfeited before), not charged` : ""}; its allowances are given back. The file is now empty.`,
    );
  return 0;
}

/** `usage`: an account's balance and this month's use. */
/**
 * `backup FILE`: SQLite writes a consistent copy of the database (VACUUM INTO: it reads one
 * snapshot, so a running server's writes go on), checked whole before it is reported. A file that
 * exists is never overwritten; on PostgreSQL the copy is pg_dump's to make.
 */
async function backupVerb({ config, positional, json }: Pick<VerbInput, "config" | "positional" | "json">): Promise<number> {
  const target = positional[0];
  if (!target || positional.length > 1) throw new UsageError("give the one file to write: textai backup FILE");
  if (config.databaseUrl) {
    console.error(
      "error: textai backup copies the SQLite file; a PostgreSQL database is backed up with pg_dump (docs/operations.md)",
    );
    return 1;
  }
  if (config.dbPath === ":memory:") throw new UsageError("TEXTAI_DB is :memory:, which has no file to copy");
  const { existsSync, statSync } = await import("node:fs");
  if (existsSync(target)) throw new UsageError(`${target} exists: give a new file (a backup never overwrites one)`);
  const { Database } = await import("bun:sqlite");
  const db = new Database(config.dbPath);
  try {
    db.exec(`VACUUM INTO '${target.replaceAll("'", "''")}'`);
  } finally {
    db.close();
  }
  const copy = new Database(target, { readonly: true });
  let check: string;
  try {
    check = String((copy.query("PRAGMA integrity_check").get() as Record<string, unknown>).integrity_check);
  } finally {
    copy.close();
  }
  if (check !== "ok") {
    console.error(`error: the copy ${target} failed SQLite's integrity check: ${check}`);
    return 1;
  }
  const bytes = statSync(target).size;
  if (json) console.log(JSON.stringify({ file: target, bytes, integrity_check: check }));
  else console.log(`backed up ${config.dbPath} to ${target} (${counted(bytes, "byte")}, integrity check ok)`);
  return 0;
}

async function usageVerb({ flags, json, services }: VerbInput): Promise<number> {
  const { ledger } = services;
  const account = str(flags, "account", true)!;
  const usage = await ledger.monthToDate(account);
  if (json) console.log(JSON.stringify(usage));
  else {
    console.log(`Account ${account} (plan ${usage.plan}): balance ${usage.balance}`);
    console.log(
      `This month: ${counted(usage.requests, "request")}, ${counted(usage.credits_used, "credit")} used, ${usage.credits_granted} granted, ${usage.cached_requests} cached`,
    );
    if (usage.by_function.length)
      console.log(
        `\n${table(usage.by_function, ["function", "requests", "credits", "cached", "input_tokens", "output_tokens"])}`,
      );
  }
  return 0;
}

/** `requests`: the request log, filtered by the flags. */
async function requestsVerb({ services, flags, json }: VerbInput): Promise<number> {
  const q = queryFromFlags(
    flags,
    { account_id: "account", function: "function", from: "since", to: "until", status: "status", key_id: "key", limit: "limit" },
    parseLogQuery,
  );
  // an account that does not exist was said so (exit 1, main), not "No requests match."
  const entries = await services.requestLog.page(q);
  if (json) console.log(JSON.stringify(entries));
  else if (entries.length === 0) console.log("No requests match.");
  else
    console.log(
      table(entries.map((e) => ({ ...e, time: shownTime(e.time) })) as unknown as Record<string, unknown>[], [
        "time",
        "request_id",
        "account_id",
        "key_id",
        "function",
        "status",
        "error_code",
        "credits",
        "latency_ms",
        "provider",
        "cache",
      ]),
    );
  return 0;
}

/** `audit list`: the audit trail, newest first, filtered by the flags. */
async function auditList({ services, flags, json }: VerbInput): Promise<number> {
  const q = queryFromFlags(
    flags,
    { account_id: "account", actor: "actor", action: "action", since: "since", limit: "limit" },
    parseAuditQuery,
  );
  const byEmail = async (email: string) => (await services.dashboard.loginByEmail(email))?.memberId ?? null;
  const { data } = await readAuditPage((x) => services.audit.page(x), await withActorId(q, byEmail));
  if (json) console.log(JSON.stringify(data));
  else if (data.length === 0) console.log("No audit entries match.");
  else
    console.log(
      table(
        data.map((e) => ({
          ...e,
          time: shownTime(e.time),
          change: `${JSON.stringify(e.before)} -> ${JSON.stringify(e.after)}`,
        })),
        ["seq", "time", "actor", "account_id", "action", "target_id", "client", "change"],
      ),
    );
  return 0;
}

/** `audit verify`: walks the chain; 1 (and the first broken link) when it is broken. */
async function auditVerify({ services, json }: VerbInput): Promise<number> {
  const r = await services.audit.verify();
  if (json) console.log(JSON.stringify(r));
  else if (r.ok) console.log(`Audit chain intact: ${counted(r.entries, "entry")}; head ${r.head.seq} ${r.head.hash}`);
  else {
    console.error(`Audit chain broken at entry ${r.broken.seq}${r.broken.id ? ` (${r.broken.id})` : ""}: ${r.broken.problem}`);
    console.error(`${counted(r.entries, "entry")} before it ${r.entries === 1 ? "is" : "are"} intact.`);
  }
  return r.ok ? 0 : 1;
}

/** `webhooks add`: an alert endpoint (docs/alerts.md); its secret printed once. */
async function webhooksAdd({ flags, json, services }: VerbInput): Promise<number> {
  const num = (name: string) => int(flags, name) ?? null;
  const format = str(flags, "format");
  if (format !== undefined && format !== "json" && format !== "slack") throw new UsageError("--format is json or slack");
  const created = await createWebhook(
    services,
    {
      account_id: str(flags, "account") ?? null,
      url: str(flags, "url", true)!,
      events: (str(flags, "events", true) ?? "").split(",").map((e) => e.trim()),
      balance_below: num("balance-below"),
      spike_factor: num("spike-factor"),
      expiring_days: num("expiring-days"),
      format,
    },
    BY_CLI,
  );
  if (json) console.log(JSON.stringify(created));
  else
    console.log(
      `Created webhook ${created.id} (${created.events.join(", ")}).\n\n  ${created.secret}\n\nStore the secret now: it is shown only once.`,
    );
  return 0;
}

/** `webhooks list`: every endpoint, or one account's (never a secret). */
async function webhooksList({ flags, json, services }: VerbInput): Promise<number> {
  const list = await services.alerts.store.list(str(flags, "account"));
  if (json) console.log(JSON.stringify(list));
  else
    console.log(
      table(
        list.map((w) => ({ ...w, events: w.events.join(",") })),
        ["id", "account_id", "url", "events", "format", "created"],
      ),
    );
  return 0;
}

/** `webhooks deliveries ID`: an endpoint's recent deliveries. */
async function webhooksDeliveries({ positional, flags, json, services }: VerbInput): Promise<number> {
  const e = await endpointOf(services, positional[0] ?? "");
  const list = await services.alerts.store.deliveries(e.id, int(flags, "limit") ?? 50);
  if (json) console.log(JSON.stringify(list));
  else
    console.log(
      table(
        list.map((d) => ({ ...d })),
        ["id", "event_id", "type", "status", "attempts", "last_status_code", "created"],
      ),
    );
  return 0;
}

/** `webhooks rotate ID` and `webhooks remove ID`. */
async function webhooksChange({ sub, positional, json, services }: VerbInput): Promise<number> {
  const e = await endpointOf(services, positional[0] ?? "");
  if (sub === "remove") {
    await removeWebhook(services, e, BY_CLI);
    console.log(json ? JSON.stringify({ id: e.id, removed: true }) : `Removed ${e.id}.`);
    return 0;
  }
  const r = await rotateWebhook(services, e, BY_CLI);
  if (json) console.log(JSON.stringify(r));
  else console.log(`New secret for ${e.id}:\n\n  ${r.secret}\n\nThe one before signs too until ${r.previous_valid_until}.`);
  return 0;
}

/**
 * Where `members add` prints the invitation link: `--base-url`; else the address single sign-on is
 * registered at (`[sso] redirect_uri`, the dashboard's public address); else the server serving this
 * database (noted beside the file, so `serve --port 9000` is followed); else HOST and PORT as `serve`
 * would listen, an unspecified host (0.0.0.0, ::) as the loopback one, an IPv6 one in brackets. It
 * was `http://HOST:PORT` always: port 8080 with the server elsewhere, `http://:::8080` on HOST=::.
 */
async function invitationBase(flags: Flags, config: Config): Promise<string> {
  const given = str(flags, "base-url");
  if (given !== undefined) {
    const u = URL.canParse(given.trim()) ? new URL(given.trim()) : null;
    if (!u || !["http:", "https:"].includes(u.protocol) || u.search || u.hash)
      throw new GatewayError(
        "invalid_request",
        `base_url must be the http(s) address members reach the dashboard at, such as https://gateway.example.com (got "${given}")`,
        { param: "base_url" },
      );
    return u.href.replace(/\/+$/, "");
  }
  if (config.sso) {
    const redirect = new URL(config.sso.redirectUri);
    return redirect.origin + redirect.pathname.replace(/\/dashboard\/sso\/callback$/, "");
  }
  const { reachableUrl, servingUrl } = await import("./server");
  return (config.databaseUrl ? null : servingUrl(config.dbPath)) ?? reachableUrl(config.host, config.port);
}

/** `members add|list|role|remove` (docs/teams.md): an account's members, as the admin API's member routes. */
async function membersVerb({ services, sub, flags, json, config }: VerbInput): Promise<number> {
  const store = services.dashboard;
  const account = str(flags, "account", true) as string;
  try {
    let result: Record<string, unknown> | Record<string, unknown>[];
    if (sub === "list") {
      result = (await store.listMembers(account)).map(memberView);
    } else if (sub === "add") {
      const role = roleFrom(str(flags, "role", true));
      const base = await invitationBase(flags, config);
      result = await inviteMember({ dashboard: store, config }, account, str(flags, "email", true) as string, role, BY_CLI, base);
    } else {
      const member = str(flags, "member", true) as string;
      const r =
        sub === "role"
          ? await store.setRole(account, member, roleFrom(str(flags, "role", true)), BY_CLI)
          : await store.removeMember(account, member, BY_CLI);
      result = changed(r);
    }
    if (json) console.log(JSON.stringify(result, null, 2));
    else if (Array.isArray(result)) console.log(table(result, ["id", "email", "name", "role", "created_at"]));
    else if (sub === "add")
      console.log(`Invited ${result.email} as ${result.role}; the link works once, until ${result.expires_at}:\n${result.url}`);
    else console.log(sub === "remove" ? `Removed ${result.email}.` : `${result.email} is now ${result.role}.`);
    return 0;
  } catch (e) {
    // a bad value is a usage error (exit 2, naming its flag: main); a refusal of the change exits 1
    if (!(e instanceof GatewayError) || e.code === "invalid_request") throw e;
    console.error(`error: ${e.message}`);
    return 1;
  }
}

/** The commands that take a sub-verb (`keys create`): their flags follow the sub-verb. */
const SUB_VERBS = new Map<string, Map<string, Verb>>([
  [
    "keys",
    new Map([
      ["create", keysCreate],
      ["list", keysList],
      ["update", keysUpdate],
      ["revoke", keysRevoke],
    ]),
  ],
  [
    "accounts",
    new Map([
      ["create", accountLogin],
      ["set-login", accountLogin],
      ["tags", accountTags],
    ]),
  ],
  [
    "credits",
    new Map([
      ["grant", creditsGrant],
      ["reconcile", creditsReconcile],
      ["journal", creditsJournal],
    ]),
  ],
  [
    "audit",
    new Map([
      ["list", auditList],
      ["verify", auditVerify],
    ]),
  ],
  ["members", new Map<string, Verb>(["add", "list", "role", "remove"].map((v) => [v, membersVerb]))],
  [
    "webhooks",
    new Map([
      ["add", webhooksAdd],
      ["list", webhooksList],
      ["deliveries", webhooksDeliveries],
      ["rotate", webhooksChange],
      ["remove", webhooksChange],
    ]),
  ],
]);
/** The commands that take none (`usage`): their flags follow the command. */
const VERBS = new Map<string, Verb>([
  ["backup", backupVerb],
  ["usage", usageVerb],
  ["requests", requestsVerb],
]);

/** Every verb, as typed (`keys create`, `usage`): the audit test checks each changes state with one entry, or none. */
export const CLI_VERBS: readonly string[] = [
  "serve",
  ...[...SUB_VERBS].flatMap(([cmd, subs]) => [...subs.keys()].map((sub) => `${cmd} ${sub}`)),
  ...VERBS.keys(),
];

export async function main(argv: string[]): Promise<number> {
  const [cmd, sub, ...rest] = argv;
  if (!cmd || cmd === "help" || cmd === "--help" || cmd === "-h") {
    console.log(USAGE);
    return cmd ? 0 : 1;
  }
  if (askedForHelp(argv)) {
    const own = verbUsage(argv);
    console.log(own.length ? `usage:\n${own.join("\n")}\nrun \`textai --help\` for every command` : USAGE);
    return 0;
  }
  if (cmd === "version" || cmd === "--version" || cmd === "-v") {
    console.log(`Text-AI Gateway ${VERSION}`);
    return 0;
  }
  let config = loadConfig(process.env);
  if (cmd !== "serve") config = await withServersConfig(config);
  if (cmd === "serve") {
    refuseUnknownFlags(argv, parseFlags(argv.slice(1)).flags);
    return serveVerb(argv, config);
  }

  // what was typed is checked before anything is opened
  const verbs = SUB_VERBS.get(cmd);
  const { positional, flags } = parseFlags(verbs ? rest : argv.slice(1));
  const verb = verbs ? verbs.get(sub ?? "") : VERBS.get(cmd);
  if (!verb) throw new UsageError(`unknown command: ${[cmd, sub].filter(Boolean).join(" ")}`);
  refuseUnknownFlags(argv, flags);
  refuseMissingFlags(argv, flags);
  // a backup opens no service: SQLite copies its own file, and PostgreSQL's is pg_dump's
  if (verb === backupVerb) return backupVerb({ config, positional, json: flags.json === true });
  const services = buildServices(config);
  try {
    await services.ready();
    // every verb's --account names an account of this database, or nothing is done (one check, one message)
    if (typeof flags.account === "string" && !(await services.keys.accountExists(flags.account))) {
      noAccount(config, flags.account);
      return 1;
    }
    return await verb({ services, config, sub, positional, flags, json: flags.json === true });
  } catch (err) {
    throw err instanceof GatewayError && err.code === "invalid_request" ? flagRefusal(err) : err;
  } finally {
    await services.close();
  }
}

/**
 * A verb reads the config file of the server running on the same SQLite database when TEXTAI_CONFIG
 * is not set (its plans, welcome credits and prices: a key made without it got the defaults'), and
 * says so; with another file set, it warns that the two differ.
 */
async function withServersConfig(config: Config): Promise<Config> {
  if (config.databaseUrl) return config;
  const { servingConfig } = await import("./server");
  const served = servingConfig(config.dbPath);
  if (served === undefined || served === (config.configFile ?? null)) return config;
  if (!config.configFile && served) {
    console.error(
      `note: reading ${served}, the config file of the server running on ${config.dbPath} (TEXTAI_CONFIG is not set)`,
    );
    return loadConfig({ ...process.env, TEXTAI_CONFIG: served });
  }
  console.error(
    `warning: the server running on ${config.dbPath} reads ${served ?? "no config file"}; this command reads ${config.configFile ?? "none"} (TEXTAI_CONFIG)`,
  );
  return config;
}

/** The password: the first line of standard input (never a flag, which would land in shell history and ps). */
async function readPassword(): Promise<string> {
  const text = await new Response(Bun.stdin.stream()).text();
  const line = text.split(/\r?\n/, 1)[0] ?? "";
  if (!line) throw new UsageError("give the password on the first line of standard input");
  return line;
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exit(code);
    },
    (err) => {
      if (err instanceof UsageError || err instanceof ConfigError || err instanceof KeyStoreError) {
        console.error(`error: ${err.message}`);
        if (err instanceof UsageError) console.error(usageHint(process.argv.slice(2)));
        process.exit(2);
      }
      console.error(`error: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
