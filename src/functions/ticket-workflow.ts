import { type Static, Type } from "@sinclair/typebox";
import { defineFunction } from "./define";
import { ticketAction } from "./offline/routing";
import { declineLanguage, departmentOfIntent, labelFor, offlineReadable } from "./offline/signals";
import { readTicket } from "./offline/tickets";
import { decline } from "./offline-reach";
import { ticketInputs } from "./prompt";
import { AllowedList, Enum, oneOf, Priority, Result, Strings, Text, ticketContextFields } from "./schemas";

const request = Type.Object({
  ticket: Text("the ticket text"),
  ...ticketContextFields(),
  available_departments: AllowedList("department must be one of these"),
});
type Req = Static<typeof request>;

export const TICKET_ACTIONS = ["reply", "request_information", "assign", "escalate", "close"] as const;

const resultFor = (req: Partial<Req>) =>
  Result(
    {
      department: oneOf(req.available_departments, "team that should handle the ticket"),
      priority: Priority(),
      next_action: Enum(TICKET_ACTIONS, "what happens next"),
      escalate: Type.Boolean({ description: "true when a lead or specialist must look at it now" }),
      tags: Strings("short labels for routing and reporting", 10),
      reason: Type.String({ description: "why this department, priority and action, in one sentence" }),
    },
    "routing decision for one support ticket",
  );
const result = resultFor({});

export default defineFunction({
  name: "ticket-workflow",
  summary: "Route a support ticket: department, priority, next action and escalation",
  tags: ["tickets"],
  request,
  result,
  cost: 2,
  resultSchemaFor: resultFor,
  pins: (req) => ({ department: req.available_departments }),
  role: "You route customer support tickets to the right team and decide the next step.",
  brief: (req) => ({
    rules: [
      "request_information when the ticket lacks what the team needs; close only for resolved or empty tickets.",
      "escalate outages, security incidents, data loss, legal threats and customers about to leave.",
      "Take previous messages into account: repeated contacts raise priority.",
    ],
    inputs: ticketInputs(req, req.ticket),
  }),
  local: (req) => {
    if (!offlineReadable(req.ticket)) return declineLanguage(req, req.ticket);
    const t = readTicket(req);
    const department = labelFor(t.text, req.available_departments, () => departmentOfIntent(t.intent));
    if (department === null) return decline(req, "available_departments", "no offline cue fits any of these departments");
    const specialist = departmentOfIntent(t.intent) !== "support";
    const next = ticketAction(req.ticket, t.intent, t.escalate, specialist);
    return {
      department,
      priority: t.priority.level,
      next_action: next.action,
      escalate: t.escalate,
      tags: t.tags,
      reason: `${department} handles it; next: ${next.action.replace("_", " ")} because ${next.why}; priority ${t.priority.level} because ${t.priority.why}.`,
    };
  },
  example: {
    request: {
      ticket: "Our API calls return 500 errors since 9am and our checkout is down.",
      customer_context: "Enterprise plan",
      available_departments: ["billing", "technical_support", "sales", "account_management"],
    },
    result: {
      department: "technical_support",
      priority: "critical",
      next_action: "escalate",
      escalate: true,
      tags: ["api", "outage", "enterprise"],
      reason: "An enterprise customer's checkout is down because of API errors.",
    },
  },
});
