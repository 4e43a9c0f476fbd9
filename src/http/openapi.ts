import { VERSION } from "../version";

/**
 * Top-level OpenAPI document fields; paths come from the routes. The document's version is the
 * gateway's (package.json's): the paths say the API's (/api/v1, /v1), and the document changes with the gateway.
 */
export function openApiDocumentation() {
  return {
    info: {
      title: "Text-AI Gateway",
      version: VERSION,
      description:
        "HTTP + JSON gateway for AI text functions. Every answer uses one envelope (success, status, code, message, request_id, data.result, meta). Errors carry error.type, error.code, error.message and error.param.",
    },
    tags: [
      { name: "Text", description: "Language, sentiment, translation, summaries, grammar, keywords, intent" },
      { name: "Email", description: "Email analysis, classification and replies" },
      { name: "Reviews", description: "Review analysis and replies" },
      { name: "Comments", description: "Comment analysis and moderation" },
      { name: "Tickets", description: "Support ticket analysis and replies" },
      { name: "Extraction", description: "JSON extraction and search-query parsing" },
      { name: "Safety", description: "Spam, PII and moderation" },
      { name: "Conversation", description: "Chat, and the OpenAI-compatible chat completions endpoint" },
      { name: "Generation", description: "Content and image generation" },
      { name: "Knowledge", description: "Knowledge bases, FAQ collections and chatbots" },
      { name: "Account", description: "Usage and the current key" },
      { name: "Admin", description: "Accounts, credits and keys (admin token)" },
      { name: "Operations", description: "Health, readiness, metrics and these docs" },
      {
        name: "Dashboard",
        description:
          "The JSON routes the dashboard's pages call: signed in with the session cookie (sign in at /dashboard/login), same origin only",
      },
    ],
    components: {
      securitySchemes: {
        apiKeyHeader: { type: "apiKey" as const, in: "header" as const, name: "x-api-key" },
        bearer: { type: "http" as const, scheme: "bearer" },
        session: { type: "apiKey" as const, in: "cookie" as const, name: "textai_session" },
      },
    },
    security: [{ apiKeyHeader: [] }, { bearer: [] }],
  };
}
