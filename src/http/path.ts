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
