/**
 * The dashboard's public routes, the ones that open and close sessions: its assets, sign-in,
 * sign-up and sign-out for account holders, and the operator's sign-in (when an admin token is
 * configured). No credential is needed; each form checks its Origin and counts guesses.
 */
import { Elysia } from "elysia";
import { safeEqual } from "../../../auth/keys";
import { emailProblem, hashPassword, passwordProblem, verifyPassword } from "../../../auth/passwords";
import { guessAdminToken } from "../../../dashboard/guessing";
import { clearedCookie, hashToken, readCookie } from "../../../dashboard/security";
import { GatewayError } from "../../../errors";
import { type Ctx, checkOrigin, dashboardCtx, type RouteContext, redirect, sessionOf, storedHash } from "../../session";
import { stateOf } from "../../state";
import appCss from "./assets/app.css" with { type: "text" };
import appJs from "./assets/app.js" with { type: "text" };
import { type DashboardDeps, page, readForm, ssoOnly, ssoOnlyFlash, startSession, tooMany } from "./common";
import { backTo, refillOf, shown, takeFlash } from "./forms";
import * as pages from "./pages";

/** The sign-in page after a sign-up whose email already had an account (`?signup=taken`). */
const TAKEN =
  "This email address already has an account, and nothing about it has changed: sign in with its password. A forgotten password is reset by the gateway's operator.";

export function signInRoutes(deps: DashboardDeps) {
  const { config } = deps;
  const limiter = deps.signIns;
  const store = deps.dashboard;
  const ctxOf = (context: RouteContext): Ctx => dashboardCtx(deps, context);
  const signInForm = (refill: pages.Refill | null) =>
    pages.signInPage({ refill, signup: config.dashboard.signup, operatorEnabled: !!config.adminToken, sso: !!config.sso });

  const app = new Elysia({ name: "dashboard-sign-in" })
    .get("/dashboard/assets/app.css", (context) => new Response(appCss, { headers: assetHeaders(context, "text/css") }))
    .get("/dashboard/assets/app.js", (context) => new Response(appJs, { headers: assetHeaders(context, "text/javascript") }))
    .get("/login", (context) => redirect(ctxOf(context), "/dashboard/login"))
    .get("/dashboard/login", async (context) => {
      const c = ctxOf(context);
      const s = await sessionOf(deps, c.request);
      if (s) return redirect(c, s.kind === "operator" ? "/dashboard/operator" : "/dashboard");
      const taken = config.dashboard.signup && (context.query as Record<string, string | undefined>).signup === "taken";
      const f = await takeFlash(deps, c);
      const flash = shown(f) ?? (taken ? { kind: "ok" as const, text: TAKEN } : null);
      return page(deps, c, f?.status ?? 200, { title: "Sign in", flash }, signInForm(refillOf(f)));
    })
    .post(
      "/dashboard/login",
      async (context) => {
        const c = ctxOf(context);
        const form = await readForm(deps, c);
        const email = (form.get("email") ?? "").trim().toLowerCase().slice(0, 254);
        const password = form.get("password") ?? "";
        // refused, the page says why with the email filled in; a reload asks for the page, never
        // sends the password again (a wrong one would count again)
        const back = backTo(deps, c, "/dashboard/login", form, ["email"]);
        const v = await limiter.attempt(email, c.client);
        if (!v.allowed) {
          const t = tooMany(v, "sign-in attempts");
          return back(429, t.text, { retryAfter: t.retryAfter, focus: "password" });
        }
        const login = password.length <= 200 ? await store.loginByEmail(email) : null;
        // the same argon2id work whether or not the email exists
        const good = await verifyPassword(password.slice(0, 200), login?.passwordHash ?? null);
        if (!good || !login) return back(401, "Wrong email or password.", { focus: "password" });
        await limiter.succeeded(email, c.client);
        if (ssoOnly(deps, login.accountId)) return back(403, ssoOnlyFlash.text);
        const { cookie } = await startSession(deps, c, { accountId: login.accountId, memberId: login.memberId, kind: "account" });
        return redirect(c, "/dashboard", { "set-cookie": cookie });
      },
      { parse: "none" },
    )
    .post(
      "/dashboard/logout",
      async (context) => {
        const c = ctxOf(context);
        checkOrigin(c);
        const token = readCookie(c.request);
        if (token) {
          await store.deleteSession(hashToken(token));
          if (config.adminToken) await store.deleteSession(storedHash(deps, token, "operator"));
        }
        return redirect(c, "/dashboard/login", { "set-cookie": clearedCookie(c.secure) });
      },
      { parse: "none" },
    )
    .get("/dashboard/signup", async (context) => {
      const c = ctxOf(context);
      if (!config.dashboard.signup) throw new GatewayError("not_found", "sign-up is not open");
      const f = await takeFlash(deps, c);
      return page(deps, c, f?.status ?? 200, { title: "Create an account", flash: shown(f) }, pages.signUpPage(refillOf(f)));
    })
    .post(
      "/dashboard/signup",
      async (context) => {
        const c = ctxOf(context);
        if (!config.dashboard.signup) throw new GatewayError("not_found", "sign-up is not open");
        const form = await readForm(deps, c);
        const email = (form.get("email") ?? "").trim().toLowerCase();
        const password = form.get("password") ?? "";
        const back = backTo(deps, c, "/dashboard/signup", form, ["email"]);
        const emailWrong = emailProblem(email);
        const problem = emailWrong ?? passwordProblem(password);
        if (problem) return back(400, problem, { focus: emailWrong ? "email" : "password" });
        // every well-formed sign-up counts, whether it made an account or found the email taken
        const v = await limiter.signUp(c.client);
        if (!v.allowed) {
          const t = tooMany(v, "sign-ups from this address");
          return back(429, t.text, { retryAfter: t.retryAfter });
        }
        // Post/Redirect/Get: a new account is signed in and sent to its overview, a taken email to
        // the sign-in page; either way a reload repeats a GET, never the sign-up (docs/security.md)
        const hash = await hashPassword(password);
        if (await store.loginByEmail(email)) return redirect(c, "/dashboard/login?signup=taken");
        const acc = await signedUp(deps, c, email, hash);
        const owner = await store.loginOf(acc.id);
        const { cookie } = await startSession(deps, c, { accountId: acc.id, memberId: owner?.memberId ?? null, kind: "account" });
        return redirect(c, "/dashboard", { "set-cookie": cookie });
      },
      { parse: "none" },
    );

  return config.adminToken ? app.use(operatorSignIn(deps)) : app;
}

/** The operator's sign-in with the admin token (mounted when one is configured). */
function operatorSignIn(deps: DashboardDeps) {
  const { config, logger } = deps;
  const ctxOf = (context: RouteContext): Ctx => dashboardCtx(deps, context);
  return new Elysia({ name: "dashboard-operator-sign-in" })
    .get("/dashboard/operator/login", async (context) => {
      const c = ctxOf(context);
      const f = await takeFlash(deps, c);
      return page(
        deps,
        c,
        f?.status ?? 200,
        { title: "Operator sign-in", flash: shown(f) },
        pages.operatorSignInPage(!!config.sso, refillOf(f)),
      );
    })
    .post(
      "/dashboard/operator/login",
      async (context) => {
        const c = ctxOf(context);
        const form = await readForm(deps, c);
        const token = form.get("token") ?? "";
        const back = backTo(deps, c, "/dashboard/operator/login");
        const v = await guessAdminToken(deps.signIns, !!config.adminToken && safeEqual(token, config.adminToken), c.client);
        if (!v.allowed) {
          const t = tooMany(v, "sign-in attempts");
          return back(429, t.text, { retryAfter: t.retryAfter, focus: "token" });
        }
        if (!v.right) {
          logger.log("warn", "operator sign-in refused", { request_id: c.state.requestId, client: c.client });
          return back(401, "Wrong admin token.", { focus: "token" });
        }
        const { cookie } = await startSession(deps, c, { accountId: null, kind: "operator" });
        return redirect(c, "/dashboard/operator", { "set-cookie": cookie });
      },
      { parse: "none" },
    );
}

/** A signed-up account with its login; its audit entry's actor (null) is the new account itself: account.signup. */
function signedUp(deps: DashboardDeps, c: Ctx, email: string, passwordHash: string) {
  return deps.keys.createAccount({
    name: email,
    credits: deps.config.dashboard.signupCredits,
    login: { email, passwordHash },
    audit: { actor: null, client: c.address },
  });
}

function assetHeaders(context: object, type: string): Record<string, string> {
  return {
    "content-type": `${type}; charset=utf-8`,
    "cache-control": "public, max-age=3600",
    "x-content-type-options": "nosniff",
    ...stateOf(context).headers,
  };
}
