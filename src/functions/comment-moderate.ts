import { type Static, Type } from "@sinclair/typebox";
import { calibrated } from "../offline-engine/calibration";
import { detectLanguage } from "../offline-engine/language";
import { MODERATION_CATEGORIES, moderate } from "../offline-engine/moderation";
import { defineFunction } from "./define";
import { decline } from "./offline-reach";
import { option, writtenIn } from "./prompt";
import { Confidence, Context, Enum, InputLanguage, Platform, Result, Strings, Text } from "./schemas";

/** a category scoring at least this is flagged */
const FLAG_AT = 0.4;

const request = Type.Object({
  comment: Text("the comment to moderate"),
  language: InputLanguage("comment"),
  platform: Platform("instagram, youtube, forum, kids app, linkedin..."),
  context: Context("the community, its rules or the post the comment answers"),
});
type Req = Static<typeof request>;

const ACTIONS = ["allow", "review", "remove"] as const;
const SEVERITIES = ["none", "low", "medium", "high"] as const;

const Categories = Type.Object(
  Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, Type.Number({ minimum: 0, maximum: 1 })])) as Record<
    (typeof MODERATION_CATEGORIES)[number],
    ReturnType<typeof Type.Number>
  >,
  { additionalProperties: false, description: "score from 0 to 1 per category" },
);

const result = Result(
  {
    action: Enum(ACTIONS, "allow: publish; review: hold for a human; remove: take down"),
    flagged: Type.Boolean({ description: "true unless action is allow" }),
    severity: Enum(SEVERITIES, "how harmful the worst problem is"),
    categories: Categories,
    flagged_categories: Type.Array(Enum(MODERATION_CATEGORIES, "a category name"), {
      maxItems: MODERATION_CATEGORIES.length,
      description: "categories scoring 0.4 or more",
    }),
    reasons: Strings("why, in short phrases", 20),
    confidence: Confidence(),
  },
  "moderation decision for one comment",
);

const ENGLISH = /^(?:en|eng|english)(?:[-_][a-z]+)?$/i;

function isEnglish(req: Req): boolean {
  if (req.language) return ENGLISH.test(req.language.trim());
  const detected = detectLanguage(req.comment);
  return detected.code === "en" || detected.code === "und";
}

export default defineFunction({
  name: "comment-moderate",
  summary: "Moderate a comment: harm categories with scores and an allow / review / remove decision",
  tags: ["comments", "safety"],
  request,
  result,
  role: "You moderate comments for an online community.",
  brief: (req) => ({
    rules: [
      option("Platform", req.platform),
      writtenIn("comment", req.language),
      `categories: score each of ${MODERATION_CATEGORIES.join(", ")} from 0 to 1.`,
      "action: remove threats, hate, targeted harassment, sexual content where it does not belong and clear spam; review borderline cases; allow the rest. Criticism of a product or business is allowed.",
      "Self-harm content is never removed silently: choose review so a person can reach out.",
      "Judge by the community's norms when the context gives them.",
    ],
    inputs: [
      ["context", req.context],
      ["comment", req.comment],
    ],
  }),
  // flagged and flagged_categories follow from the action and the scores: derived, never trusted.
  postprocess: (_req, res) => ({
    ...res,
    flagged: res.action !== "allow",
    flagged_categories: MODERATION_CATEGORIES.filter((c) => (res.categories?.[c] ?? 0) >= FLAG_AT),
  }),
  check: (_req, res) => {
    const problems: string[] = [];
    if (res.flagged !== (res.action !== "allow")) problems.push("flagged disagrees with action");
    for (const c of res.flagged_categories) if (!(c in res.categories)) problems.push(`flagged category ${c} has no score`);
    return problems;
  },
  local: (req) => {
    // the lexicon is English; other languages would pass unseen
    if (!isEnglish(req)) return decline(req, "language", "the offline moderation lexicon is English");
    const r = moderate(req.comment, { platform: req.platform, context: req.context });
    return {
      action: r.action,
      flagged: r.flagged,
      severity: r.severity,
      categories: r.categories,
      flagged_categories: r.flaggedCategories,
      reasons: r.reasons.slice(0, 20),
      confidence: calibrated("moderation", r.confidence),
    };
  },
  // A lexicon misses sarcasm and coded abuse a model catches; the engine serves when no model is configured.
  preferLocal: false,
  example: {
    request: { comment: "You are a complete idiot and nobody likes you", platform: "youtube", context: "cooking channel" },
    result: {
      action: "remove",
      flagged: true,
      severity: "high",
      categories: {
        toxicity: 0.97,
        harassment: 0.84,
        hate: 0,
        sexual: 0,
        violence: 0,
        self_harm: 0,
        spam: 0,
        profanity: 0,
        threat: 0,
        insult: 0.84,
      },
      flagged_categories: ["toxicity", "harassment", "insult"],
      reasons: ["toxicity 0.97 >= remove threshold", "harassment 0.84 >= remove threshold"],
      confidence: 0.98,
    },
  },
});
