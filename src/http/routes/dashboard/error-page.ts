/**
 * A refusal of a dashboard address a browser opened (a mistyped one, sign-up when it is off, the
 * operator console without an admin token, a request id that is not the account's): a page in the
 * dashboard's layout with the status and what went wrong, and the ways back, instead of the JSON
 * envelope. API clients keep the envelope: a request that does not ask for HTML (Accept), one that
 * also names JSON, any method but GET and HEAD, and the dashboard's JSON routes (/dashboard/api/…).
 */
import type { GatewayError } from "../../../errors";
import { SECURITY_HEADERS } from "../../session";
import type { RequestState } from "../../state";
import { html } from "./html";
import { layout } from "./pages";

/** Whether a refusal of this request is shown as a dashboard page: a browser's GET of a dashboard page. */
export function wantsDashboardPage(request: Request, path: string): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  if (path !== "/dashboard" && !path.startsWith("/dashboard/")) return false;
  if (path.startsWith("/dashboard/api/") || path === "/dashboard/api") return false;
  const accept = request.headers.get("accept") ?? "";
  return /\btext\/html\b/i.test(accept) && !/\bapplication\/json\b/i.test(accept);
}

const TITLES: Record<number, string> = {
  400: "Bad request",
  401: "Not signed in",
  403: "Not allowed",
  404: "Page not found",
  405: "Page not found",
  429: "Too many requests",
};

const upperFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The page: the status's title, the refusal's message, the request id, and links to the overview and sign-in. */
export function dashboardErrorPage(state: RequestState, err: GatewayError, path: string, operatorEnabled: boolean): Response {
  state.errorCode = err.code;
  state.status = err.status;
  const title = TITLES[err.status] ?? (err.status >= 500 ? "Something went wrong" : "Request refused");
  // the operator's pages lead back to the operator's sign-in, when the console is open at all
  const operator = operatorEnabled && (path === "/dashboard/operator" || path.startsWith("/dashboard/operator/"));
  const what =
    err.status === 404 || err.status === 405
      ? "There is no page at this address. It may have been mistyped, or the page is not open on this gateway."
      : err.message;
  const body = html`<p class="flash error" role="alert">${what}</p>
${(err.status === 404 || err.status === 405) && err.message !== "no such route" ? html`<p class="hint">${upperFirst(err.message)}.</p>` : ""}
<p class="links" data-testid="way-back"><a href="/dashboard">Back to the overview</a> · <a href="${operator ? "/dashboard/operator/login" : "/dashboard/login"}">${operator ? "Operator sign-in" : "Sign in"}</a></p>
<p class="hint">Status ${err.status} · request id <code>${state.requestId}</code></p>`;
  const text = layout({ title, operatorEnabled }, body);
  return new Response(text, {
    status: err.status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      ...SECURITY_HEADERS,
      ...state.headers,
      // Allow of a 405, Retry-After of a 429
      ...err.headers,
      "x-request-id": state.requestId,
    },
  });
}
