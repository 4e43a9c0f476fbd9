import { Elysia } from "elysia";
import { GatewayError } from "../errors";
import { errorResponse } from "../http/respond";
import { stateOf } from "../http/state";

const PATHS = [
  "/api/v1/knowledge-bases",
  "/api/v1/chatbots",
  "/api/v1/ai/faq-collections",
  "/api/v1/ai/faq-match",
  "/api/v1/ai/knowledge-bases",
];

/**
 * Mounted instead of the knowledge routes when accounts live in PostgreSQL: knowledge bases, FAQ
 * collections and chatbots are stored in the embedded SQLite file only (not yet in PostgreSQL), so
 * they are refused clearly rather than kept per node where they would differ between nodes.
 */
export function knowledgeRefused(): Elysia {
  const refuse = ({ request }: { request: Request }) => {
    const state = stateOf(request);
    state.fn = "knowledge";
    return errorResponse(
      state,
      new GatewayError(
        "not_found",
        "knowledge bases, FAQ collections and chatbots are not available on a gateway whose accounts are in PostgreSQL (TEXTAI_DATABASE_URL) yet; see README, Many nodes",
      ),
    );
  };
  let app = new Elysia({ name: "knowledge-refused" });
  for (const p of PATHS) app = app.all(p, refuse).all(`${p}/*`, refuse);
  return app as unknown as Elysia;
}
