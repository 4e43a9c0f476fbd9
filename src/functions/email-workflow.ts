import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { actionName, emailAction } from "./offline/routing";
import {
  builtinIntent,
  categoryOfIntent,
  declineLanguage,
  departmentOfIntent,
  gist,
  labelFor,
  offlineReadable,
  priorityOf,
  withSubject,
  writerSentiment,
} from "./offline/signals";
import { decline } from "./offline-reach";
import { emailInputs } from "./prompt";
import { AllowedList, CustomInstructions, Enum, oneOf, Priority, Result, Subject, Text, WRITER_SENTIMENTS } from "./schemas";

const request = Type.Object({
  email_content: Text("the email body"),
  subject: Subject(),
  allowed_actions: AllowedList("action must be one of these, e.g. reply, forward, escalate, archive"),
  allowed_departments: AllowedList("department must be one of these"),
  workflow_first: Type.Optional(
    Type.Boolean({ description: "true: return only the routing decision, without the category, sentiment and summary" }),
  ),
  custom_instructions: CustomInstructions(),
});
type Req = Static<typeof request>;

/** Base shape: the analysis fields are optional because workflow_first leaves them out. */
const fields = (req: Partial<Req>) => ({
  action: oneOf(req.allowed_actions, "what to do with the email next", "reply, forward, escalate, archive"),
  department: oneOf(req.allowed_departments, "team that should handle it"),
  priority: Priority(),
  reason: Type.String({ description: "why this action and department, in one sentence" }),
  category: Type.String({ description: "what the email is about" }),
  sentiment: Enum(WRITER_SENTIMENTS, "the sender's mood"),
  summary: Type.String({ description: "one or two sentences on what the email says and asks" }),
});
const DESCRIPTION = "routing decision for one email";

const result = (() => {
  const f = fields({});
  return Result(
    { ...f, category: Type.Optional(f.category), sentiment: Type.Optional(f.sentiment), summary: Type.Optional(f.summary) },
    DESCRIPTION,
  );
})();

function resultFor(req: Req): TSchema {
  const f = fields(req);
  if (!req.workflow_first) return Result(f, DESCRIPTION);
  return Result({ action: f.action, department: f.department, priority: f.priority, reason: f.reason }, DESCRIPTION);
}

export default defineFunction({
  name: "email-workflow",
  summary: "Decide what to do with an email: action, department and priority",
  tags: ["email"],
  request,
  result,
  cost: 2,
  resultSchemaFor: resultFor,
  pins: (req) => ({ action: req.allowed_actions, department: req.allowed_departments }),
  role: "You triage incoming emails: you decide which team handles each one and what happens next.",
  brief: (req) => ({
    rules: [
      "Escalate legal threats, security incidents and outages; archive newsletters and automated notices.",
      req.workflow_first
        ? "Return only the routing decision: action, department, priority and reason."
        : "Also give the email's category, the sender's sentiment and a short summary.",
    ],
    instructions: req.custom_instructions,
    inputs: emailInputs(req),
  }),
  local: (req) => {
    const text = withSubject(req.email_content, req.subject);
    if (!offlineReadable(text)) return declineLanguage(req, text);
    const { intent } = builtinIntent(text);
    const sentiment = writerSentiment(text);
    const priority = priorityOf(text, sentiment);
    const decision = emailAction(text, intent, priority.level, sentiment);
    const action = actionName(decision.action, req.allowed_actions);
    const department = labelFor(text, req.allowed_departments, () => departmentOfIntent(intent));
    if (action === null) return decline(req, "allowed_actions", "no offline cue fits any of these actions");
    if (department === null) return decline(req, "allowed_departments", "no offline cue fits any of these departments");
    const reason = `${action} (${department}) because ${decision.why}; priority ${priority.level} because ${priority.why}.`;
    const decisionOnly = { action, department, priority: priority.level, reason };
    if (req.workflow_first) return decisionOnly;
    return { ...decisionOnly, category: categoryOfIntent(intent), sentiment, summary: gist(req.email_content, 2) };
  },
  example: {
    request: {
      email_content: "Our whole team has been locked out of the dashboard since this morning. We have a client demo at 3pm!",
      subject: "URGENT: cannot log in",
      allowed_actions: ["reply", "escalate", "forward", "archive"],
      allowed_departments: ["support", "billing", "sales"],
    },
    result: {
      action: "escalate",
      department: "support",
      priority: "critical",
      reason: "A whole team is locked out before a client demo today.",
      category: "technical",
      sentiment: "frustrated",
      summary: "The customer's team cannot log in to the dashboard and needs access before a 3pm demo.",
    },
  },
});
