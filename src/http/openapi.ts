/** Top-level OpenAPI document fields; paths come from the routes. */
export function openApiDocumentation() {
  return {
    info: {
      title: "Text-AI Gateway",
      version: "1.0.0",
      description:
        "HTTP + JSON gateway for AI text functions. Every answer uses one envelope (success, status, code, message, request_id, data.result, meta). Errors carry error.type, error.code, error.message and error.param.",
    },
    tags: [
      { name: "Text", description: "Text and language functions" },
      { name: "Email" },
      { name: "Reviews" },
      { name: "Comments" },
      { name: "Tickets" },
      { name: "Data" },
      { name: "Safety" },
      { name: "Conversation" },
      { name: "Generation" },
      { name: "Knowledge" },
      { name: "Account" },
      { name: "Admin" },
      { name: "Operations" },
    ],
    components: {
      securitySchemes: {
        apiKeyHeader: { type: "apiKey" as const, in: "header" as const, name: "x-api-key" },
        bearer: { type: "http" as const, scheme: "bearer" },
      },
    },
    security: [{ apiKeyHeader: [] }, { bearer: [] }],
  };
}
