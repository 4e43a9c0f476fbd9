/**
 * What may hold a secret, masked before it is written or shown (docs/audit.md#what-is-recorded): a
 * URL that is itself a credential (a Slack or Discord incoming webhook carries its token in the path,
 * others in the query or the user part), and the values of fields named as secrets. One function
 * each, used by the audit trail's append, the endpoints' listings and the delivery's errors.
 */

/** What stands for a masked part. */
export const MASK = "***";

/**
 * The URL with its secret parts masked: the user and password, every path segment after the first,
 * each query value (the names stay), the fragment. Scheme, host, port and the first segment stay, so
 * a person still tells endpoints apart. Masking a masked URL changes nothing; a text that is no URL
 * is masked whole.
 */
export function maskUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return MASK;
  }
  const user = u.username || u.password ? `${MASK}@` : "";
  const [first, ...rest] = u.pathname.split("/").slice(1);
  const path = first === undefined ? "" : `/${[first, ...rest.map((s) => (s === "" ? "" : MASK))].join("/")}`;
  const names = [...new Set([...u.searchParams.keys()])];
  const query = u.search === "" ? "" : `?${names.map((n) => (n === "" ? MASK : `${encodeURIComponent(n)}=${MASK}`)).join("&")}`;
  const hash = u.hash === "" ? "" : `#${MASK}`;
  // nothing to mask: the URL as written (not as URL would write it again: "http://h:1" has no "/" added)
  if (user === "" && rest.every((seg) => seg === "") && query === "" && hash === "") return raw;
  return `${u.protocol}//${user}${u.host}${path}${query}${hash}`;
}

/** Every URL in `text` (an error message, a log line) masked. */
export const maskUrlsIn = (text: string): string => text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (m) => maskUrl(m));

/** Field names whose text value is a URL, masked with maskUrl. */
const URL_FIELD = /(^|_)url$/i;
/** Field names whose text value is a public URL, kept as written: an identity provider's issuer (published in its discovery document). */
const PUBLIC_URL_FIELD = /(^|_)issuer$/i;
/** Field names whose text value is a secret itself, masked whole. */
const SECRET_FIELD = /(^|_)(secret|token|password|api_key|key_hash|authorization|headers?|cookie)$/i;

/**
 * A value with every secret in it masked, at any depth: a text under a URL field (`url`,
 * `webhook_url`) through maskUrl, one under a secret's name (`secret`, `token`, `password`,
 * `api_key`, `authorization`, `header`, …) whole, an identity provider's `issuer` (public) as it is,
 * and any URL inside another text through maskUrlsIn. What is no text (`secret_rotated: true`) stays.
 */
export function maskSecrets<T>(v: T, field = ""): T {
  if (typeof v === "string") {
    if (SECRET_FIELD.test(field)) return MASK as T;
    if (PUBLIC_URL_FIELD.test(field)) return v;
    return (URL_FIELD.test(field) ? maskUrl(v) : maskUrlsIn(v)) as T;
  }
  if (Array.isArray(v)) return v.map((x) => maskSecrets(x, field)) as T;
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = maskSecrets(x, k);
    return out as T;
  }
  return v;
}
