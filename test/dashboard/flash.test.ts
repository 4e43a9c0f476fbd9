// The flash a dashboard form's 303 carries to its page (src/dashboard/flash.ts), as a unit: sealed so
// that only the gateway opens it, only for the session it was made for, and only for a minute; the
// pages that show it are tested through a real server in post-redirect-get.test.ts.
import { describe, expect, test } from "bun:test";
import { FLASH_TTL_S, type Flash, openFlash, sealFlash } from "../../src/dashboard/flash";

describe("sealing (src/dashboard/flash.ts)", () => {
  const secret = "a gateway secret for the unit test";
  const flash: Flash = {
    to: "/dashboard/keys",
    status: 200,
    kind: "ok",
    text: "",
    once: { key: "tai_live_notARealKey", label: "x" },
  };
  const t0 = 1_800_000_000_000;

  test("opened only under the same secret and session, before it expires, unaltered; the plaintext is nowhere in it", () => {
    const sealed = sealFlash(secret, "session-a", flash, t0);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(sealed, "base64url").toString("latin1")).not.toContain("tai_live_");
    expect(openFlash(secret, "session-a", sealed, t0 + 1000)).toEqual(flash);
    expect(openFlash(secret, "session-b", sealed, t0 + 1000)).toBeNull();
    expect(openFlash(secret, "", sealed, t0 + 1000)).toBeNull();
    expect(openFlash("another secret", "session-a", sealed, t0 + 1000)).toBeNull();
    expect(openFlash(secret, "session-a", sealed, t0 + FLASH_TTL_S * 1000 + 1)).toBeNull();
    const flipped = `${sealed.slice(0, 20)}${sealed[20] === "A" ? "B" : "A"}${sealed.slice(21)}`;
    expect(openFlash(secret, "session-a", flipped, t0 + 1000)).toBeNull();
    expect(openFlash(secret, "session-a", "", t0)).toBeNull();
    expect(openFlash(secret, "session-a", "not a sealed flash at all", t0)).toBeNull();
  });

  test("too long for a cookie, it loses the form's fields, never its message or what it shows once", () => {
    const long: Flash = {
      ...flash,
      status: 400,
      kind: "error",
      text: "refused",
      form: "/dashboard/alerts",
      fields: `url=${"x".repeat(5000)}`,
    };
    const sealed = sealFlash(secret, "s", long, t0);
    expect(sealed.length).toBeLessThanOrEqual(3800);
    const { fields: _, ...kept } = long;
    expect(openFlash(secret, "s", sealed, t0)).toEqual(kept);
  });
});
