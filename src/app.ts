import { openapi } from "@elysiajs/openapi";
import { type Context, Elysia, type ErrorHandler, type PreContext } from "elysia";

type OpenApiOptions = NonNullable<Parameters<typeof openapi>[0]>;

import { authenticate, presentedKey } from "./auth/authenticate";
import { requestOrigin } from "./dashboard/security";
import { clientClosed, GatewayError } from "./errors";
import { payloadTooLarge, watchBody } from "./http/body";
import { corsOf } from "./http/cors";
import type { AppDeps } from "./http/deps";
import { EdgeAnswer, keyFnOf } from "./http/edge-plugin";
import { newRequestId } from "./http/envelope";
import { toGatewayError } from "./http/errors";
import { bodyMayFollow, closingAnswer } from "./http/linger";
import { openApiDocumentation } from "./http/openapi";
import { brokenPath, decodablePath, errorWireOf, meantRoute, meantRouteMessage, pathOf } from "./http/path";
import { FunctionPipeline } from "./http/pipeline";
import { errorResponse, upstreamErrorResponse } from "./http/respond";
import { accountRoutes } from "./http/routes/account";
import { adminRoutes } from "./http/routes/admin";
import { auditRoutes } from "./http/routes/audit";
import { dashboardRoutes } from "./http/routes/dashboard";
import { dashboardErrorPage, wantsDashboardPage } from "./http/routes/dashboard/error-page";
import { functionRoutes } from "./http/routes/functions";
import { knowledgeRoutes } from "./http/routes/knowledge";
import { adminMembers } from "./http/routes/members";
import { messagesRoutes } from "./http/routes/messages";
import { openAiCompatRoutes } from "./http/routes/openai-compat";
import { opsRoutes } from "./http/routes/ops";
import { adminWebhooks } from "./http/routes/webhooks";
import { endTrace, newRequestState, type RequestState, type WithState } from "./http/state";
import { type Logger, logsAt } from "./log";
import { fixedLabels } from "./metrics";
import { UpstreamClientError } from "./providers/chat";
import type { RequestRecord } from "./requestlog/interface";
import type { RequestLog } from "./requestlog/recorder";

// /docs must work offline: the bundle from the binary, and no web fonts, favicon request, telemetry,
// AI agent, MCP or deploy toolbar that would reach Scalar's servers
// (`agent` is known to the embedded bundle, not yet to the plugin's types)
const scalarConfig: Partial<NonNullable<OpenApiOptions["scalar"]>> & { agent: { disabled: boolean } } = {
  cdn: "/docs/assets/scalar.js",
  favicon: "data:,",
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: "never",
  agent: { disabled: true },
  mcp: { disabled: true },
};

/**
 * /api/... and /v1/...: routes whose every answer (envelope, error, stream) is built from the
 * request state, and whose every route takes an API key (test/core/security-matrix.test.ts)
 */
function isApiPath(path: string): boolean {
  return path.startsWith("/api/") || path.startsWith("/v1/");
}

/**
 * Whether a concrete path is one of a route's: "/api/v1/knowledge-bases/:id" takes any one
 * segment for ":id", a "*" segment takes the rest, a trailing "/" is optional. Compared segment by
 * segment, not with a regex built from the route (the path is the caller's).
 */
function routePathMatches(route: string, path: string): boolean {
  const want = route.split("/");
  const got = (path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path).split("/");
  for (let i = 0; i < want.length; i++) {
    const w = want[i] as string;
    if (w === "*") return true;
    const g = got[i];
    if (g === undefined) return false;
    if (w.startsWith(":") ? g === "" : w !== g) return false;
  }
  return got.length === want.length;
}

/**
 * /docs and /openapi.json. The document names the server it was fetched from (the request's own
 * origin; X-Forwarded-Proto only from a trusted proxy), so the code samples carry a host.
 */
function apiDocs(deps: AppDeps) {
  return new Elysia({ name: "api-docs" })
    .onAfterHandle(({ request, response, server }) => {
      if (!response || typeof response !== "object" || response instanceof Response) return;
      const peer = server?.requestIP(request)?.address ?? null;
      const { origin } = requestOrigin(request, peer, deps.config.dashboard.trustedProxies);
      // the plugin caches one document for every request: answer a copy
      return { ...(response as Record<string, unknown>), servers: [{ url: origin }] };
    })
    .use(
      openapi({
        path: "/docs",
        specPath: "/openapi.json",
        documentation: openApiDocumentation() as unknown as OpenApiOptions["documentation"],
        scalar: scalarConfig as OpenApiOptions["scalar"],
        // the dashboard's HTML pages and assets; its JSON routes (/dashboard/api/...) stay documented
        exclude: { paths: ["/docs/assets/scalar.js", /^\/dashboard(?!\/api\/)/, "/login"] },
      }),
    );
}

/**
 * One request-log row for an authenticated request: an in-memory append, written in batches.
 * A streamed answer is recorded when its stream has ended, with how it ended and what it cost.
 */
function recordRequest(log: RequestLog, request: Request, s: RequestState, ms: number): void {
  const auth = s.auth;
  if (!auth) return;
  const row = (latencyMs: number): RequestRecord => ({
    requestId: s.requestId,
    time: s.startedAt,
    accountId: auth.accountId,
    keyId: auth.keyId,
    method: request.method,
    path: s.path ?? pathOf(request.url),
    function: s.fn ?? null,
    status: s.status ?? 200,
    errorCode: s.errorCode ?? null,
    provider: s.provider ?? null,
    model: s.model ?? null,
    latencyMs: Math.round(latencyMs),
    credits: s.credits ?? 0,
    cache: s.cached === undefined ? null : s.cached ? "HIT" : "MISS",
    promptTokens: s.tokens?.input ?? null,
    completionTokens: s.tokens?.output ?? null,
    idempotentReplay: s.replayed === true,
    guardrails: s.guardrails ?? null,
  });
  if (s.streamEnded) void s.streamEnded.then(() => log.record(row(performance.now() - s.startedPerf)));
  else log.record(row(ms));
}

/**
 * The app's one answer to whatever a route or hook threw, by route: in the envelope, or in OpenAI's
 * shape under `/v1` (a provider's own 4xx to a `/v1` call passed through as it was). A client that
 * went away is its own outcome (499), whatever broke because of it; a path no route has is 404,
 * or 405 with Allow when a route has it for another method. A browser's GET of a dashboard address
 * gets a page in the dashboard's layout instead of the envelope (dashboard/error-page.ts).
 */
function refusal(
  request: Request,
  code: string | number,
  error: unknown,
  state: RequestState,
  logger: Logger,
  routeMethods: (path: string) => string[],
  /** the answer ends its connection (closesConnection); so does an error that says so itself (a 413) */
  closes: boolean,
  /** whether the operator console is open (a dashboard error page's link back) */
  operatorEnabled: boolean,
): Response {
  const path = state.path ?? pathOf(request.url);
  const gone = request.signal.aborted;
  let wire = errorWireOf(path);
  if (!gone && error instanceof UpstreamClientError) {
    const res = upstreamErrorResponse(state, error, wire);
    return closes ? closingAnswer(request, res) : res;
  }
  let err = gone ? clientClosed() : toGatewayError(code, error);
  if (code === "NOT_FOUND") {
    const allow = path ? routeMethods(path) : [];
    // a path that does not decode is the client's error wherever it points (CONTRACT section 4: 400
    // invalid_request), as is a known path the router still did not match for this very method
    if (allow.includes(request.method) || !decodablePath(path)) err = brokenPath();
    else if (allow.length > 0)
      err = new GatewayError("method_not_allowed", `${request.method} is not allowed here; use ${allow.join(" or ")}`, {
        headers: { Allow: allow.join(", ") },
      });
    else {
      // a base URL with /v1 twice or without it: the route it meant, in that route's shape
      const meant = path ? meantRoute(path, (p) => routeMethods(p).length > 0) : null;
      if (meant) {
        err = new GatewayError("not_found", meantRouteMessage(path, meant));
        wire = errorWireOf(meant);
      }
    }
  }
  if (err.code === "internal_error") {
    logger.log("error", "unhandled error", {
      request_id: state.requestId,
      error_name: (error as Error)?.name,
      error_message: (error as Error)?.message,
      stack: (error as Error)?.stack,
    });
  }
  const res = wantsDashboardPage(request, path)
    ? dashboardErrorPage(state, err, path, operatorEnabled)
    : errorResponse(state, err, wire);
  // the last answer of its connection: when the client may still be sending the body (a 413, a
  // 401 to a body nobody read), it lingers while the rest is dropped (http/linger.ts)
  return closes || err.headers.connection === "close" ? closingAnswer(request, res) : res;
}

/**
 * Whether this answer ends its connection: while draining (decided when the answer is made, so a
 * call in flight at the signal is told too, and clients reconnect elsewhere), and when the
 * request's body was never read (a body sent to a route that takes none is not drained, however
 * long it is).
 */
function connectionCloser(deps: AppDeps): (request: Request) => boolean {
  return (request: Request): boolean =>
    deps.lifecycle.draining ||
    (!request.bodyUsed && (request.headers.has("transfer-encoding") || Number(request.headers.get("content-length")) > 0));
}

/**
 * The app's `onRequest`: a request's state, its trace and request id, and the body limit.
 * The app's hooks and the edge read and write the state as `context.state`, never passing the
 * context itself to a function: Elysia (sucrose) reads each hook's source, and a context passed
 * whole makes every route build all of it for each request (cookies parsed, headers copied into
 * an object, the query parsed): about 4 µs a request on the fast paths (bench/README.md).
 */
function requestStart(deps: AppDeps, routeMethods: (path: string) => string[]) {
  const tracing = deps.tracing ?? null;
  const { maxBodyBytes } = deps.config.limits;
  const cors = corsOf(deps.config.cors);
  return (context: PreContext) => {
    const { request, set } = context;
    const state = newRequestState(newRequestId());
    (context as WithState).state = state;
    const { requestId } = state;
    if (tracing) state.trace = tracing.begin(request.headers, state.startedPerf);
    // every answer carries it: the API's own answers from the request state (set here too, it would
    // cost each of them Elysia's header merge), those of plugins (/docs, /openapi.json), plain-text
    // ones (/metrics) and the dashboard from here
    state.path = pathOf(request.url);
    if (!isApiPath(state.path)) set.headers["x-request-id"] = requestId;
    else if (cors) {
      // a page of an allowed origin: its answer's CORS headers (before any refusal below), its preflight answered
      const origin = request.headers.get("origin");
      const path = state.path;
      const preflight = cors.answer(request, origin, state, () => routeMethods(path));
      if (preflight) return preflight;
    }
    // a declared body over the limit is refused before anything reads it, on every route (Bun's own
    // limit is far above, so its bare 413 never answers instead)
    const declared = request.headers.get("content-length");
    if (declared !== null && Number(declared) > maxBodyBytes) throw payloadTooLarge(maxBodyBytes);
    // a body still arriving when the drain's grace ends is not waited for (server.ts)
    if (request.method !== "GET" && request.method !== "HEAD") watchBody(request, deps.lifecycle.bodyReads);
  };
}

/**
 * The caller of an API call refused before its key was checked (a body over the limit by its
 * Content-Length, or one the edge could not read; an unknown path, another method): the key of its
 * headers (x-api-key, Authorization: Bearer; a body is never read for it), so that the refusal is
 * in that account's request log (docs/request-log.md), under the function of the path's key route
 * when it has one. Only paths whose routes all take a key (`/api/`, `/v1/`); a key that does not
 * authenticate leaves the request as it was, in no log. Undefined (nothing to wait for) without a
 * key to check: the refusals of every other request cost one look at the headers.
 */
function callerOfRefusal(
  deps: AppDeps,
  request: Request,
  state: RequestState,
  routeKeyFn: (method: string, path: string) => string | null | undefined,
): Promise<void> | undefined {
  if (state.auth || state.keyRefused || !deps.config.log.enabled) return undefined;
  const path = state.path ?? pathOf(request.url);
  if (!isApiPath(path) || presentedKey(request.headers, null) === null) return undefined;
  const fn = routeKeyFn(request.method, path);
  // a route of the path takes another credential: not an account's call
  if (fn === null) return undefined;
  return authenticate(deps.keys, request.headers, null).then(
    (auth) => {
      state.auth = auth;
      if (fn !== undefined) state.fn ??= fn;
    },
    () => {},
  );
}

/**
 * The app's one error handler: every refusal and failure answered in the envelope (OpenAI's shape
 * under /v1), a known path with another method as 405 + Allow. A refusal before the key was
 * checked waits for it first (callerOfRefusal): the one place such a refusal reaches the request log.
 */
function errorAnswer(
  deps: AppDeps,
  closesConnection: (request: Request) => boolean,
  routeMethods: (path: string) => string[],
  routeKeyFn: (method: string, path: string) => string | null | undefined,
) {
  const { logger } = deps;
  const operatorEnabled = !!deps.config.adminToken;
  return (context: Parameters<ErrorHandler>[0]) => {
    const { request, code, error } = context;
    // the edge answered instead of the route (a dashboard page's redirect to sign-in), its body unread
    if (error instanceof EdgeAnswer) return closesConnection(request) ? closingAnswer(request, error.response) : error.response;
    const state = (context as WithState).state ?? newRequestState(newRequestId());
    (context as WithState).state = state;
    // the answer carries its own status: left at the error's, Elysia's status would make it copy
    // the answer into a new Response (headers and all) only to give it the status it already has
    context.set.status = 200;
    const caller = callerOfRefusal(deps, request, state, routeKeyFn);
    if (caller)
      return caller.then(() =>
        refusal(request, code, error, state, logger, routeMethods, closesConnection(request), operatorEnabled),
      );
    return refusal(request, code, error, state, logger, routeMethods, closesConnection(request), operatorEnabled);
  };
}

/** The app's `onAfterResponse`: the request's metrics, its request-log row, its log line, the end of its trace. */
function requestEnd(deps: AppDeps) {
  const { logger, metrics } = deps;
  /** each request's metric labels, by function and status: their keys made once (metrics.ts) */
  const requestLabels = new Map<string, { byStatus: Record<string, string>; byFunction: Record<string, string> }>();
  return (context: Context) => {
    const { request, route } = context;
    const s = (context as WithState).state ?? newRequestState(newRequestId());
    (context as WithState).state = s;
    const ms = performance.now() - s.startedPerf;
    const status = s.status ?? 200;
    const fn = s.fn ?? "other";
    const labels = fixedLabels(requestLabels, `${fn}\u0000${status}`, () => ({
      byStatus: Object.freeze({ function: fn, status: String(status) }),
      byFunction: Object.freeze({ function: fn }),
    }));
    metrics.inc("textai_requests_total", "HTTP requests by function and status", labels.byStatus);
    metrics.observe("textai_request_duration_seconds", "Request latency", labels.byFunction, ms / 1000);
    if (s.auth && deps.config.log.enabled) recordRequest(deps.requestLog, request, s, ms);
    const level = status >= 500 ? "warn" : "info";
    if ((s.fn || status >= 400) && logsAt(logger, level)) {
      logger.log(level, "request", {
        request_id: s.requestId,
        method: request.method,
        path: s.path ?? pathOf(request.url),
        status,
        ms: Math.round(ms * 100) / 100,
        key_id: s.auth?.keyId,
        fn: s.fn,
        provider: s.provider,
        credits: s.credits,
        cached: s.cached,
        error_code: s.errorCode,
      });
    }
    endTrace(s, request, route || undefined);
  };
}

export function createApp(deps: AppDeps) {
  const pipeline = new FunctionPipeline(deps);
  const closesConnection = connectionCloser(deps);
  const app = new Elysia({
    name: "text-ai-gateway",
    // Elysia cuts the path out of `request.url` from its 12th character on, assuming an origin of at
    // least "http://a.bc" (its issue #748): behind a shorter Host (`x`, `gw`, `api`: a Docker or
    // Kubernetes service name) a route its own router serves was missed and answered 400 (brokenPath
    // below). Those are the wildcard routes (/v1/models/*) and, while a drain holds requests, every
    // route (server.ts, quiesce). Cut from the 8th, just past "http://": the gateway serves plain
    // HTTP only (TLS ends at a proxy), and nothing is added per request but those four characters.
    handler: { standardHostname: false },
  })
    .onRequest(requestStart(deps, (path) => routeMethods(path)))
    .mapResponse({ as: "global" }, ({ request, set, responseValue }) => {
      if (!closesConnection(request)) return;
      set.headers.connection = "close";
      // the client may still be sending the body: the answer lingers while the rest is dropped (http/linger.ts)
      if (responseValue instanceof Response && bodyMayFollow(request)) return closingAnswer(request, responseValue);
    })
    .onError(
      errorAnswer(
        deps,
        closesConnection,
        (path) => routeMethods(path),
        (method, path) => routeKeyFn(method, path),
      ),
    )
    .onAfterResponse(requestEnd(deps))
    .use(apiDocs(deps))
    .use(opsRoutes(deps))
    .use(functionRoutes(deps, pipeline))
    .use(accountRoutes(deps))
    .use(adminRoutes(deps))
    .use(adminMembers(deps))
    .use(adminWebhooks(deps))
    .use(auditRoutes(deps))
    .use(openAiCompatRoutes(deps))
    .use(messagesRoutes(deps))
    .use(dashboardRoutes({ ...deps, pipeline }))
    .use(knowledgeRoutes({ ...deps, pipeline }));
  // the methods each path pattern answers, for 405 + Allow when a known path gets another method
  const routeMethods = (pathname: string): string[] =>
    [...new Set(app.routes.filter((r) => routePathMatches(r.path, pathname)).map((r) => r.method.toUpperCase()))].sort();
  // the function a path's key route runs under (the method's own route first): undefined when no
  // route has the path, null when its route takes another credential (callerOfRefusal)
  const routeKeyFn = (method: string, pathname: string): string | null | undefined => {
    let found: string | null | undefined;
    for (const r of app.routes) {
      if (!routePathMatches(r.path, pathname)) continue;
      const fn = keyFnOf(r.hooks);
      if (r.method.toUpperCase() === method) return fn;
      if (found === undefined || found === null) found = fn;
    }
    return found;
  };
  return app;
}

export type App = ReturnType<typeof createApp>;
