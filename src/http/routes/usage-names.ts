import { ALWAYS_ALLOWED } from "../../auth/policy";
import type { Config } from "../../config";
import { ConfigError } from "../../config";
import type { AnyFunctionDef } from "../../functions/define";
import { DEFAULT_UPLOAD_COSTS } from "../../knowledge/upload";
import { API_FN } from "../../providers/chat";

/** The knowledge routes' charged functions (knowledge/functions.ts) and their resources (http/routes/knowledge.ts). */
const KNOWLEDGE_FUNCTIONS = ["knowledge-base-search", "faq-match", "chatbot-chat"];
const KNOWLEDGE_RESOURCES = ["knowledge-bases", "faq-collections", "chatbots"];

type Functions = readonly Pick<AnyFunctionDef, "name">[];
const functionNames = (functions: Functions) => [...functions.map((f) => f.name), ...KNOWLEDGE_FUNCTIONS];

/**
 * Every usage name a key's `allowed_functions` may hold (CONTRACT section 13): the names its calls
 * are limited and logged under. test/core/security-matrix.test.ts calls every key route and fails
 * when one is refused under a name not listed here.
 */
export function usageNames(functions: Functions): ReadonlySet<string> {
  return new Set([...functionNames(functions), ...Object.values(API_FN), ...KNOWLEDGE_RESOURCES, ...ALWAYS_ALLOWED]);
}

/**
 * A typo in `[routes]` or `[costs]` would be ignored silently (the default route or price would
 * apply): start-up refuses it, naming the table, the key and the names it may hold.
 */
export function checkFunctionTables(config: Pick<Config, "routes" | "costs">, functions: Functions): void {
  const tables = {
    routes: [...functionNames(functions), ...Object.values(API_FN)],
    costs: [...functionNames(functions), ...Object.keys(DEFAULT_UPLOAD_COSTS)],
  };
  for (const [table, known] of Object.entries(tables))
    for (const fn of Object.keys(config[table as keyof typeof tables]))
      if (!known.includes(fn)) throw new ConfigError(`${table}.${fn}: unknown function (one of ${known.join(", ")})`);
}
