/**
 * What a dashboard form's answer carries to the page it redirects to (Post/Redirect/Get,
 * docs/dashboard.md): a refusal's message and status, news, the form's non-secret fields, a secret
 * shown once. It travels in a short-lived cookie sealed with AES-256-GCM under a key drawn from
 * the gateway's own secret (storage/secrets.ts, so every node on one database opens it) and from
 * the session cookie it was made for (another browser, or this one signed in as someone else,
 * cannot open it). Nothing is kept on the server; the page shows it once and clears the cookie.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

export const FLASH_COOKIE = "textai_flash";
/** the name of the gateway secret the sealing key is drawn from */
export const FLASH_SECRET = "dashboard-flash";
/** the page it is for is asked at once after the redirect; a flash not shown by then is dropped */
export const FLASH_TTL_S = 60;
/** a sealed flash stays within what a browser keeps of one cookie (4096 bytes, name and attributes included) */
const MAX_SEALED = 3800;
/** a message is one of the gateway's, but may quote what was sent (or list what is known: a key policy's functions) */
const MAX_TEXT = 1500;
const IV = 12;
const TAG = 16;

export interface Flash {
  /** the page it is shown on (the redirect's Location) */
  to: string;
  /** the status that page answers with: the refusal's (400, 401, 403, 404, 409, 429), 200 for news */
  status: number;
  kind: "ok" | "error";
  /** the message above the page; empty: none (a secret shown once says enough) */
  text: string;
  /** seconds to wait before trying again: the page's Retry-After */
  retryAfter?: number;
  /** the refused form's action (a path) and its non-secret fields (a query string), to fill it in again */
  form?: string;
  fields?: string;
  /** the field to type in again: it takes the focus */
  focus?: string;
  /** shown this once: a new key and its label, a signing secret, an invitation's link */
  once?: Record<string, string>;
}

const keyOf = (secret: string, binding: string) =>
  createHmac("sha256", secret).update(`textai dashboard flash\0${binding}`).digest();

/**
 * The cookie value of `flash`, sealed under `secret` for the session cookie `binding` ("" for a
 * browser with none). A flash too long for a cookie loses its fields (the form is then empty
 * again), never its message or what it shows once.
 */
export function sealFlash(secret: string, binding: string, flash: Flash, now = Date.now()): string {
  const seal = (f: Flash) => {
    const iv = randomBytes(IV);
    const cipher = createCipheriv("aes-256-gcm", keyOf(secret, binding), iv);
    const plain = JSON.stringify({ ...f, text: f.text.slice(0, MAX_TEXT), exp: now + FLASH_TTL_S * 1000 });
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
  };
  const sealed = seal(flash);
  if (sealed.length <= MAX_SEALED) return sealed;
  const { fields: _dropped, ...rest } = flash;
  return seal(rest);
}

/** The flash a cookie value carries, if it was sealed for `binding` and has not expired; else null. */
export function openFlash(secret: string, binding: string, sealed: string, now = Date.now()): Flash | null {
  if (sealed.length > MAX_SEALED) return null;
  const raw = Buffer.from(sealed, "base64url");
  if (raw.length <= IV + TAG) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(secret, binding), raw.subarray(0, IV));
    decipher.setAuthTag(raw.subarray(raw.length - TAG));
    const plain = Buffer.concat([decipher.update(raw.subarray(IV, raw.length - TAG)), decipher.final()]).toString("utf8");
    const { exp, ...flash } = JSON.parse(plain) as Flash & { exp: number };
    return typeof exp === "number" && exp > now ? flash : null;
  } catch {
    // sealed under another key (another session, another database) or altered
    return null;
  }
}

export function flashCookie(sealed: string, secure: boolean): string {
  return `${FLASH_COOKIE}=${sealed}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=${FLASH_TTL_S}${secure ? "; Secure" : ""}`;
}

export function clearedFlashCookie(secure: boolean): string {
  return `${FLASH_COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0${secure ? "; Secure" : ""}`;
}
