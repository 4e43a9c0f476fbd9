/**
 * Guessing from many addresses (docs/security.md): one gateway process, and strangers on 127.0.x.y
 * loopback source addresses (real client addresses, no proxy header) guessing the admin token at the
 * operator sign-in and the admin API, and an account holder's password. Neither the operator nor the
 * holder is locked out (the right password from an address that has not failed gets in; the right
 * admin token from any address), every guessing address is stopped at its own limit, and 60 wrong
 * bearer tokens from one address are answered 429 after the fifth, each slowed. No 5xx, nothing hangs; bounded to about 30 seconds.
 */
import { requestFrom } from "../../test/helpers/raw-http";
import { spawnGateway } from "../../test/helpers/spawned";
import { chaosHome, waitReady } from "../lib/chaos";

const ADMIN = `chaos-guessing-admin-${crypto.randomUUID()}`;
const EMAIL = "holder@example.com";
const PASSWORD = "the holder's long password";
const GUESSERS = 40;
const PASSWORD_GUESSERS = 12;

const address = (block: number, i: number) => `127.0.${block}.${i + 1}`;

export async function run() {
  const home = chaosHome("guessing", "", { TEXTAI_ADMIN_TOKEN: ADMIN });
  const gw = await spawnGateway(home.env);
  const deadline = Date.now() + 30_000;
  const statuses = new Map<number, number>();
  const seen = (s: number | undefined) => {
    const k = s ?? 0;
    statuses.set(k, (statuses.get(k) ?? 0) + 1);
    return k;
  };
  const admin = (from: string, token: string) =>
    requestFrom(gw.url, from, "GET", "/admin/v1/accounts?limit=1", { headers: { authorization: `Bearer ${token}` } }).then((r) =>
      seen(r?.status),
    );
  const operatorSignIn = (from: string, token: string) =>
    requestFrom(gw.url, from, "POST", "/dashboard/operator/login", { form: { token } }).then((r) => seen(r?.status));
  const signIn = (from: string, password: string) =>
    requestFrom(gw.url, from, "POST", "/dashboard/login", { form: { email: EMAIL, password } }).then((r) => seen(r?.status));
  try {
    await waitReady(gw.url);
    const made = await fetch(`${gw.url}/admin/v1/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    if (made.status !== 201) throw new Error(`account create answered ${made.status}`);

    // 1. forty addresses, each guessing the admin token six times, half at the API, half at the console
    const perGuesser = await Promise.all(
      Array.from({ length: GUESSERS }, async (_, i) => {
        const out: number[] = [];
        for (let k = 0; k < 6 && Date.now() < deadline; k++)
          out.push(await (k % 2 ? operatorSignIn : admin)(address(2, i), `wrong-token-${i}-${k}`));
        return out;
      }),
    );
    const guessesLetThrough = perGuesser.flat().filter((s) => s === 401 || s === 403).length;
    const everyGuesserStopped = perGuesser.every((s) => s.at(-1) === 429);
    // the operator, from an address that has not guessed, at both doors
    const operatorApi = await admin(address(3, 0), ADMIN);
    const operatorConsole = await operatorSignIn(address(3, 1), ADMIN);
    // a guesser (or a scraper behind its NAT) that brings the right token is let in: only wrong ones are refused
    const guesserWithToken = await admin(address(2, 0), ADMIN);

    // 2. one address, 60 wrong bearer tokens in a row (each answer waits WRONG_ADMIN_TOKEN_DELAY_MS)
    const burst: number[] = [];
    for (let k = 0; k < 60 && Date.now() < deadline; k++) burst.push(await admin(address(4, 0), `burst-${k}`));
    const burst403 = burst.filter((s) => s === 403).length;
    const burst429 = burst.filter((s) => s === 429).length;

    // 3. the holder's password guessed from twelve addresses; the holder then signs in from home
    const pw = await Promise.all(Array.from({ length: PASSWORD_GUESSERS }, (_, i) => signIn(address(5, i), `guess ${i}`)));
    const holder = await signIn(address(6, 0), PASSWORD);
    const guesserRetry = await signIn(address(5, 0), PASSWORD);

    const fives = [...statuses].filter(([s]) => s >= 500 || s === 0).reduce((n, [, c]) => n + c, 0);
    const ok =
      operatorApi === 200 &&
      operatorConsole === 303 &&
      guesserWithToken === 200 &&
      everyGuesserStopped &&
      guessesLetThrough <= GUESSERS * 5 &&
      burst403 <= 5 &&
      burst429 === burst.length - burst403 &&
      burst.length === 60 &&
      pw.every((s) => s === 401) &&
      holder === 303 &&
      guesserRetry === 429 &&
      fives === 0;
    return {
      name: "guessing",
      line: `${GUESSERS} addresses x 6 admin-token guesses: ${guessesLetThrough} answered 401/403, every address stopped (429) ${everyGuesserStopped}; operator from a fresh address: API ${operatorApi}, console ${operatorConsole}; a guesser with the right token ${guesserWithToken}; 60 wrong bearer tokens from one address: ${burst403} x 403, ${burst429} x 429; ${PASSWORD_GUESSERS} addresses at one password: holder signs in ${holder}, a guesser retrying ${guesserRetry}; 5xx or no answer ${fives}`,
      ok,
    };
  } finally {
    gw.proc.kill(9);
    await gw.exited;
    home.cleanup();
  }
}
