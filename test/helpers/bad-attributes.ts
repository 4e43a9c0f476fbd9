/**
 * The attributes of keys, accounts, members and key policies that come in from outside, each with
 * the values it must refuse and how each way in sends it: the one table the tests of the CLI, the
 * admin API and the dashboard walk (test/core/attribute-checks.test.ts). A new attribute is one
 * row. 2026-12-06, a newcomer walkthrough: `keys create --label ""` stored an empty label,
 * `--expires 2020-01-01` a key born expired, `--models ''` a key allowed every model, `--account ""`
 * made a new account, `--tags region=` a tag no deployment could match.
 *
 * Every value is written as text (a flag's value, a form field); the admin API sends it as JSON
 * (`json`: a string, a number literal as a number, a comma list as an array, `k=v` as an object).
 * A way in that gives a value another documented meaning returns null for it (an empty form field
 * or an empty `keys update` flag clears a field), so the test says which rows it skipped.
 */
import { Database } from "bun:sqlite";

/** What a way in is given besides the value: an account and a key the test made for the rows. */
export interface Made {
  accountId: string;
  keyId: string;
}

/** A CLI run: its arguments and, when it reads one, the password on standard input. */
export interface CliCall {
  args: string[];
  stdin?: string;
}

/** An HTTP call: JSON for the admin API and the dashboard's JSON routes, a form for the dashboard's pages. */
export interface HttpCall {
  method: "POST" | "PATCH";
  path: string;
  json?: Record<string, unknown>;
  form?: Record<string, string>;
  /** the dashboard's signed-in reader: the operator console or the account's owner */
  as?: "operator" | "owner";
}

export interface Attribute {
  /** what it is, in the test's messages */
  name: string;
  /** the `param` the API's refusal names (a refusal may name a field inside it: `policy.tags.region`) */
  param: string;
  /** the CLI flag its refusal names */
  flag: string;
  bad: string[];
  cli?: (v: string, made: Made) => CliCall | null;
  admin?: (v: string, made: Made) => HttpCall | null;
  dashboard?: (v: string, made: Made) => HttpCall | null;
}

const PASSWORD = "a long enough password";
/** A number literal stays a number in JSON (so 1e999 arrives as Infinity), anything else a string. */
const num = (v: string): unknown => (/^-?\d+(\.\d+)?(e\d+)?$/.test(v) ? JSON.parse(v) : v);
/** A comma list as the API's array: every item as typed, empty ones included. */
const list = (v: string): string[] => (v === "" ? [] : v.split(",").map((x) => x.trim()));
/** `k=v` as a tag object. */
const tags = (v: string): Record<string, string> => {
  const eq = v.indexOf("=");
  return { [v.slice(0, eq).trim()]: v.slice(eq + 1) };
};
/** An empty value clears a field of a key that exists (keys update, a policy form): not a bad value there. */
const clears = (v: string) => v.trim() === "";

const keysCreate = (...more: string[]): CliCall => ({ args: ["keys", "create", "--label", "ok", ...more] });
const newKey = (json: Record<string, unknown>): HttpCall => ({
  method: "POST",
  path: "/admin/v1/keys",
  json: { label: "ok", ...json },
});
const newPolicy = (field: string, v: unknown) => newKey({ policy: { [field]: v } });
const operatorPolicy = (made: Made, field: string, v: string): HttpCall => ({
  method: "POST",
  path: `/dashboard/operator/keys/${made.keyId}/policy`,
  form: {
    allowed_functions: "",
    allowed_models: "",
    rate_limit_per_minute: "",
    monthly_credit_limit: "",
    expires_at: "",
    [field]: v,
  },
  as: "operator",
});
const policyPatch = (made: Made, field: string, v: unknown): HttpCall => ({
  method: "PATCH",
  path: `/admin/v1/keys/${made.keyId}`,
  json: { policy: { [field]: v } },
});
const newAccount = (json: Record<string, unknown>): HttpCall => ({ method: "POST", path: "/admin/v1/accounts", json });
let fresh = 0;
/** the console's new-account form, with an email of its own (a row that wrongly passed leaves the next ones theirs) */
const operatorAccount = (form: Record<string, string>): HttpCall => ({
  method: "POST",
  path: "/dashboard/operator/accounts",
  form: { email: `new.${++fresh}@example.com`, password: PASSWORD, name: "", plan: "free", credits: "", ...form },
  as: "operator",
});
const accountsCreate = (...more: string[]): CliCall => ({
  args: ["accounts", "create", "--email", "new.one@example.com", ...more],
  stdin: `${PASSWORD}\n`,
});

/** A key policy field, on a new key (where an empty value has nothing to clear) and on a key that exists. */
function policyField(
  name: string,
  field: string,
  flag: string,
  bad: string[],
  json: (v: string) => unknown,
): [Attribute, Attribute] {
  return [
    {
      name: `a new key's ${name}`,
      param: `policy.${field}`,
      flag,
      bad: ["", ...bad],
      cli: (v) => keysCreate(flag, v),
      admin: (v) => newPolicy(field, json(v)),
    },
    {
      name: `a key's ${name}, changed`,
      param: `policy.${field}`,
      flag,
      bad,
      cli: (v, made) => (clears(v) ? null : { args: ["keys", "update", made.keyId, flag, v] }),
      admin: (v, made) => policyPatch(made, field, json(v)),
      dashboard: (v, made) => (clears(v) ? null : operatorPolicy(made, field, v)),
    },
  ];
}

export const ATTRIBUTES: Attribute[] = [
  {
    name: "a key's label",
    param: "label",
    flag: "--label",
    bad: ["", "   ", "x".repeat(201)],
    cli: (v) => ({ args: ["keys", "create", "--label", v] }),
    admin: (v) => newKey({ label: v }),
    dashboard: (v) => ({ method: "POST", path: "/dashboard/api/keys", json: { label: v }, as: "owner" }),
  },
  {
    name: "a new key's account",
    param: "account_id",
    flag: "--account",
    bad: ["", "  "],
    cli: (v) => keysCreate("--account", v),
    admin: (v) => newKey({ account_id: v }),
  },
  {
    name: "a new key's plan",
    param: "plan",
    flag: "--plan",
    bad: ["", "platnum"],
    cli: (v) => keysCreate("--plan", v),
    admin: (v) => newKey({ plan: v }),
  },
  {
    name: "a new key's credits",
    param: "credits",
    flag: "--credits",
    bad: ["", " ", "-1", "1.5", "abc", "0x10", "1000000001", "1e999"],
    cli: (v) => keysCreate("--credits", v),
    admin: (v) => newKey({ credits: num(v) }),
  },
  ...policyField(
    "allowed functions",
    "allowed_functions",
    "--functions",
    ["sentiment-analysis,", "sentiment-analysis,,text-summarize", " , ", "no-such-function"],
    list,
  ),
  ...policyField("allowed models", "allowed_models", "--models", ["gpt-4o,,gpt-4o-mini", "gpt-4o,", " , "], list),
  ...policyField("rate limit", "rate_limit_per_minute", "--rpm", ["0", "-5", "1.5", "lots", "1000000001"], num),
  ...policyField("monthly credits", "monthly_credit_limit", "--monthly-credits", ["-1", "2.5", "1000000001"], num),
  ...policyField(
    "expiry",
    "expires_at",
    "--expires",
    ["2027-02-31", "2027-13-01", "next week", "2027-01-01T25:00:00Z", "2027-01-01T10:00", "2027-01-01 10:00:00"],
    (v) => v,
  ),
  ...policyField("tags", "tags", "--tags", ["region=", "region= ", "=eu"], tags),
  {
    // a key is never born expired; on a key that exists a time past ends it at once (docs/key-policies.md)
    name: "a new key's expiry in the past",
    param: "policy.expires_at",
    flag: "--expires",
    bad: ["2020-01-01T00:00:00Z", "2001-01-01"],
    cli: (v) => keysCreate("--expires", v),
    admin: (v) => newPolicy("expires_at", v),
  },
  {
    name: "an account's name",
    param: "name",
    flag: "--name",
    // at most 254 characters: an email address, which stands for a name not given, fits
    bad: ["", "   ", "x".repeat(255)],
    admin: (v) => newAccount({ name: v }),
    // an empty field of the console's form is a name not given (the email stands for it)
    dashboard: (v) => (clears(v) ? null : operatorAccount({ name: v })),
  },
  {
    // a list written by hand: an empty item is refused, not dropped (`--events a,,b` made an endpoint of a and b)
    name: "a webhook's events",
    param: "events",
    flag: "--events",
    bad: ["balance.low,,key.expiring", "balance.low,", ",balance.low"],
    cli: (v, made) => ({
      args: [
        "webhooks",
        "add",
        "--account",
        made.accountId,
        "--url",
        "https://hooks.example.com/x",
        "--events",
        v,
        "--balance-below",
        "5",
      ],
    }),
    admin: (v, made) => ({
      method: "POST",
      path: "/admin/v1/webhooks",
      json: { account_id: made.accountId, url: "https://hooks.example.com/x", events: list(v), balance_below: 5 },
    }),
  },
  {
    name: "a new account's credits",
    param: "credits",
    flag: "--credits",
    bad: ["-1", "1.5", "abc", "1000000001", "1e999"],
    cli: (v) => accountsCreate("--credits", v),
    admin: (v) => newAccount({ credits: num(v) }),
    dashboard: (v) => operatorAccount({ credits: v }),
  },
  {
    name: "a new account's plan",
    param: "plan",
    flag: "--plan",
    bad: ["", "platnum"],
    cli: (v) => accountsCreate("--plan", v),
    admin: (v) => newAccount({ plan: v }),
    // the console's plan field left empty is the default plan
    dashboard: (v) => (clears(v) ? null : operatorAccount({ plan: v })),
  },
  {
    name: "an account's email",
    param: "email",
    flag: "--email",
    bad: ["", "   ", "not-an-email"],
    cli: (v) => ({ args: ["accounts", "create", "--email", v], stdin: `${PASSWORD}\n` }),
    admin: (v) => newAccount({ email: v, password: PASSWORD }),
    dashboard: (v) => operatorAccount({ email: v }),
  },
  {
    name: "an account's tags",
    param: "tags",
    flag: "--tags",
    bad: ["region=", "=eu"],
    cli: (v, made) => ({ args: ["accounts", "tags", "--account", made.accountId, "--tags", v] }),
    admin: (v, made) => ({ method: "PATCH", path: `/admin/v1/accounts/${made.accountId}`, json: { tags: tags(v) } }),
  },
  {
    // 2026-12-06: "amount must not be 0" was written three times (admin API, CLI, console), each its own way
    name: "a grant's amount",
    param: "amount",
    flag: "--amount",
    bad: ["0", "1.5", "abc", "1000000001", "1e999"],
    cli: (v, made) => ({ args: ["credits", "grant", "--account", made.accountId, "--amount", v] }),
    admin: (v, made) => ({ method: "POST", path: `/admin/v1/accounts/${made.accountId}/credits`, json: { amount: num(v) } }),
    dashboard: (v, made) => ({
      method: "POST",
      path: `/dashboard/operator/accounts/${made.accountId}/credits`,
      form: { amount: v, reason: "" },
      as: "operator",
    }),
  },
  {
    // an empty reason was kept by the admin API; the console cut a long one to 500 characters without a word
    name: "a grant's reason",
    param: "reason",
    flag: "--reason",
    bad: ["", "   ", "x".repeat(501)],
    cli: (v, made) => ({ args: ["credits", "grant", "--account", made.accountId, "--amount", "5", "--reason", v] }),
    admin: (v, made) => ({
      method: "POST",
      path: `/admin/v1/accounts/${made.accountId}/credits`,
      json: { amount: 5, reason: v },
    }),
    // the console's reason field left empty is a reason not given
    dashboard: (v, made) =>
      clears(v)
        ? null
        : {
            method: "POST",
            path: `/dashboard/operator/accounts/${made.accountId}/credits`,
            form: { amount: "5", reason: v },
            as: "operator",
          },
  },
  {
    name: "a member's email",
    param: "email",
    flag: "--email",
    bad: ["", "  ", "nobody"],
    cli: (v, made) => ({ args: ["members", "add", "--account", made.accountId, "--email", v, "--role", "viewer"] }),
    admin: (v, made) => ({
      method: "POST",
      path: `/admin/v1/accounts/${made.accountId}/members`,
      json: { email: v, role: "viewer" },
    }),
    dashboard: (v) => ({ method: "POST", path: "/dashboard/members", form: { email: v, role: "viewer" }, as: "owner" }),
  },
  {
    name: "a member's role",
    param: "role",
    flag: "--role",
    bad: ["", "superuser"],
    cli: (v, made) => ({ args: ["members", "add", "--account", made.accountId, "--email", "role@example.com", "--role", v] }),
    admin: (v, made) => ({
      method: "POST",
      path: `/admin/v1/accounts/${made.accountId}/members`,
      json: { email: "role@example.com", role: v },
    }),
    dashboard: (v) => ({ method: "POST", path: "/dashboard/members", form: { email: "role@example.com", role: v }, as: "owner" }),
  },
];

/** Every (attribute, bad value) a way in sends; a value with another meaning there (null) is left out. */
export function rowsFor<C>(way: (a: Attribute) => ((v: string, made: Made) => C | null) | undefined, made: Made) {
  const rows: { attr: Attribute; value: string; call: C }[] = [];
  for (const attr of ATTRIBUTES) {
    const build = way(attr);
    for (const value of build ? attr.bad : []) {
      const call = build?.(value, made);
      if (call) rows.push({ attr, value, call });
    }
  }
  return { rows };
}

/**
 * What the rows could have changed, read from the SQLite file: accounts, keys (labels, policies),
 * members, invitations, ledger rows and audit entries. Equal before and after: nothing was stored.
 */
export function stored(dbPath: string): string {
  const db = new Database(dbPath, { readonly: true });
  try {
    const all = (sql: string) => db.query(sql).all();
    return JSON.stringify({
      accounts: all("SELECT id, name, plan, balance, tags FROM accounts ORDER BY id"),
      keys: all("SELECT id, account_id, label, plan, status, policy FROM api_keys ORDER BY id"),
      members: all("SELECT id, account_id, email, name, role FROM members ORDER BY id"),
      invitations: all("SELECT id, account_id, email, role FROM invitations ORDER BY id"),
      ledger: all("SELECT count(*) AS n FROM ledger"),
      audit: all("SELECT count(*) AS n FROM audit_log"),
    });
  } finally {
    db.close();
  }
}
