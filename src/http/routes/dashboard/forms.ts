/**
 * Post/Redirect/Get for every dashboard form (docs/dashboard.md): a form post answers 303, done or
 * refused, never a page of its own, so reloading the page it leads to repeats a GET and changes
 * nothing (a wrong password posted again would count again toward the guessing limit,
 * dashboard/guessing.ts). What that page shows rides along in a sealed cookie (dashboard/flash.ts):
 * the refusal's message and status, the form's non-secret fields, news, a secret shown once.
 */
import {
  clearedFlashCookie,
  FLASH_COOKIE,
  FLASH_SECRET,
  type Flash,
  flashCookie,
  openFlash,
  sealFlash,
} from "../../../dashboard/flash";
import { readCookie } from "../../../dashboard/security";
import { GatewayError } from "../../../errors";
import type { AppDeps } from "../../deps";
import type { Ctx } from "../../session";
import type { Refill } from "./pages";

type FlashDeps = Pick<AppDeps, "secrets">;
/** What the page a form leads to shows: a Flash but for the page, which is the redirect's. */
export type Outcome = Omit<Flash, "to">;

/** Fields never carried back, whichever a form keeps: a secret is typed again. */
const SECRET_FIELDS = new Set(["password", "current", "next", "token"]);
/** the longest field carried back (a webhook's URL) */
const FIELD_MAX = 2000;

const pathOf = (url: string) => new URL(url, "http://x").pathname;

/**
 * 303 to `to`, with what the page there shows (`flash`), sealed for the session cookie the
 * browser will send it with: the request's, or `session`, the token of a session this answer
 * opens (its cookie among `cookies`, the answer's other Set-Cookie lines).
 */
export async function redirectWith(
  deps: FlashDeps,
  c: Ctx,
  to: string,
  flash: Outcome | null,
  o: { session?: string; cookies?: string[] } = {},
): Promise<Response> {
  c.state.status = 303;
  const headers = new Headers({ location: to, "cache-control": "no-store", ...c.state.headers });
  for (const cookie of o.cookies ?? []) headers.append("set-cookie", cookie);
  if (flash) {
    const binding = o.session ?? readCookie(c.request) ?? "";
    const sealed = sealFlash(await deps.secrets.get(FLASH_SECRET), binding, { ...flash, to });
    headers.append("set-cookie", flashCookie(sealed, c.secure));
  }
  return new Response(null, { status: 303, headers });
}

/**
 * The flash this page was redirected with, opened once: this answer clears its cookie (and
 * carries its Retry-After). Null without one, or when it is another page's.
 */
export async function takeFlash(deps: FlashDeps, c: Ctx): Promise<Flash | null> {
  const sealed = readCookie(c.request, FLASH_COOKIE);
  if (!sealed) return null;
  const f = openFlash(await deps.secrets.get(FLASH_SECRET), readCookie(c.request) ?? "", sealed);
  if (f && pathOf(f.to) !== pathOf(c.request.url)) return null;
  c.state.headers["set-cookie"] = clearedFlashCookie(c.secure);
  if (f?.retryAfter) c.state.headers["retry-after"] = String(f.retryAfter);
  return f;
}

/** A flash's message as the layout shows it. */
export const shown = (f: Flash | null) => (f?.text ? { kind: f.kind, text: f.text } : null);

/** The refused form a flash carries, to fill it in again. */
export const refillOf = (f: Flash | null): Refill | null =>
  f?.form ? { action: f.form, fields: new URLSearchParams(f.fields ?? ""), focus: f.focus } : null;

/** A refusal sent back: its status, its message, and the field to type in again or the seconds to wait. */
export type Back = (status: number, text: string, extra?: { retryAfter?: number; focus?: string }) => Promise<Response>;

/**
 * A form's way back when it is refused: 303 to `to` with the refusal, and the form's `keep`
 * fields (never a secret: SECRET_FIELDS are dropped whatever `keep` says) to fill it in again.
 */
export function backTo(deps: FlashDeps, c: Ctx, to: string, form?: URLSearchParams, keep: readonly string[] = []): Back {
  const fields = new URLSearchParams();
  for (const name of keep.filter((n) => !SECRET_FIELDS.has(n)))
    for (const value of form?.getAll(name) ?? []) fields.append(name, value.slice(0, FIELD_MAX));
  const action = pathOf(c.request.url);
  return (status, text, extra = {}) =>
    redirectWith(deps, c, to, { status, kind: "error", text, form: action, fields: fields.toString(), ...extra });
}

/**
 * A form's change: a refusal it throws (a GatewayError of 4xx: a bad value, a key that is gone, a
 * limit) is sent `back` with its message, like the ones it answers itself. Run it after the form
 * is read: a form from another origin stays a 403 (readForm, the edge), never a redirect.
 */
export async function orBack(back: Back, act: () => Promise<Response>): Promise<Response> {
  try {
    return await act();
  } catch (e) {
    if (!(e instanceof GatewayError) || e.status < 400 || e.status > 499) throw e;
    const wait = Number(e.headers["Retry-After"]);
    // the field in error: a policy's `policy.allowed_functions` is the form's `allowed_functions`
    return back(e.status, e.message, { retryAfter: wait > 0 ? wait : undefined, focus: e.param?.split(".").at(-1) });
  }
}
