/**
 * Offline reading of an inbound message (email, ticket, comment), composed from the offline engine:
 * language, sentiment, intent, entities and summary, plus the urgency cues and label matching that
 * the triage functions (email-analyze, -workflow, -classification, ticket-analyze, -workflow) share.
 * Every answer is computed from the text; when a caller's list cannot be matched, the answer is
 * null, never a guess.
 */
import { detectIntent, intentEntities } from "../../offline-engine/intent";
import { detectLanguage } from "../../offline-engine/language";
import { analyzeSentiment } from "../../offline-engine/sentiment";
import { summarize } from "../../offline-engine/summarize";
import { decline } from "../offline-reach";
import type { PRIORITIES, WRITER_SENTIMENTS } from "../schemas";
import { messageBody, withoutContactData } from "./contact-free";
import { outageStatus, serverStatus } from "./status-codes";

export type Priority = (typeof PRIORITIES)[number];
export type WriterSentiment = (typeof WRITER_SENTIMENTS)[number];

/** A level and why, in words a reason field can carry ("it says \"urgent\""). */
export interface Graded<L> {
  level: L;
  why: string;
}

/**
 * Outages (a production system down or timing out; a 5xx status is status-codes.ts's), security
 * incidents, data loss, legal threats, and business stopped ("we are losing sales", "customers can't pay").
 */
const CRITICAL =
  /\b(?:outage|(?:is|are|went|goes|been) (?:completely |totally )?down|(?:production|checkout|site|website|server|service|api|app|login|payments?|store|shop) (?:page )?(?:is |are |keeps? |kept )?(?:down|offline|timing out|times out|timed out|unreachable|not loading)|security (?:breach|incident|issue|vulnerability)|hacked|breach|data (?:loss|leak)|lost (?:all )?(?:my |our )?data|lawsuit|legal action|lawyer|attorney|sue you|losing (?:sales|money|revenue|orders|customers|business)|(?:customers|users|clients) (?:can'?t|cannot|are unable to|aren'?t able to) (?:pay|check ?out|order|buy|log ?in|sign ?in|access)|nobody can|no one can|entire (?:team|company)|whole team|all (?:our )?users)\b/i;
const HIGH =
  /\b(?:urgent(?:ly)?|asap|immediately|right away|as soon as possible|emergency|blocked|can'?t (?:log ?in|sign ?in|access|work|use)|cannot (?:log ?in|sign ?in|access|work|use)|locked out|charged twice|double charged|overcharged|deadline|by (?:today|tomorrow|tonight)|third time|(?:still|again) (?:not|no|waiting|broken)|cancel (?:my|our) (?:account|subscription|contract))\b/i;
const LOW =
  /\b(?:newsletter|fyi|no rush|whenever you (?:can|have time)|just wanted to (?:say|let you know|share)|thank you so much|thanks (?:so much|a lot)|great job|suggestion|feature request|unsubscribe)\b/i;

const DAY =
  "(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|wed|thu|fri|tomorrow|tonight|today|noon|midnight|the weekend|(?:the )?end of (?:the |this |next )?(?:day|week|month|quarter)|eod|eow|cob|close of business|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\\.? \\d{1,2}(?:st|nd|rd|th)?|\\d{1,2}(?:st|nd|rd|th)?(?: of)? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*|the \\d{1,2}(?:st|nd|rd|th)|\\d{1,2}[/.]\\d{1,2}(?:[/.]\\d{2,4})?)";
/** A date the writer needs something by: "before Friday", "by end of day", "no later than the 15th", "within 48 hours". */
const DEADLINE = new RegExp(
  `\\b(?:(?:before|by|until|no later than|not later than|latest by|at the latest by)\\s+(?:(?:this|next|coming)\\s+)?${DAY}\\b|within (?:the next )?(?:\\d+|one|two|three|24|48|72) (?:hours?|business days?|working days?|days?)\\b)`,
  "i",
);
/** The same urgency in the other languages the engine reads (French, German, Spanish, Italian, Portuguese, Dutch). */
const HIGH_ELSEWHERE =
  /(?<!\p{L})(?:urgent|urgence|immédiatement|au plus vite|dringend|sofort|umgehend|eilig|urgente|inmediatamente|cuanto antes|subito|immediatamente|urgentemente|o mais rápido possível|spoed|dringend|onmiddellijk|zo snel mogelijk|avant (?:lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|demain)|bis (?:montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|morgen)|antes del? (?:lunes|martes|miércoles|jueves|viernes|sábado|domingo|mañana)|entro (?:lunedì|martedì|mercoledì|giovedì|venerdì|sabato|domenica|domani)|até (?:segunda|terça|quarta|quinta|sexta|sábado|domingo|amanhã)|vóór (?:maandag|dinsdag|woensdag|donderdag|vrijdag|zaterdag|zondag|morgen))(?!\p{L})/iu;

/** How soon the message needs handling, from its urgency words, deadlines and the writer's mood. */
export function priorityOf(text: string, sentiment: WriterSentiment): Graded<Priority> {
  // any 5xx that has not gone away is an outage ("error 500", "getting 504s", "502 Bad Gateway")
  const cue = CRITICAL.exec(text);
  const status = outageStatus(text);
  const critical = cue && (!status || cue.index <= status.index) ? cue[0] : status?.text;
  if (critical) return { level: "critical", why: `it says "${critical}"` };
  const high = HIGH.exec(text) ?? HIGH_ELSEWHERE.exec(text);
  if (high) return { level: "high", why: `it says "${high[0]}"` };
  const deadline = DEADLINE.exec(text);
  if (deadline) return { level: "high", why: `it sets a deadline ("${deadline[0]}")` };
  if (sentiment === "angry") return { level: "high", why: "the writer is angry" };
  const low = LOW.exec(text);
  if (low && sentiment !== "negative" && sentiment !== "frustrated") return { level: "low", why: `it says "${low[0]}"` };
  return { level: "medium", why: "it has no urgency cues or deadline" };
}

/** Words of politeness inside a request ("please settle it", "kindly advise"): not the writer's mood. */
const POLITENESS = /\b(?:please|pls|plz|kindly)\b/gi;

const ANGRY = /\b(?:furious|angry|outrageous|unacceptable|ridiculous|disgusting|worst|pathetic|scam|sue|lawyer)\b|!{2,}/i;
const FRUSTRATED =
  /\b(?:frustrat\w*|annoy\w*|disappoint\w*|fed up|still (?:not|no|waiting|broken|unpaid|outstanding|unresolved|missing|pending)|remains? (?:unpaid|outstanding|unresolved|open)|or (?:we|i) will (?:have to )?(?:pause|suspend|cancel|terminate|stop|close|cut off|escalate|take)|(?:second|third|fourth) time|how many times|again|waiting (?:for|since)|no one (?:has )?(?:replied|answered|helped))\b/i;

/** The writer's mood in the words the email and ticket results use. */
export function writerSentiment(message: string): WriterSentiment {
  // greetings, sign-offs and "please" are politeness: VADER rates "please" and "thanks" as praise
  const text = messageBody(message).replace(POLITENESS, " ");
  const { label, score } = analyzeSentiment(text);
  const unhappy = label === "negative" || (label === "mixed" && score < 0.2) || (label === "neutral" && FRUSTRATED.test(text));
  // "Thanks in advance" in an outage report is politeness, not a happy customer.
  if (!unhappy)
    return label === "mixed" || (label === "positive" && (BREAKAGE.test(text) || reportsServerFailure(text))) ? "neutral" : label;
  if (ANGRY.test(text)) return "angry";
  if (FRUSTRATED.test(text)) return "frustrated";
  return "negative";
}

/** ISO code of the text, or the caller's hint when it already is one. */
export function languageOf(text: string, hint?: string): string {
  if (hint && /^[a-z]{2}(?:-[A-Za-z]{2,4})?$/.test(hint)) return hint;
  return detectLanguage(text).code;
}

/** The gist in one or two sentences, cut from the text itself. */
export function gist(text: string, sentences = 1): string {
  const clean = withoutContactData(text);
  const out = summarize(clean, { length: sentences }).summary.trim() || clean.trim().slice(0, 300);
  // a message whose greeting was cut ("Hello, our invoice ...") starts mid-sentence
  return out.charAt(0).toUpperCase() + out.slice(1);
}

/** Named values found in the text, keyed by what they are (reference_id, amount, date, email...). */
export function entitiesOf(text: string): Record<string, string> {
  return intentEntities(text);
}

/** Failures the intent cues can mistake for something else ("our checkout is down" is not a purchase). */
const BREAKAGE =
  /\b(?:outage|(?:is|are|went|goes) down|error (?:code )?[A-Z]?-?\d{3,}|crash(?:es|ed|ing)?|not working|stopped working|doesn'?t work)\b/i;

/**
 * A server-side failure: a 5xx status (status-codes.ts), an outage, exceptions, a failing API or backend.
 * Whatever else the text mentions (logging in, an account page), this is a technical issue.
 */
const SERVER_FAILURE =
  /\b(?:outage|stack ?trace|(?:unhandled |uncaught |null pointer |runtime )exception|(?:api|endpoint|server|database|backend|webhook)s? (?:is |are |keeps? |kept |has been |have been )?(?:down|failing|erroring|crashing|timing out|unreachable|returning errors))/i;

/** Whether the text reports a server-side failure (status codes and error names read the same in any language). */
export function reportsServerFailure(text: string): boolean {
  return SERVER_FAILURE.test(text) || serverStatus(text) !== null;
}

/** What the writer wants, in the built-in taxonomy (refund, technical_issue, order_status...). */
export function builtinIntent(text: string): { intent: string; confidence: number; matched: boolean } {
  const r = detectIntent(text);
  const failing = reportsServerFailure(text) || (BREAKAGE.test(text) && r.intent !== "account");
  if (failing && r.intent !== "technical_issue") {
    return { intent: "technical_issue", confidence: Math.max(0.6, r.alternatives[0]?.confidence ?? 0), matched: true };
  }
  return { intent: r.intent, confidence: r.confidence, matched: r.matched };
}

/**
 * The caller's label that fits the text best: the usual home of the built-in intent when the
 * list has it ("I want my money back" is a refund, filed under billing), else the intent
 * engine's own scoring of the labels, else a catch-all or general support label on the list.
 * Null when nothing fits, rather than a guess.
 */
export function pickLabel(text: string, labels: readonly string[]): { label: string; confidence: number } | null {
  const own = builtinIntent(text);
  if (own.matched) {
    for (const home of [own.intent, categoryOfIntent(own.intent), departmentOfIntent(own.intent)]) {
      const label = labels.find((l) => sameName(l, home));
      if (label) return { label, confidence: own.confidence };
    }
  }
  const r = detectIntent(text, labels);
  if (r.matched && labels.includes(r.intent)) return { label: r.intent, confidence: r.confidence };
  const fallback = labels.find((l) => CATCH_ALL.test(l)) ?? labels.find((l) => GENERAL_SUPPORT.test(l));
  return fallback ? { label: fallback, confidence: 0.3 } : null;
}

const CATCH_ALL = /^(?:other|others|general|unknown|misc|miscellaneous|none|unclassified|general[_ -]inquiry)$/i;
const GENERAL_SUPPORT = /^(?:support|customer[_ -]?(?:support|service|care)|help[_ -]?desk|general[_ -]support)$/i;
const words = (s: string) =>
  s
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
const related = (a: string, b: string) => (a.length >= 3 && b.startsWith(a)) || (b.length >= 3 && a.startsWith(b));

/**
 * Whether a caller's label names the same thing as one of ours: "Tech Support" is technical_support,
 * "account_management" is account, "sales_team" is sales; "customer_success" is not customer_service.
 */
function sameName(label: string, ours: string): boolean {
  const [a, b] = [words(label), words(ours)];
  if (a.length === 0 || b.length === 0 || !related(a[0], b[0])) return false;
  return a.length === 1 || b.length === 1 || related(a[1], b[1]);
}

/** Built-in intent -> the category a support inbox would file it under. */
const CATEGORY_OF_INTENT: Record<string, string> = {
  billing: "billing",
  refund: "billing",
  cancel: "cancellation",
  unsubscribe: "unsubscribe",
  technical_issue: "technical",
  account: "account",
  order_status: "shipping",
  return_exchange: "returns",
  purchase: "sales",
  booking: "booking",
  complaint: "complaint",
  feedback: "feedback",
  praise: "feedback",
  question: "inquiry",
  information: "inquiry",
  support_request: "support",
};

export function categoryOfIntent(intent: string): string {
  return CATEGORY_OF_INTENT[intent] ?? "general";
}

/** Built-in intent -> the team that usually owns it. */
const DEPARTMENT_OF_INTENT: Record<string, string> = {
  billing: "billing",
  refund: "billing",
  cancel: "customer_success",
  technical_issue: "technical_support",
  account: "technical_support",
  order_status: "shipping",
  return_exchange: "shipping",
  purchase: "sales",
  booking: "sales",
  complaint: "customer_service",
  feedback: "product",
};

export function departmentOfIntent(intent: string): string {
  return DEPARTMENT_OF_INTENT[intent] ?? "support";
}

/** The caller's label when given a list (null when none fits), else the built-in mapping. */
export function labelFor(text: string, allowed: readonly string[] | undefined, free: () => string): string | null {
  if (!allowed || allowed.length === 0) return free();
  return pickLabel(text, allowed)?.label ?? null;
}

/** The subject line carries cues ("URGENT", "Refund") as much as the body does. */
export function withSubject(body: string, subject?: string): string {
  return subject ? `${subject}\n\n${body}` : body;
}

/**
 * The offline engine's sentiment lexicon and intent cues are English; for other languages its
 * answer would look confident and be wrong, so the triage functions leave those to a model.
 */
export function offlineReadable(text: string): boolean {
  const { code } = detectLanguage(text);
  return code === "en" || code === "und";
}

/**
 * The seven languages whose review words, negations, contrast words and urgency cues the engine
 * has (English, French, German, Spanish, Italian, Portuguese, Dutch); in others only the
 * language, patterns (amounts, dates, codes) and extractive summaries are more than guesses.
 */
export const CUE_LANGUAGES = new Set(["en", "fr", "de", "es", "it", "pt", "nl"]);

/** The decline for a text the engine cannot read, naming its language (for the 503's message). */
export function declineLanguage(req: object, text: string): null {
  const { code, name } = detectLanguage(text);
  return decline(req, "language", `the offline engine reads this function's cues in English only; the text is ${name} (${code})`);
}
