/**
 * Offline routing decisions for email-workflow and ticket-workflow: what happens next, computed
 * from the message's intent, priority and spam signals, and mapped onto the caller's own action
 * names when they gave a list.
 */
import { detectSpam } from "../../offline-engine/spam";
import type { Priority, WriterSentiment } from "./signals";

export type Action = "escalate" | "archive" | "forward" | "reply";

/** Words a caller's action name may use for each decision, best fit first. */
const ACTION_WORDS: Record<Action, RegExp> = {
  escalate: /escalat|urgent|priorit|manager|supervisor|page|alert|flag/i,
  archive: /archive|ignore|close|discard|delete|spam|trash|no[_ -]?action|dismiss|junk|label/i,
  forward: /forward|route|assign|transfer|delegate|handoff|hand[_ -]off|send[_ -]to|triage/i,
  reply: /reply|respond|answer|acknowledge|auto[_ -]?reply|draft|follow[_ -]?up/i,
};

/** If the preferred action is not on the caller's list, the next best stand-in. */
const FALLBACKS: Record<Action, Action[]> = {
  escalate: ["escalate", "forward", "reply"],
  archive: ["archive"],
  forward: ["forward", "reply"],
  reply: ["reply", "forward"],
};

const AUTOMATED =
  /\b(?:newsletter|unsubscribe|no-?reply|do not reply|automated message|this is an automatic|out of office|auto-?reply)\b/i;

export interface ActionDecision {
  action: Action;
  why: string;
}

/** What to do with an inbound email, before mapping to the caller's names. */
export function emailAction(text: string, intent: string, priority: Priority, sentiment: WriterSentiment): ActionDecision {
  if (detectSpam(text, { contentType: "email" }).isSpam) return { action: "archive", why: "it reads as spam" };
  if (AUTOMATED.test(text)) return { action: "archive", why: "it is an automated or bulk message" };
  if (priority === "critical") return { action: "escalate", why: "it reports a critical problem" };
  if (sentiment === "angry") return { action: "escalate", why: "the sender is angry" };
  if (intent === "praise" || intent === "goodbye") return { action: "archive", why: "it needs no answer" };
  if (["technical_issue", "billing", "refund", "purchase", "booking", "cancel"].includes(intent)) {
    return { action: "forward", why: `it is a ${intent.replace("_", " ")} matter for a specialist team` };
  }
  return { action: "reply", why: "it asks for an answer" };
}

/** The caller's name for `decision`, or null when their list has nothing close. */
export function actionName(decision: Action, allowed: readonly string[] | undefined): string | null {
  if (!allowed || allowed.length === 0) return decision;
  for (const candidate of FALLBACKS[decision]) {
    const hit = allowed.find((a) => ACTION_WORDS[candidate].test(a));
    if (hit) return hit;
  }
  return null;
}

export type TicketAction = "reply" | "request_information" | "assign" | "escalate" | "close";

const RESOLVED =
  /\b(?:(?:it'?s|is|got it|all) (?:working|fixed|resolved|sorted)(?: now)?|never ?mind|problem solved|you can close|please close)\b/i;
const WORDS = /[\p{L}\p{N}]+/gu;

/** The next step for a support ticket. */
export function ticketAction(
  text: string,
  intent: string,
  escalate: boolean,
  specialist: boolean,
): { action: TicketAction; why: string } {
  if (escalate) return { action: "escalate", why: "it needs a lead or specialist now" };
  if (RESOLVED.test(text)) return { action: "close", why: "the customer says it is resolved" };
  if ((text.match(WORDS)?.length ?? 0) < 8) return { action: "request_information", why: "it is too short to act on" };
  if (specialist) return { action: "assign", why: `it is a ${intent.replace("_", " ")} matter for a specialist team` };
  return { action: "reply", why: "an agent can answer it directly" };
}
