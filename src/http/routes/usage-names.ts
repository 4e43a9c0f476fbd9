import { ALWAYS_ALLOWED } from "../../auth/policy";
import type { AnyFunctionDef } from "../../functions/define";
import { API_FN } from "../../providers/chat";

/** The knowledge routes' charged functions and their resources (http/routes/knowledge.ts). */
const KNOWLEDGE = ["knowledge-base-search", "faq-match", "chatbot-chat", "knowledge-bases", "faq-collections", "chatbots"];

/**
 * Every usage name a key's `allowed_functions` may hold (CONTRACT section 13): the names its calls
 * are limited and logged under. test/core/key-policies.test.ts calls every key route and fails
 * when one is limited under a name not listed here.
 */
export function usageNames(functions: readonly Pick<AnyFunctionDef, "name">[]): ReadonlySet<string> {
  return new Set([...functions.map((f) => f.name), ...Object.values(API_FN), ...KNOWLEDGE, ...ALWAYS_ALLOWED]);
}
