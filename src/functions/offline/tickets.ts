/** Offline reading of a support ticket shared by ticket-analyze and ticket-workflow. */
import { extractKeywords } from "../../offline-engine/keywords";
import {
  builtinIntent,
  type Graded,
  languageOf,
  type Priority,
  priorityOf,
  type WriterSentiment,
  withSubject,
  writerSentiment,
} from "./signals";

export interface TicketFields {
  ticket: string;
  subject?: string;
  language?: string;
  previous_messages?: (string | { role?: string; content: string })[];
}

export interface TicketReading {
  text: string;
  intent: string;
  sentiment: WriterSentiment;
  priority: Graded<Priority>;
  escalate: boolean;
  tags: string[];
}

const LEVELS: Priority[] = ["low", "medium", "high", "critical"];
const CHURN = /\b(?:cancel\w*|switch(?:ing)? to|leave|leaving|competitor|close (?:my|our) account)\b/i;
const AGENT_ROLES = /^(?:agent|assistant|support|staff|system)$/i;

/** Earlier messages from the customer: a third contact about the same thing is more urgent than the first. */
function customerFollowUps(req: TicketFields): number {
  return (req.previous_messages ?? []).filter((m) => typeof m === "string" || !AGENT_ROLES.test(m.role ?? "")).length;
}

export function readTicket(req: TicketFields): TicketReading {
  const text = withSubject(req.ticket, req.subject);
  const { intent } = builtinIntent(text);
  const sentiment = writerSentiment(text);
  let priority = priorityOf(text, sentiment);
  const followUps = customerFollowUps(req);
  if (followUps >= 2 && priority.level !== "critical") {
    priority = { level: LEVELS[LEVELS.indexOf(priority.level) + 1], why: `the customer has written ${followUps + 1} times` };
  }
  const churnRisk = sentiment === "angry" && CHURN.test(text);
  const escalate = priority.level === "critical" || churnRisk;
  const tags = extractKeywords(text, 5, languageOf(req.ticket, req.language)).map((k) => k.keyword.toLowerCase());
  return { text, intent, sentiment, priority, escalate, tags };
}
