/**
 * Comment moderation for the offline engine: abuse lexicon + spam signals -> category scores
 * -> an action a moderator queue can act on.
 *
 * Exported API (stable; other modules compose it):
 *   moderate(text: string, opts?: { platform?: string; context?: string }): ModerationResult
 *     -> { action: "allow" | "review" | "remove", flagged, severity: none|low|medium|high,
 *          categories: Record<ModerationCategory, number 0..1>, flaggedCategories, reasons[], confidence }
 *   MODERATION_CATEGORIES
 *
 * Policy: a category at or above its remove threshold removes; any category at or above 0.4
 * sends to review; self-harm is always review (a person may need help; deleting hides them).
 */
import { GUARDRAIL_MODERATION_CATEGORIES } from "../config";
import { scoreAbuse } from "./abuse";
import { combineSignals, spamSignals } from "./spam-signals";
import { round3 } from "./text";

/** The categories, one list with the guardrails' `block_moderation` (config.ts owns it: the config is checked against it). */
export const MODERATION_CATEGORIES = GUARDRAIL_MODERATION_CATEGORIES;
export type ModerationCategory = (typeof MODERATION_CATEGORIES)[number];

export type ModerationAction = "allow" | "review" | "remove";

export interface ModerationOptions {
  platform?: string;
  /** free text about the community or post ("kids cooking channel", "adult fiction forum") */
  context?: string;
}

export interface ModerationResult {
  action: ModerationAction;
  flagged: boolean;
  severity: "none" | "low" | "medium" | "high";
  categories: Record<ModerationCategory, number>;
  flaggedCategories: ModerationCategory[];
  reasons: string[];
  confidence: number;
}

const REVIEW_AT = 0.4;
// Remove thresholds; self_harm has none on purpose (see header).
const REMOVE_AT: Partial<Record<ModerationCategory, number>> = {
  threat: 0.8,
  hate: 0.8,
  harassment: 0.8,
  toxicity: 0.9,
  sexual: 0.75,
  spam: 0.7,
  violence: 0.85,
};

interface Policy {
  removeShift: number;
  profanityRemoves: boolean;
  sexualAllowed: boolean;
}

function policyFor(opts: ModerationOptions): Policy {
  const where = `${opts.platform ?? ""} ${opts.context ?? ""}`.toLowerCase();
  const strict = /\bkids?\b|child|children|family|school|education|linkedin|professional|workplace/.test(where);
  const adult = /\badult|nsfw|18\+|mature audiences?/.test(where);
  return { removeShift: strict ? -0.15 : 0, profanityRemoves: strict, sexualAllowed: adult };
}

/**
 * How far the scores are from changing the action: far from every threshold = sure, near one =
 * unsure. A "review" just under a remove threshold is as unsure as one just over the review
 * threshold, and a "remove" is as sure as its clearest removing category.
 */
function decisionMargin(action: ModerationAction, categories: Record<ModerationCategory, number>, policy: Policy): number {
  const top = Math.max(...Object.values(categories));
  if (action === "allow") return REVIEW_AT - top;
  let toRemove = Number.POSITIVE_INFINITY;
  let removedBy = 0;
  for (const c of MODERATION_CATEGORIES) {
    const removeAt = REMOVE_AT[c];
    if (removeAt === undefined) continue;
    const gap = categories[c] - (removeAt + policy.removeShift);
    if (gap >= 0) removedBy = Math.max(removedBy, gap);
    else toRemove = Math.min(toRemove, -gap);
  }
  if (policy.profanityRemoves) {
    const gap = categories.profanity - 0.5;
    if (gap >= 0) removedBy = Math.max(removedBy, gap);
    else toRemove = Math.min(toRemove, -gap);
  }
  return action === "remove" ? removedBy : Math.min(top - REVIEW_AT, toRemove);
}

/** Category scores and an allow / review / remove decision for `text`. */
export function moderate(text: string, opts: ModerationOptions = {}): ModerationResult {
  const abuse = scoreAbuse(text);
  const signals = spamSignals(text, opts.platform ? `comment ${opts.platform}` : "comment");
  const policy = policyFor(opts);
  const a = abuse.categories;
  const categories: Record<ModerationCategory, number> = {
    toxicity: a.toxicity,
    harassment: round3(Math.max(a.harassment, a.insult * 0.8)),
    hate: a.hate,
    sexual: round3(policy.sexualAllowed ? a.sexual * 0.3 : a.sexual),
    violence: round3(Math.max(a.violence, a.threat * 0.9)),
    self_harm: a.self_harm,
    spam: round3(combineSignals(signals)),
    profanity: a.profanity,
    threat: a.threat,
    insult: a.insult,
  };
  const reasons: string[] = [];
  let action: ModerationAction = "allow";
  for (const c of MODERATION_CATEGORIES) {
    const s = categories[c];
    const removeAt = REMOVE_AT[c];
    if (removeAt !== undefined && s >= removeAt + policy.removeShift) {
      action = "remove";
      reasons.push(`${c} ${s.toFixed(2)} >= remove threshold`);
    } else if (s >= REVIEW_AT) {
      if (action === "allow") action = "review";
      reasons.push(`${c} ${s.toFixed(2)} needs review`);
    }
  }
  if (policy.profanityRemoves && categories.profanity >= 0.5 && action !== "remove") {
    action = "remove";
    reasons.push("profanity on a strict platform");
  }
  if (categories.self_harm >= REVIEW_AT) reasons.push("possible self-harm: route to a human, consider support resources");
  for (const h of abuse.hits.slice(0, 5)) reasons.push(`${h.category}: "${h.match}"`);
  for (const s of signals.slice(0, 3)) reasons.push(`spam signal ${s.name}: ${s.detail}`);
  const flaggedCategories = MODERATION_CATEGORIES.filter((c) => categories[c] >= REVIEW_AT);
  const top = Math.max(...Object.values(categories));
  const severity = top >= 0.8 ? "high" : top >= 0.55 ? "medium" : top >= 0.25 ? "low" : "none";
  const distance = decisionMargin(action, categories, policy);
  const confidence = Math.round(Math.min(0.98, 0.6 + distance * 0.8) * 100) / 100;
  return { action, flagged: action !== "allow", severity, categories, flaggedCategories, reasons, confidence };
}
