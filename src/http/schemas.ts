import { Type as T, type TSchema } from "@sinclair/typebox";

const Attempt = T.Object({
  provider: T.String(),
  model: T.Optional(T.String()),
  error: T.String(),
  status: T.Optional(T.Integer()),
  ms: T.Number(),
});

export const MetaSchema = T.Object({
  version: T.Literal("v1"),
  timestamp: T.String({ format: "date-time" }),
  credits_deducted: T.Integer(),
  credits_remaining: T.Optional(T.Integer()),
  execution_time_ms: T.Optional(T.Integer()),
  cached: T.Optional(T.Boolean()),
  provider: T.Optional(T.String()),
  model: T.Optional(T.String()),
  attempts: T.Optional(T.Array(Attempt)),
  ignored: T.Optional(
    T.Array(T.Object({ param: T.String(), reason: T.String() }), {
      description: "offline engine: options it accepted but did not use; the answer is what it is without them",
    }),
  ),
  low_confidence: T.Optional(
    T.Array(T.String(), {
      description: "offline engine: result fields it could only guess (a language its cues do not cover)",
    }),
  ),
  not_found: T.Optional(
    T.Array(T.String(), { description: "offline engine: schema fields it looked for by pattern and did not find (null)" }),
  ),
});

export function envelopeSchema(result: TSchema) {
  return T.Object({
    success: T.Literal(true),
    status: T.Literal("success"),
    code: T.Integer(),
    message: T.String(),
    request_id: T.String({ pattern: "^req_" }),
    data: T.Object({ result }),
    meta: MetaSchema,
  });
}

export const errorEnvelopeSchema = T.Object({
  success: T.Literal(false),
  status: T.Literal("error"),
  code: T.Integer(),
  message: T.String(),
  request_id: T.String(),
  error: T.Object({ type: T.String(), code: T.String(), message: T.String(), param: T.Union([T.String(), T.Null()]) }),
  meta: MetaSchema,
});
