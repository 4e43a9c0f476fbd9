import { describe, expect, test } from "bun:test";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { AnyFunctionDef } from "../../src/functions/define";
import { getFunction } from "../../src/functions/registry";
import { validateAgainst } from "../../src/functions/validate";

const fn = (name: string): AnyFunctionDef => {
  const def = getFunction(name);
  if (!def?.local) throw new Error(`${name} has no local implementation`);
  return def;
};

/** The local answer to a request as the pipeline would pass it, checked like any provider's answer. */
async function answer(name: string, body: Record<string, unknown>): Promise<Record<string, unknown> | null> {
  const def = fn(name);
  let req = validateAgainst<Record<string, unknown>>(def.request, structuredClone(body), 100_000);
  if (def.normalize) req = def.normalize(req);
  const out = (await def.local!(req, { accountId: "acct_test" })) as Record<string, unknown> | null;
  if (out === null) return null;
  const schema: TSchema = def.resultSchemaFor?.(req) ?? def.result;
  const problems = [...Value.Errors(schema, out)].map((e) => `${e.path}: ${e.message}`);
  expect({ out, problems }).toEqual({ out, problems: [] });
  expect(def.check?.(req, out) ?? []).toEqual([]);
  return out;
}

/** An answer that must exist. */
async function sure(name: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const out = await answer(name, body);
  if (out === null) throw new Error(`${name} gave no offline answer for ${JSON.stringify(body)}`);
  return out;
}

const BILLING =
  "Hello, I was charged twice for invoice INV-2291 this month. Please refund the duplicate payment of $49 as soon as possible.";
const OUTAGE = "Our API calls return 500 errors since 9am and our checkout is down. Every minute costs us sales.";
const LOGIN = "Hi, I forgot my password and the reset link never arrives. Can you help me get back into my account?";
const NEWSLETTER = "Our November newsletter: new features, webinars and tips. Unsubscribe at any time.";
const ANGRY = "This is unacceptable!! I have been waiting three weeks for my refund. Worst service ever, cancel my account.";
const GERMAN = "Guten Tag, meine Bestellung 4471 ist noch nicht angekommen. Können Sie bitte nachsehen, wo sie bleibt?";

describe("email-analyze offline", () => {
  test("a double charge is billing, a refund request, high priority, with its invoice and amount", async () => {
    const out = await answer("email-analyze", {
      email_content: BILLING,
      subject: "Double charge",
      allowed_categories: ["billing", "technical", "sales", "other"],
      allowed_intents: ["refund_request", "question", "complaint", "cancellation"],
    });
    expect(out).toMatchObject({ category: "billing", intent: "refund_request", priority: "high", language: "en" });
    expect(Object.values(out?.entities as Record<string, string>)).toEqual(expect.arrayContaining(["INV-2291", "$49"]));
  });

  test("an outage is critical; without lists the labels are the engine's own", async () => {
    const out = await answer("email-analyze", { email_content: OUTAGE });
    expect(out).toMatchObject({ category: "technical", priority: "critical" });
  });

  test("an angry email reads angry and high priority", async () => {
    expect(await answer("email-analyze", { email_content: ANGRY })).toMatchObject({ sentiment: "angry", priority: "high" });
  });

  test("labels it cannot match, with no catch-all on the list, give no answer rather than a guess", async () => {
    expect(await answer("email-analyze", { email_content: BILLING, allowed_categories: ["legal", "press"] })).toBeNull();
    expect(
      await answer("email-analyze", { email_content: BILLING, allowed_categories: ["legal", "press", "other"] }),
    ).toMatchObject({
      category: "other",
    });
  });

  test("text in another language: what the engine can honestly give, category and intent marked unknown", async () => {
    const out = await answer("email-analyze", { email_content: GERMAN });
    expect(out).toMatchObject({ language: "de", category: "general", intent: "unknown" });
    expect(out?.summary).toContain("4471");
  });

  test("text in another language with allowed lists to choose from is left to a model", async () => {
    expect(await answer("email-analyze", { email_content: GERMAN, allowed_categories: ["billing", "shipping"] })).toBeNull();
  });
});

describe("email-classification offline", () => {
  test("category from the caller's list, urgency with its reason, typed extracted fields", async () => {
    const out = await answer("email-classification", {
      email_content:
        "Hi, please cancel my subscription (account 88213) before the renewal on 2026-12-01. Invoice INV-77 was $120.50.",
      allowed_categories: ["billing", "cancellation", "support"],
      detect_urgency: true,
      extract_schema: { account_id: "string", renewal_date: "date", amount: "number", vip: "boolean" },
    });
    expect(out?.category).toBe("cancellation");
    expect(out?.urgency).toMatchObject({ level: "high", is_urgent: true });
    expect(out?.extracted).toMatchObject({ account_id: "88213", renewal_date: "2026-12-01", amount: 120.5, vip: null });
  });

  test("extracted fields are filled by json-extract: label lines, date roles, whole-word enums, counts, lists", async () => {
    const extracted = async (email_content: string, extract_schema: Record<string, unknown>) =>
      (await sure("email-classification", { email_content, allowed_categories: ["billing", "support"], extract_schema }))
        .extracted;
    // a "Label: value" line gives a boolean (it used to be null whatever the text said)
    expect(await extracted("Order A-5521 arrived broken.\nVIP: yes", { vip: "boolean" })).toEqual({ vip: true });
    // a date said to be another role is not taken for this one
    expect(await extracted("Refund please: the parcel was delivered late on 5 May 2026.", { end_date: "date" })).toEqual({
      end_date: null,
    });
    // enum values match whole words: "professional" is not the plan "pro"
    const plan = { plan: { type: "string", enum: ["free", "pro"] } };
    expect(await extracted("I am a professional photographer with a billing question.", plan)).toEqual({ plan: null });
    expect(await extracted("I am on the pro plan and was billed twice.", plan)).toEqual({ plan: "pro" });
    // a count is a plain number, not the amount of money in the text; a list holds every value
    expect(await extracted("Invoice INV-77 was $120.50 and INV-78 $80.", { seats: "integer", amounts: "number[]" })).toEqual({
      seats: null,
      amounts: [120.5, 80],
    });
    // a list that finds nothing is null, as every absent field
    expect(await extracted("Thanks for the quick help!", { amounts: "number[]" })).toEqual({ amounts: null });
  });

  test("no urgency or extracted fields unless asked", async () => {
    const out = await answer("email-classification", { email_content: LOGIN });
    expect(Object.keys(out ?? {}).sort()).toEqual(["category", "confidence"]);
    expect(out?.category).toBe("account");
  });
});

describe("email-workflow offline", () => {
  test("an outage is escalated, under the caller's names for action and department", async () => {
    const out = await answer("email-workflow", {
      email_content: OUTAGE,
      allowed_actions: ["send_reply", "escalate_to_manager", "archive"],
      allowed_departments: ["Billing", "Tech Support", "Sales"],
    });
    expect(out).toMatchObject({ action: "escalate_to_manager", department: "Tech Support", priority: "critical" });
    expect(String(out?.reason)).toContain("500 errors");
  });

  test("a newsletter is archived; workflow_first leaves out the analysis", async () => {
    const out = await answer("email-workflow", { email_content: NEWSLETTER, workflow_first: true });
    expect(out?.action).toBe("archive");
    expect(Object.keys(out ?? {}).sort()).toEqual(["action", "department", "priority", "reason"]);
  });

  test("a billing question goes to billing, with the analysis fields", async () => {
    const out = await answer("email-workflow", { email_content: BILLING, allowed_departments: ["support", "billing", "sales"] });
    expect(out).toMatchObject({ department: "billing", category: "billing" });
    expect(typeof out?.summary).toBe("string");
  });

  test("no answer when the caller's actions have nothing close to the decision", async () => {
    expect(await answer("email-workflow", { email_content: NEWSLETTER, allowed_actions: ["reply", "forward"] })).toBeNull();
  });
});

describe("ticket-analyze and ticket-workflow offline", () => {
  test("repeat contacts raise priority", async () => {
    const ticket = "The export button still returns error E-503 after the update.";
    const first = await answer("ticket-analyze", { ticket });
    const third = await answer("ticket-analyze", {
      ticket,
      previous_messages: [
        "Export fails with E-503.",
        { role: "agent", content: "We are looking into it." },
        { role: "customer", content: "Any news?" },
      ],
    });
    const levels = ["low", "medium", "high", "critical"];
    expect(levels.indexOf(String(third?.priority))).toBeGreaterThan(levels.indexOf(String(first?.priority)));
    expect(first).toMatchObject({ category: "technical", intent: "technical_issue" });
  });

  test("an outage is routed to the technical team and escalated", async () => {
    const out = await answer("ticket-workflow", {
      ticket: OUTAGE,
      available_departments: ["billing", "technical_support", "sales", "account_management"],
    });
    expect(out).toMatchObject({ department: "technical_support", priority: "critical", next_action: "escalate", escalate: true });
  });

  test("a login problem goes to account management; a resolved ticket is closed", async () => {
    const departments = ["billing", "technical_support", "account_management"];
    expect(await answer("ticket-workflow", { ticket: LOGIN, available_departments: departments })).toMatchObject({
      department: "account_management",
    });
    const done = await answer("ticket-workflow", {
      ticket: "Thanks, the sync problem is resolved now, you can close this ticket.",
    });
    expect(done?.next_action).toBe("close");
  });
});

describe("reviews offline", () => {
  const REVIEWS = [
    "Fast delivery and great quality, very happy.",
    "Delivery was quick but the size runs small.",
    "Terrible quality, the sole came off after a week.",
    "Great value for the price, delivery in two days.",
  ];

  test("review-analyze: a complaint is negative and needs a response; aspects come from the text", async () => {
    const out = await sure("review-analyze", { review: "The food was cold and the staff were rude. Never again.", rating: 1 });
    expect(out).toMatchObject({ sentiment: "negative", needs_response: true, language: "en" });
    const aspects = (out.aspects as { aspect: string }[]).map((a) => a.aspect);
    expect(aspects).toEqual(expect.arrayContaining(["food", "staff"]));
  });

  test("review-analyze: a flat text takes the stars' word", async () => {
    expect((await answer("review-analyze", { review: "Arrived on Tuesday in a box.", rating: "5/5" }))?.sentiment).toBe(
      "positive",
    );
  });

  test("review-summary: counts add up to the number of reviews, a text is split per line", async () => {
    const out = await answer("review-summary", { reviews: REVIEWS.join("\n") });
    const counts = out?.sentiment_counts as Record<string, number>;
    expect(out?.review_count).toBe(4);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(4);
    expect(out?.highlights).toContain("delivery");
  });

  test("review-insights: themes count reviews, weaknesses come with a recommendation", async () => {
    const out = await sure("review-insights", { reviews: REVIEWS, context: "online shoe shop" });
    const themes = out.themes as { theme: string; mentions: number }[];
    expect(themes.find((t) => t.theme === "delivery")?.mentions).toBe(3);
    for (const t of themes) expect(t.mentions).toBeLessThanOrEqual(4);
    expect((out.recommendations as string[]).length).toBeGreaterThan(0);
  });

  test("reviews in a language the engine does not read are left to a model", async () => {
    expect(await answer("review-summary", { reviews: [GERMAN, GERMAN] })).toBeNull();
  });
});

describe("comment-analyze offline", () => {
  test("a question under a post needs a response", async () => {
    const out = await answer("comment-analyze", {
      comment: "Love the colours! Do you ship these to Canada?",
      platform: "instagram",
    });
    expect(out).toMatchObject({ intent: "question", needs_response: true, is_spam: false, is_toxic: false });
  });

  test("spam is flagged and needs no response", async () => {
    const out = await answer("comment-analyze", {
      comment: "EARN $5000 A WEEK FROM HOME!!! Click here http://bit.ly/xyz to claim your free gift now, limited offer!!!",
    });
    expect(out).toMatchObject({ is_spam: true, intent: "spam", needs_response: false });
  });

  test("an insult is toxic and high priority", async () => {
    const out = await answer("comment-analyze", { comment: "You are all idiots and your product is garbage, shut up." });
    expect(out).toMatchObject({ is_toxic: true, priority: "high" });
  });
});
