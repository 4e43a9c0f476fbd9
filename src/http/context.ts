import type { AppDeps } from "../app";
import { authenticate } from "../auth/authenticate";
import type { AuthInfo } from "../auth/key-store";
import { readJsonBody } from "./body";
import type { RequestState } from "./state";

export interface AuthedContext {
  state: RequestState;
  auth: AuthInfo;
  body: Record<string, unknown>;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  request: Request;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/**
 * Reads the JSON body (for POST/PUT/PATCH) and authenticates the caller: what every resource route
 * (knowledge bases, FAQ collections, chatbots, account) needs before its own logic.
 */
export async function authedContext(
  deps: Pick<AppDeps, "keys" | "config">,
  request: Request,
  state: RequestState,
  params: Record<string, string> = {},
  query: Record<string, string | undefined> = {},
): Promise<AuthedContext> {
  const body = BODY_METHODS.has(request.method) ? await readJsonBody(request, deps.config.limits) : {};
  const auth = authenticate(deps.keys, request.headers, body);
  state.auth = auth;
  return { state, auth, body, params, query, request };
}
