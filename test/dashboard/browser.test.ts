import { startGateway } from "../helpers/gateway";
import { ADMIN_TOKEN, dashboardScenario } from "./browser-suite";

dashboardScenario(
  "source",
  async () => {
    const gw = await startGateway({ env: { TEXTAI_ADMIN_TOKEN: ADMIN_TOKEN } });
    return {
      url: gw.url,
      // the admin API's way: POST /admin/v1/accounts with email and password
      async createLogin(email, password, credits) {
        const res = await gw.post("/admin/v1/accounts", { email, password, credits }, { authorization: `Bearer ${ADMIN_TOKEN}` });
        if (res.status !== 201) throw new Error(`account not created: ${JSON.stringify(res.json)}`);
        return res.json.data.result.id as string;
      },
      logs: () => gw.logs.join("\n"),
      close: () => gw.close(),
    };
  },
  { screenshots: true },
);
