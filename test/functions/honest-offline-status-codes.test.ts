/**
 * ticket-analyze through a real server: any 5xx a ticket reports, as people write it, is an outage
 * (critical, escalated, technical); one that went away on retry is not, nor a number that is no
 * status. The texts here are not those of the status-codes eval sets.
 */
import { describe, expect, test } from "bun:test";
import { offlineGatewayFor } from "../helpers/gateway";

const call = offlineGatewayFor(10_000);
const show = (r: { status: number; json: unknown }) => `${r.status} ${JSON.stringify(r.json).slice(0, 700)}`;

describe("ticket-analyze reads status codes as people write them", () => {
  test.each([
    "Our store website shows error 500 on every page since this morning.",
    "All our POS terminals show error 502 when they connect, we can only take cash in 14 stores.",
    "We are getting 504s from the reports page.",
    "The import job hits a 500 on every file.",
    "Seeing 5xx on the public API.",
    "Since lunch the shop answers 503 Service Unavailable.",
    "The site is down: 502 Bad Gateway.",
    "Le site affiche erreur 500 sur toutes les pages.",
  ])("an outage: %s", async (ticket) => {
    const r = await call("/api/v1/ai/ticket-analyze", { ticket });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result, show(r)).toMatchObject({ category: "technical", priority: "critical", escalate: true });
  });

  test.each([
    "I saw error 500 once while saving a draft, after a reload it worked.",
    "Please send 500 flyers to our shop in room 502.",
    "We were billed $503 this month instead of $350.",
    "Clicking the link gives me error 404.",
  ])("not an outage: %s", async (ticket) => {
    const r = await call("/api/v1/ai/ticket-analyze", { ticket });
    expect(r.status, show(r)).toBe(200);
    expect(r.json.data.result.priority, show(r)).not.toBe("critical");
    expect(r.json.data.result.escalate, show(r)).toBe(false);
  });
});
