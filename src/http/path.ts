import { invalidRequest } from "../errors";
import type { ErrorWire } from "./respond";

/**
 * The path of a request's URL, without query or fragment, for the origin form (`/p`, which Bun
 * hands over as `http://host/p`) and the absolute form (`http://other/p`) alike. A request line
 * without a path (CONNECT's `host:port`) has none: "". Never throws, unlike `new URL()`.
 */
export function pathOf(url: string): string {
  let start = 0;
  if (url.charCodeAt(0) !== 47 /* / */) {
    const scheme = url.indexOf("://");
    if (scheme < 0) return "";
    start = url.indexOf("/", scheme + 3);
    if (start < 0) return "/";
  }
  // on every request: no array or iterator for the two characters
  let end = url.indexOf("?", start);
  if (end < 0) end = url.length;
  const hash = url.indexOf("#", start);
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(start, end);
}

/** The answer to a path whose percent-encoding does not decode (`%zz`, a cut or invalid UTF-8 sequence). */
export const brokenPath = () => invalidRequest("the request path is not valid percent-encoding", null);

/** Whether `path`'s percent-encoding decodes; a path without `%` costs one scan. */
export function decodablePath(path: string): boolean {
  if (!path.includes("%")) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The routes of OpenAI's API on `/v1` (`/v1/ai/...` is the gateway's own function family). */
export function isOpenAiPath(path: string): boolean {
  return (path === "/v1" || path.startsWith("/v1/")) && !path.startsWith("/v1/ai/");
}

/** The Anthropic Messages API's routes (`/v1/messages`, `/v1/messages/count_tokens`): their refusals are Anthropic's. */
export function isMessagesPath(path: string): boolean {
  return path === "/v1/messages" || path.startsWith("/v1/messages/");
}

/** How a path's refusals are written (http/respond.ts `errorResponse`). */
export function errorWireOf(path: string): ErrorWire {
  if (isMessagesPath(path)) return "messages";
  return isOpenAiPath(path) ? "v1" : "envelope";
}

/**
 * The known route a path no route has was most likely meant for: with a doubled `/v1` removed
 * (`/v1/v1/messages`: an Anthropic SDK's baseURL that ended in /v1, when the SDK adds /v1 itself)
 * or with `/v1` added (`/chat/completions`: an OpenAI SDK's base URL without it); null when
 * neither is a route (`known`: whether any route has the path).
 */
export function meantRoute(path: string, known: (path: string) => boolean): string | null {
  let meant: string;
  if (path.startsWith("/v1/v1/")) meant = path.slice(3);
  else if (path === "/v1" || path.startsWith("/v1/") || path === "/" || !path.startsWith("/")) return null;
  else meant = `/v1${path}`;
  return known(meant) ? meant : null;
}

/** The 404 of a path that `meant` (meantRoute) would have reached: which it is, and the base URL to use. */
export function meantRouteMessage(path: string, meant: string): string {
  const doubled = path.startsWith("/v1/v1");
  const messages = isMessagesPath(meant);
  let advice = "";
  if (messages)
    advice = doubled
      ? " the SDK's baseURL should be the gateway's root, without /v1 (Anthropic's SDKs add /v1 themselves)"
      : " the Messages API is under /v1 (an Anthropic SDK's baseURL is the gateway's root: it adds /v1 itself)";
  else if (isOpenAiPath(meant))
    advice = doubled
      ? " the base URL has /v1 twice (an OpenAI SDK's base URL is the gateway's root with one /v1)"
      : " an OpenAI SDK's base URL is the gateway's root with /v1";
  else if (doubled) advice = " the base URL has /v1 twice";
  // (a path under a wildcard route may be long: told in part)
  const cut = (p: string) => (p.length > 200 ? `${p.slice(0, 200)}…` : p);
  return `no such route: ${cut(path)}; did you mean ${cut(meant)}?${advice}`;
}
