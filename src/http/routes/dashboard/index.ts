/**
 * The account dashboard and the operator console: server-rendered pages under /dashboard (plain
 * forms, with app.js adding sorting, filtering, copy, confirmations and the playground), and the
 * JSON routes under /dashboard/api that the scripts call. One plugin per reader: sign-in (public),
 * the account holder's pages, the JSON API, the operator console (with an admin token only).
 */
import { Elysia } from "elysia";
import { warmDummyHash } from "../../../auth/passwords";
import { accountPages } from "./account";
import { alertsPages } from "./alerts";
import { dashboardApi } from "./api";
import { auditPages } from "./audit";
import type { DashboardDeps } from "./common";
import { joinPages, memberPages } from "./members";
import { operatorConsole } from "./operator";
import { signInRoutes } from "./sign-in";
import { ssoRoutes } from "./sso";

export function dashboardRoutes(deps: DashboardDeps) {
  warmDummyHash();
  const app = new Elysia({ name: "dashboard" })
    .use(signInRoutes(deps))
    .use(ssoRoutes(deps))
    .use(accountPages(deps))
    .use(dashboardApi(deps))
    .use(auditPages(deps))
    .use(alertsPages(deps))
    .use(memberPages(deps))
    .use(joinPages(deps));
  return deps.config.adminToken ? app.use(operatorConsole(deps)) : app;
}
