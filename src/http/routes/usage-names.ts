import { ALWAYS_ALLOWED, AUDIT_FN } from "../../auth/policy";
import type { Config } from "../../config";
import { ConfigError } from "../../config";
import type { AnyFunctionDef } from "../../functions/define";
import { KNOWLEDGE_FUNCTIONS } from "../../functions/registry";
import { DEFAULT_STORAGE_COSTS } from "../../knowledge/storage-charge";
import { DEFAULT_UPLOAD_COSTS } from "../../knowledge/upload";
import { API_FN } from "../../providers/chat";
import { DEFAULT_PLAN_LIMITS } from "../../ratelimit/limiter";
import { MESSAGES_FN } from "../messages-translate";

/** The knowledge routes' charged functions (functions/registry.ts) and their resources (http/routes/knowledge.ts). */
const KNOWLEDGE_FUNCTION_NAMES = [...new Set(KNOWLEDGE_FUNCTIONS.map((f) => f.name))];
const KNOWLEDGE_RESOURCES = ["knowledge-bases", "faq-collections", "chatbots"];

/** The rate-limit name of key creation (dashboard and account API): a plan's `rate_limits` may set it. */
export const KEY_CREATE_LIMIT = "key-create";

type Functions = readonly Pick<AnyFunctionDef, "name">[];
const functionNames = (functions: Functions) => [...functions.map((f) => f.name), ...KNOWLEDGE_FUNCTION_NAMES];

/**
 * Every usage name a key's `allowed_functions` may hold (CONTRACT section 13): the names its calls
 * are limited and logged under. test/core/security-matrix.test.ts calls every key route and fails
 * when one is refused under a name not listed here.
 */
export function usageNames(functions: Functions): ReadonlySet<string> {
  return new Set([
    ...functionNames(functions),
    ...Object.values(API_FN),
    MESSAGES_FN,
    ...KNOWLEDGE_RESOURCES,
    AUDIT_FN,
    ...ALWAYS_ALLOWED,
  ]);
}

/**
 * A typo in `[routes]`, `[costs]`, a plan's `rate_limits` or `[hedge_after_ms]` would be ignored
 * silently (the default route, price, limit or none would apply): start-up refuses it, naming the
 * table, the key and the names it may hold.
 */
export function checkFunctionTables(
  config: Pick<Config, "routes" | "costs" | "plans" | "hedgeAfterMs" | "planPolicies">,
  functions: Functions,
): void {
  const routed = [...functionNames(functions), ...Object.values(API_FN)];
  const tables: [string, Record<string, unknown>, string[]][] = [
    ["routes", config.routes, routed],
    [
      "costs",
      config.costs,
      [...functionNames(functions), ...Object.keys(DEFAULT_UPLOAD_COSTS), ...Object.keys(DEFAULT_STORAGE_COSTS)],
    ],
    ["hedge_after_ms", config.hedgeAfterMs, routed],
  ];
  // a plan's limit is per usage name (what a call is limited under) or per rate class
  const limited = [...usageNames(functions), KEY_CREATE_LIMIT, ...Object.keys(DEFAULT_PLAN_LIMITS.free)];
  for (const [plan, limits] of Object.entries(config.plans)) tables.push([`plans.${plan}.rate_limits`, limits, limited]);
  for (const [table, entries, known] of tables)
    for (const fn of Object.keys(entries))
      if (!known.includes(fn)) throw new ConfigError(`${table}.${fn}: unknown function (one of ${known.join(", ")})`);
  // a plan's policy ceiling names usage names too: a typo would lock every key of the plan out
  const names = [...usageNames(functions)];
  for (const [plan, p] of Object.entries(config.planPolicies))
    for (const fn of p.allowed_functions ?? [])
      if (!names.includes(fn))
        throw new ConfigError(`plans.${plan}.policy.allowed_functions: unknown function ${fn} (one of ${names.join(", ")})`);
}
