import type { AuthInfo } from "../auth/interface";
import { type EdgeDeps, requestEdge } from "./edge";
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
 * The request edge of a resource route (knowledge bases, FAQ collections, chatbots, account): body
 * (for POST/PUT/PATCH), authentication and a "standard" rate limit under the resource's name.
 */
export async function authedContext(
  deps: EdgeDeps,
  resource: string,
  request: Request,
  state: RequestState,
  params: Record<string, string> = {},
  query: Record<string, string | undefined> = {},
): Promise<AuthedContext> {
  const { auth, body } = await requestEdge(deps, request, state, {
    fn: resource,
    rateClass: "standard",
    body: BODY_METHODS.has(request.method),
  });
  return { state, auth, body, params, query, request };
}
