// A dashboard form sent as a browser sends it, and the page its answer leads to (Post/Redirect/Get,
// docs/dashboard.md): every form answers 303, and the page it names shows what happened, once, from
// the flash cookie the answer set (src/dashboard/flash.ts).
import { type RawResponse, requestFrom } from "./raw-http";

/** `cookie` (a Cookie header) as a browser keeps it after these Set-Cookie lines: one with Max-Age=0 or no value is dropped. */
export function withSetCookies(cookie: string, setCookie: string | undefined): string {
  const jar = new Map<string, string>();
  const put = (pair: string) => {
    const i = pair.indexOf("=");
    if (i > 0) jar.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
  };
  for (const pair of cookie.split(";")) put(pair);
  // joined as fetch joins them (", "); no cookie of the dashboard has an Expires date with a comma
  for (const line of (setCookie ?? "").split(/, (?=[A-Za-z_]+=)/).filter(Boolean)) {
    const [pair = "", ...attrs] = line.split(";");
    const name = pair.slice(0, pair.indexOf("=")).trim();
    if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || pair.endsWith("=")) jar.delete(name);
    else put(pair);
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
}

/** The value of one cookie in a Cookie header, or "". */
export const cookieValue = (cookie: string, name: string) =>
  cookie
    .split(";")
    .map((p) => p.trim())
    .find((p) => p.startsWith(`${name}=`))
    ?.slice(name.length + 1) ?? "";

export interface Submitted {
  /** the form's own answer: a 303 whatever happened */
  posted: RawResponse;
  location: string | null;
  /** the page the 303 leads to, asked with the cookies its answer set (null: no 303) */
  page: RawResponse | null;
  /** the Cookie header the browser sends next: the session's (the page cleared the flash) */
  cookie: string;
}

/**
 * Posts `form` to `path` from the client address `from` (same Origin, urlencoded, with `cookie`),
 * then asks for the page its 303 names with the cookies a browser would then hold.
 */
export async function submit(
  url: string,
  path: string,
  form: Record<string, string> | URLSearchParams,
  o: { cookie?: string; from?: string } = {},
): Promise<Submitted> {
  const from = o.from ?? "127.0.0.1";
  const posted = await requestFrom(url, from, "POST", path, { form, headers: o.cookie ? { cookie: o.cookie } : {} });
  if (!posted) throw new Error(`no answer to POST ${path}`);
  let cookie = withSetCookies(o.cookie ?? "", posted.headers["set-cookie"]);
  const location = posted.status === 303 ? (posted.headers.location ?? null) : null;
  if (!location) return { posted, location, page: null, cookie };
  const page = await requestFrom(url, from, "GET", location, { headers: cookie ? { cookie } : {} });
  cookie = withSetCookies(cookie, page?.headers["set-cookie"]);
  return { posted, location, page, cookie };
}

/** What a failed check prints: the form's answer and the page it led to. */
export const shown = (s: Submitted) =>
  `${s.posted.status} ${s.location ?? ""} -> ${s.page?.status ?? "-"} ${s.page?.headers["retry-after"] ?? ""} ${s.page?.body.replace(/[\s\S]*<main id="main">/, "").slice(0, 400) ?? s.posted.body.slice(0, 400)}`;
