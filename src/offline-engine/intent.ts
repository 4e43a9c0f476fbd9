/**
 * Intent detection for the offline engine: weighted cue patterns over a built-in taxonomy,
 * mapped onto caller-supplied intent labels when given.
 *
 * Exported API (stable; other modules compose it):
 *   detectIntent(text: string, intentTypes?: readonly string[], opts?: { entities?: Record<string, string> }): IntentResult
 *     -> { intent, confidence 0..1, entities: Record<string,string>, alternatives: {intent,confidence}[], matched }
 *     `matched` is false when no cue supports the answer (then intent is "other", or the caller's
 *     fallback label such as "other"/"general" if it offered one); callers should treat that as unknown.
 *   BUILTIN_INTENTS: readonly string[]   the documented taxonomy
 *   intentEntities(text, spec?): Record<string,string>   entities by name (spec: name -> description/type)
 */

import { checkCpuBudget, tickCpuBudget } from "./budget";
import type { Entity, EntityType } from "./extract";
import { textEntities } from "./json-locale";
import { lowerWords } from "./keywords";

/** The built-in taxonomy (documented in the function description). */
export const BUILTIN_INTENTS = [
  "greeting",
  "goodbye",
  "question",
  "information",
  "complaint",
  "purchase",
  "order_status",
  "cancel",
  "refund",
  "return_exchange",
  "billing",
  "account",
  "support_request",
  "technical_issue",
  "booking",
  "feedback",
  "praise",
  "unsubscribe",
  "other",
] as const;
export type BuiltinIntent = (typeof BUILTIN_INTENTS)[number];

type Cue = [RegExp, number];
// Weights: ~3 a decisive phrase, ~1.5 a typical word, ~0.5 a weak hint.
const CUES: Record<Exclude<BuiltinIntent, "other">, Cue[]> = {
  greeting: [
    [
      /^\s*(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|greetings|howdy)\b[\s!,.]*(?:(?:there|all|team|everyone)[\s!.]*)?$/i,
      4,
    ],
    [/^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening))\b/i, 0.6],
    // a greeting plus a few words ("Hey there, anyone around?") is still just opening the chat
    [/^\s*(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening))\b(?:\W+\w+){0,4}\W*$/i, 2],
  ],
  goodbye: [
    [/^\s*(?:bye|goodbye|see you|talk (?:to you )?later|that'?s all|have a (?:nice|good|great) (?:day|one|weekend))\b/i, 3.5],
    [/\b(?:bye|goodbye|see you(?: soon| later)?|that'?s all i needed)\W*$/i, 3],
  ],
  question: [
    [/\?\s*$/, 1.2],
    // the question word may follow a greeting: "hey, can you tell me..."
    [
      /^\s*(?:(?:hi|hello|hey|hiya)(?: there)?\b[\s,!.]*)?(?:who|what|when|where|why|how|which|can|could|do|does|is|are|will|would|should)\b/i,
      0.8,
    ],
  ],
  information: [
    [
      /\b(?:what (?:are|is) (?:your|the)|opening hours|business hours|do you (?:have|offer|ship|sell|accept|deliver)|where (?:is|are) (?:you|your)|tell me (?:more )?(?:about|if|whether)|more (?:info|information|details)|is there (?:a|any)|does (?:it|this) (?:come|work|support|include)|comes? in (?:an? )?(?:other |different |more )?(?:sizes?|colou?rs?|xxs|xs|s|m|l|xl|xxl|xxxl|small|medium|large|black|white|blue|red|green|grey|gray|navy))\b/i,
      2,
    ],
    [/\b(?:policy|hours|location|address|specs?|specifications?|requirements?|difference between|compatible)\b/i, 1],
    // yes/no questions about a thing ("Is the jacket waterproof?") ask for facts
    [/^\s*(?:is|are|does|do|will|can) (?:it|this|that|the|they|these|those|your)\b[^?]*\?\s*$/i, 1.5],
  ],
  complaint: [
    [
      /\b(?:unacceptable|terrible|horrible|awful|worst|disgusting|ridiculous|appalling|outrageous|pathetic|useless|disappointed|disappointing|frustrat\w*|fed up|sick of|furious|angry|rude)\b/i,
      2,
    ],
    [
      /\b(?:still (?:not|hasn'?t|haven'?t|no)|never (?:arrived|received|showed)|waste of|not happy|poor (?:service|quality)|complain\w*|no one (?:has )?(?:replied|responded|helped))\b/i,
      2,
    ],
    [/\b(?:broken|damaged|defective|wrong item|late again)\b/i, 1],
  ],
  purchase: [
    [
      /\b(?:(?:want|like|looking|plan(?:ning)?|ready|interested) to (?:buy|purchase|order|get|subscribe)|(?:buy|purchase) (?:a|an|the|some|\d+|another)|order (?:a|an|the|some|another|\d{1,3}(?![\d-]))|add to (?:cart|basket)|place an order|bulk order|get a quote|quote for|how (?:much|do i buy)|pricing for|price (?:of|for)|discount for|(?:volume|bulk|non-?profit|education(?:al)?|student) (?:pricing|discounts?)|in stock|available to buy|upgrade (?:to|my plan))\b/i,
      3,
    ],
    [/\b(?:price|pricing|cost|discount|coupon|deal|buy|purchase|checkout)\b/i, 1],
  ],
  order_status: [
    [
      /\b(?:where(?:'s| is) my (?:order|package|parcel|delivery|shipment)|track(?:ing)? (?:my )?(?:order|package|number)|(?:order|package|parcel|delivery|shipment)(?: (?:#|no\. ?|number )?(?:[a-z]{1,4}-)?\d[a-z0-9-]*)? (?:status|hasn'?t arrived|has not arrived|not arrived|is late|delayed)|when will (?:my|it|the) (?:order|package|parcel)?\s*(?:arrive|ship|be delivered)|has (?:it|my order) shipped|tracking (?:says|shows|link|hasn'?t|has not|is)|(?:parcel|package|order|shipment)(?: (?:#|no\. ?|number )?(?:[a-z]{1,4}-)?\d[a-z0-9-]*)? (?:still )?(?:hasn'?t|has not|never) (?:arrived|come|moved)|hasn'?t moved|stuck (?:at|in) (?:customs|the depot|transit)|(?:check|see) where (?:it|my (?:order|parcel|package)) is)\b/i,
      3.5,
    ],
    [/\b(?:shipped|shipping|delivery|tracking|arrive|dispatch\w*|courier)\b/i, 0.8],
  ],
  cancel: [
    [
      /\b(?:cancel\w*|terminate|close (?:my|the) account|delete (?:my|the) account|end (?:my|the) (?:subscription|membership|contract)|stop (?:my|the) (?:subscription|membership|service|order)|don'?t want (?:it|this) anymore)\b/i,
      3.2,
    ],
  ],
  refund: [[/\b(?:refund\w*|money back|reimburs\w*|charge ?back|credit (?:it )?back|return (?:my|the) money)\b/i, 3.4]],
  return_exchange: [
    [
      /\b(?:return (?:it|this|them|these|the|my|an? )|send (?:it |this |them )?back|exchange (?:it|this|them|these|the|my|for)|swap (?:it|them|for)|wrong size|(?:doesn'?t|don'?t) fit|return label|rma)\b/i,
      3,
    ],
  ],
  billing: [
    [
      /\b(?:charged twice|double charged|overcharged|billing|invoice|payment (?:failed|declined|issue|problem)|card (?:was )?declined|unexpected charge|charge on my (?:card|statement)|receipt|update (?:my )?(?:payment|card|billing))\b/i,
      3,
    ],
    [/\b(?:charge[ds]?|payment|paid|bill)\b/i, 0.8],
  ],
  account: [
    [
      /\b(?:reset (?:my )?password|forgot (?:my )?password|can'?t (?:log ?in|sign ?in|access my account)|locked out|(?:change|update) (?:my |the )?(?:email|username|password|profile|(?:email |billing |shipping )?address)(?: address)? (?:on|of|for) (?:my|the) account|(?:change|update|edit) (?:the |my |our )?(?:\w+ ){0,3}(?:on|of|in|for) (?:my|our|the|your) (?:\w+ )?(?:account|profile)|(?:change|update) (?:my )?(?:email|username|password|profile)|two[- ]factor|2fa|verification code)\b/i,
      3,
    ],
    [/\b(?:account|login|log in|sign in|password|username)\b/i, 0.8],
  ],
  support_request: [
    [
      /\b(?:(?:can|could) you (?:please )?help|need (?:some )?help|help me|assist(?:ance)?|how (?:do|can) i|is it possible to|walk me through|having (?:trouble|issues?|problems?)|not sure how)\b/i,
      2.2,
    ],
    [/\b(?:help|support|issue|problem|question)\b/i, 0.8],
  ],
  technical_issue: [
    [
      /\b(?:not working|doesn'?t work|stopped working|won'?t (?:load|start|open|connect|turn on|charge)|keeps? (?:crashing|freezing)|crash\w*|error (?:code|message)?|bug|glitch|freez\w*|(?:can'?t|cannot|unable to) (?:connect|install|update|load|open|upload|download)|times? out|timed out|timing out|takes? (?:\w+ ){0,2}(?:seconds|minutes) to load|slow to load)\b/i,
      3,
    ],
    [/\b(?:error|broken|outage|down|timeout|slow|app|website|install\w*)\b/i, 0.7],
  ],
  booking: [
    [
      /\b(?:book(?:ing)? (?:a|an|the|for|my)|make a (?:reservation|booking|appointment)|reserv\w*|(?:schedule|set up|arrange) (?:a|an|my) (?:call|meeting|appointment|demo|visit)|table for \d+|appointment|check[- ]?in|(?:change|move|reschedule) (?:my )?(?:booking|reservation|appointment|flight))\b/i,
      3,
    ],
    [/\b(?:book|flight|hotel|room|seat|ticket for|availability)\b/i, 0.9],
  ],
  feedback: [
    [
      /\b(?:feedback|suggestion|suggest|it would be (?:nice|great|helpful)|would be (?:nice|great) if|feature request|please add|you should (?:add|consider)|improve(?:ment)?|wish (?:it|you|there))\b/i,
      2.5,
    ],
  ],
  praise: [
    [
      /\b(?:love (?:it|this|your|the)|amazing|excellent|fantastic|awesome|great (?:job|service|work|product)|thank you so much|thanks so much|highly recommend|best (?:service|product|experience)|well done|impressed|pass on my thanks|kudos|(?:just )?(?:a (?:quick )?note|wanted) to say (?:thank|that|your|how))\b/i,
      2.5,
    ],
  ],
  unsubscribe: [
    [
      /\b(?:unsubscribe|opt[- ]out|stop (?:sending|emailing)|remove me from|take me off|no longer want (?:these|your|any) (?:emails|messages|newsletters?)|no more (?:emails|messages))\b/i,
      3.5,
    ],
  ],
};

// Words a caller's label may use for each built-in intent ("refund_request" -> refund).
const LABEL_SYNONYMS: Record<Exclude<BuiltinIntent, "other">, string[]> = {
  greeting: ["greeting", "greet", "hello", "welcome", "smalltalk", "chitchat"],
  goodbye: ["goodbye", "bye", "farewell", "closing"],
  question: ["question", "inquiry", "enquiry", "ask", "faq", "query"],
  information: ["information", "info", "inquiry", "enquiry", "details", "faq", "product", "hours", "policy", "general"],
  complaint: ["complaint", "complain", "dissatisfaction", "escalation", "angry", "negative"],
  purchase: ["purchase", "buy", "order", "sales", "pricing", "quote", "lead", "upgrade", "presales", "pre"],
  order_status: ["order", "status", "tracking", "track", "shipping", "delivery", "shipment", "where"],
  cancel: ["cancel", "cancellation", "terminate", "termination", "churn", "close"],
  refund: ["refund", "reimbursement", "money", "chargeback"],
  return_exchange: ["return", "exchange", "returns", "rma", "replacement"],
  billing: ["billing", "payment", "invoice", "charge", "charges", "bill", "finance"],
  account: ["account", "login", "password", "access", "profile", "signin"],
  support_request: ["support", "help", "assistance", "request", "howto", "how"],
  technical_issue: ["technical", "tech", "bug", "error", "troubleshooting", "outage", "incident"],
  booking: ["booking", "book", "reservation", "reserve", "appointment", "schedule", "scheduling", "meeting", "demo"],
  feedback: ["feedback", "suggestion", "feature", "idea", "review"],
  praise: ["praise", "compliment", "thanks", "gratitude", "positive", "appreciation", "testimonial"],
  unsubscribe: ["unsubscribe", "optout", "opt"],
};

const FALLBACK_LABELS = new Set([
  "other",
  "others",
  "general",
  "unknown",
  "misc",
  "miscellaneous",
  "none",
  "unclassified",
  "general_inquiry",
]);

export interface IntentResult {
  intent: string;
  confidence: number;
  entities: Record<string, string>;
  /** runner-up labels with a confidence on the same 0..1 scale, best first */
  alternatives: { intent: string; confidence: number }[];
  /** false when no cue supports the answer */
  matched: boolean;
}

/** Seven words or more, read no further than the seventh: a greeting's weak cue then says nothing. */
const MORE_THAN_SIX_WORDS = /^\s*\S+(?:\s+\S+){6}/;

function builtinScores(text: string): Map<BuiltinIntent, number> {
  const scores = new Map<BuiltinIntent, number>();
  for (const [intent, cues] of Object.entries(CUES) as [Exclude<BuiltinIntent, "other">, Cue[]][]) {
    let s = 0;
    for (const [re, w] of cues) {
      // one pass of a cue over the whole text: a safe point each
      checkCpuBudget();
      if (re.test(text)) s += w;
    }
    if (s > 0) scores.set(intent, s);
  }
  // A question mark alone says little once a topical intent is present.
  const q = scores.get("question");
  if (q !== undefined && [...scores.keys()].some((k) => k !== "question" && k !== "greeting")) scores.set("question", q * 0.4);
  // A greeting opening a longer message is not its intent: beside another intent it counts little,
  // and alone, before five words or more, it says nothing of what the message wants
  const g = scores.get("greeting");
  if (g !== undefined && g < 4 && scores.size > 1) scores.set("greeting", g * 0.3);
  else if (g !== undefined && g < 2 && MORE_THAN_SIX_WORDS.test(text)) scores.delete("greeting");
  return scores;
}

const stem = (w: string) => w.replace(/(?:ations?|ing|ed|es|s)$/, "");

function labelWords(label: string): string[] {
  return label
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function confidenceOf(best: number, second: number): number {
  if (best <= 0) return 0.2;
  // evidence strength and margin over the runner-up both raise confidence
  const strength = 1 - Math.exp(-best / 2.5);
  const margin = (best - second) / best;
  return Math.round(Math.min(0.97, 0.3 + 0.45 * strength + 0.25 * margin) * 100) / 100;
}

function scoreCustom(text: string, labels: readonly string[], builtin: Map<BuiltinIntent, number>): Map<string, number> {
  const tokens = new Set(
    lowerWords(text).map((w) => {
      tickCpuBudget();
      return stem(w);
    }),
  );
  const out = new Map<string, number>();
  for (const label of labels) {
    const words = labelWords(label);
    let s = 0;
    for (const [intent, syns] of Object.entries(LABEL_SYNONYMS) as [Exclude<BuiltinIntent, "other">, string[]][]) {
      const hits = words.filter((w) => syns.includes(w)).length;
      if (hits) s = Math.max(s, (builtin.get(intent) ?? 0) * (hits / words.length >= 0.5 ? 1 : 0.7));
    }
    // the label's own words appearing in the text ("shipping_question" and "shipping")
    for (const w of words) if (w.length > 2 && !FALLBACK_LABELS.has(w) && tokens.has(stem(w))) s += 1;
    out.set(label, s);
  }
  return out;
}

/** Best intent of `text`: among `intentTypes` when given, else the built-in taxonomy. */
export function detectIntent(
  text: string,
  intentTypes?: readonly string[],
  opts: { entities?: Record<string, string> } = {},
): IntentResult {
  const builtin = builtinScores(text);
  const labels = intentTypes?.length ? intentTypes : null;
  const scores: Map<string, number> = labels ? scoreCustom(text, labels, builtin) : builtin;
  const ranked = [...scores.entries()].filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1]);
  const entities = intentEntities(text, opts.entities);
  if (!ranked.length) {
    const fallback = labels ? labels.find((l) => FALLBACK_LABELS.has(l.toLowerCase())) : "other";
    return {
      intent: fallback ?? labels?.[0] ?? "other",
      confidence: fallback ? 0.35 : 0.1,
      entities,
      alternatives: [],
      matched: false,
    };
  }
  const [best, second] = [ranked[0][1], ranked[1]?.[1] ?? 0];
  const confidence = confidenceOf(best, second);
  // runner-ups scaled by their evidence relative to the winner, kept below the winner
  const alternatives = ranked
    .slice(1, 4)
    .map(([intent, score]) => ({ intent, confidence: Math.round(confidence * (score / best) * 0.9 * 100) / 100 }));
  return { intent: ranked[0][0], confidence, entities, alternatives, matched: true };
}

// Which extractor serves an entity the caller names ("order_number": "the order id").
const ENTITY_KIND_HINTS: [RegExp, EntityType][] = [
  [/e-?mail/i, "email"],
  [/phone|mobile|tel\b|telephone|cell/i, "phone"],
  [/url|link|website|site|domain/i, "url"],
  [/percent|rate|discount_pct/i, "percentage"],
  [/amount|price|cost|total|money|budget|fee|payment|refund|salary|sum|value/i, "money"],
  [/date|time|when|day|deadline|schedule|period|until|since/i, "date"],
  [/order|ticket|invoice|tracking|reference|ref\b|id\b|_id|number|code|sku|account|confirmation|booking/i, "id"],
  [/company|organi[sz]ation|org\b|business|employer|vendor|merchant|brand|bank/i, "organization"],
  [/name|person|customer|agent|contact|sender|recipient|who/i, "person"],
  [/count|quantity|qty|how many|number of|guests|people|size/i, "number"],
];

function kindFor(name: string, description: string): EntityType | null {
  for (const [re, kind] of ENTITY_KIND_HINTS) if (re.test(name)) return kind;
  for (const [re, kind] of ENTITY_KIND_HINTS) if (re.test(description)) return kind;
  return null;
}

const DEFAULT_NAMES: Record<EntityType, string> = {
  email: "email",
  phone: "phone",
  url: "url",
  date: "date",
  money: "amount",
  percentage: "percentage",
  number: "number",
  person: "person",
  organization: "organization",
  id: "reference_id",
};

/**
 * Entities of `text` keyed by name. With `spec` (name -> description or type), fills exactly
 * those names it can recognize and leaves out the rest; without it, one key per type found.
 */
export function intentEntities(text: string, spec?: Record<string, string>, found?: readonly Entity[]): Record<string, string> {
  const all = found ?? textEntities(text);
  const out: Record<string, string> = {};
  if (spec && Object.keys(spec).length) {
    const used = new Set<Entity>();
    for (const [name, desc] of Object.entries(spec)) {
      const kind = kindFor(name, String(desc ?? ""));
      if (!kind) continue;
      // "number" kinds may also be satisfied by an id-like token ("order number 5521")
      const hit = all.find((e) => !used.has(e) && (e.type === kind || (kind === "number" && e.type === "money")));
      if (hit) {
        used.add(hit);
        out[name] = hit.text;
      }
    }
    return out;
  }
  // each value once per kind: a subject line and the body often name the same order or invoice
  const seen = new Set<string>();
  for (const e of all) {
    if (e.type === "number") continue;
    const key = DEFAULT_NAMES[e.type];
    const id = `${key}\u0000${e.text.toLowerCase()}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out[key] = out[key] ? `${out[key]}, ${e.text}` : e.text;
  }
  return out;
}
