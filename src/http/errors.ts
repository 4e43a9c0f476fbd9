import { GatewayError } from "../errors";
import { isStorageUnavailable } from "../storage/db";

/** Maps anything thrown to the closed set of gateway errors. */
export function toGatewayError(code: string | number, error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (code === "NOT_FOUND") return new GatewayError("not_found", "no such route");
  if (code === "PARSE") return new GatewayError("invalid_json", "request body is not valid JSON");
  if (code === "VALIDATION") return new GatewayError("invalid_request", "request does not match the schema");
  if (isStorageUnavailable(error)) {
    return new GatewayError("service_unavailable", "storage is temporarily unavailable; retry shortly", {
      headers: { "Retry-After": "1" },
    });
  }
  return new GatewayError("internal_error", "internal error");
}
