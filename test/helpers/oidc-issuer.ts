/**
 * A real OpenID Connect provider for the single sign-on tests: the `oidc-provider` package (a
 * certified implementation) with its development sign-in pages, its own RSA signing key, a client
 * for the gateway and the users the test gives (their claims changeable between sign-ins).
 *
 * It listens behind a front server of the test's (the issuer's URL), which passes every request on
 * and, on command, replaces the ID token of the next token answers with one the test made from it:
 * expired (signed with the issuer's key), with another nonce (signed with the issuer's key), or
 * signed with a key the issuer never published (under the issuer's key id). So each check of the
 * gateway's ID token verification meets a token a real provider's answer carries.
 *
 * `signIn` walks a browser's way through it without a browser: the gateway's start, the issuer's
 * sign-in and consent forms, and back to the gateway's callback URL (not followed: the test does).
 */
import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export type Tamper = "expired" | "nonce" | "foreign-key" | null;
export interface IssuerUser {
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface TestIssuer {
  url: string;
  clientId: string;
  clientSecret: string;
  users: Map<string, IssuerUser>;
  /** how the ID tokens of the next token answers are altered (null: passed as issued) */
  tamper: Tamper;
  /** token answers seen (a replayed code reaches the issuer, which refuses it) */
  tokenCalls: number;
  /** The issuer out of reach: its port closed (a connection to it is refused) until `up`. */
  down(): void;
  /** The issuer back on the same port. */
  up(): void;
  /**
   * A sign-in as `login` from the gateway's start (`startUrl`) through the issuer's forms: the
   * callback URL the issuer sends the browser to, and the gateway's sign-in cookie (name=value).
   */
  signIn(startUrl: string, login: string): Promise<{ callback: string; ssoCookie: string }>;
  close(): Promise<void>;
}

const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");

export async function startIssuer(o: { redirectUri: string; users: Record<string, IssuerUser> }): Promise<TestIssuer> {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const foreign = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: "k1", use: "sig", alg: "RS256" };
  const users = new Map(Object.entries(o.users));
  const clientId = "textai-gateway";
  const clientSecret = "a-client-secret-of-the-test-issuer-0123456789";
  let innerPort = 0;
  const state = { tamper: null as Tamper, tokenCalls: 0 };

  const serveFront = (port: number) =>
    Bun.serve({
      port,
      hostname: "127.0.0.1",
      async fetch(req) {
        const url = new URL(req.url);
        const headers = new Headers(req.headers);
        headers.set("x-forwarded-host", url.host);
        headers.set("x-forwarded-proto", "http");
        headers.set("accept-encoding", "identity");
        const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
        const res = await fetch(`http://127.0.0.1:${innerPort}${url.pathname}${url.search}`, {
          method: req.method,
          headers,
          body,
          redirect: "manual",
        });
        const out = new Headers(res.headers);
        out.delete("content-length");
        out.delete("content-encoding");
        if (url.pathname !== "/token") return new Response(res.body, { status: res.status, headers: out });
        state.tokenCalls++;
        const json = (await res.json()) as Record<string, unknown>;
        if (state.tamper && typeof json.id_token === "string") json.id_token = altered(json.id_token, state.tamper);
        return new Response(JSON.stringify(json), { status: res.status, headers: out });
      },
    });
  let front: ReturnType<typeof serveFront> | null = serveFront(0);
  const frontPort = front.port as number;
  const url = `http://127.0.0.1:${frontPort}`;

  function altered(idToken: string, how: Exclude<Tamper, null>): string {
    const payload = JSON.parse(Buffer.from(idToken.split(".")[1] as string, "base64url").toString());
    const now = Math.floor(Date.now() / 1000);
    if (how === "expired") Object.assign(payload, { iat: now - 7200, exp: now - 3600 });
    if (how === "nonce") payload.nonce = "a-nonce-this-sign-in-never-sent";
    const key: KeyObject = how === "foreign-key" ? foreign : privateKey;
    const input = `${b64({ alg: "RS256", kid: "k1" })}.${b64(payload)}`;
    return `${input}.${sign("sha256", Buffer.from(input), key).toString("base64url")}`;
  }

  const provider = new Provider(url, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [o.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    jwks: { keys: [jwk] },
    pkce: { required: () => true },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    findAccount: async (_ctx: unknown, sub: string) =>
      users.has(sub) ? { accountId: sub, claims: async () => ({ sub, ...users.get(sub) }) } : undefined,
  });
  provider.proxy = true;
  const inner = http.createServer(provider.callback());
  await new Promise<void>((done) => inner.listen(0, "127.0.0.1", done));
  innerPort = (inner.address() as AddressInfo).port;

  async function signIn(startUrl: string, login: string) {
    const start = await fetch(startUrl, { redirect: "manual" });
    const ssoCookie = (start.headers.get("set-cookie") ?? "").split(";")[0] as string;
    let next = start.headers.get("location");
    if (start.status !== 303 || !next) throw new Error(`the gateway's start answered ${start.status}: ${await start.text()}`);
    const jar = new Map<string, string>();
    const cookies = () => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const keep = (res: Response) => {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const i = (pair as string).indexOf("=");
        jar.set((pair as string).slice(0, i), (pair as string).slice(i + 1));
      }
    };
    for (let step = 0; step < 20; step++) {
      if (!next.startsWith(url)) return { callback: next, ssoCookie };
      const res: Response = await fetch(next, { redirect: "manual", headers: { cookie: cookies() } });
      keep(res);
      if (res.status === 303 || res.status === 302) {
        next = new URL(res.headers.get("location") as string, next).href;
        continue;
      }
      const page = await res.text();
      if (res.status !== 200 || !next.includes("/interaction/")) throw new Error(`the issuer answered ${res.status}: ${page}`);
      // the development sign-in form takes any login; its consent form grants what was asked
      const form: Record<string, string> = page.includes('name="login"')
        ? { prompt: "login", login, password: "any" }
        : { prompt: "consent" };
      const posted: Response = await fetch(next, {
        method: "POST",
        redirect: "manual",
        headers: { cookie: cookies(), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(form).toString(),
      });
      keep(posted);
      next = new URL(posted.headers.get("location") as string, next).href;
    }
    throw new Error("the issuer's sign-in did not end in 20 steps");
  }

  return {
    url,
    clientId,
    clientSecret,
    users,
    get tamper() {
      return state.tamper;
    },
    set tamper(t: Tamper) {
      state.tamper = t;
    },
    get tokenCalls() {
      return state.tokenCalls;
    },
    signIn,
    down() {
      front?.stop(true);
      front = null;
    },
    up() {
      front ??= serveFront(frontPort);
    },
    async close() {
      front?.stop(true);
      await new Promise<void>((done) => inner.close(() => done()));
    },
  };
}
