import { groupToml } from "../../test/helpers/groups-toml";

/**
 * The bench's requests, defined once for every bench script.
 */

/**
 * ~`size` characters of text with PII (names, emails, phones, a card, an address, an IP): the load
 * bench's 1 KB prompt at 1024 (scenarios `compat-1k`, `guarded`, `offline`), grown the same way
 * for larger sizes.
 */
export function piiPrompt(size: number): string {
  const parts = [
    "Hello team, please contact Maria Keller at maria.keller@example.com or +1 (415) 555-0134 about the renewal.",
    "Her billing address is 221B Baker Street, London NW1 6XE, and the card on file ends 4111 1111 1111 1111.",
    "The customer portal login for the account is under the same email; the backup contact is John Smith, 020 7946 0958.",
    "Our shipping partner confirmed the parcel for order 88213 was delivered on 12 March to the reception desk.",
    "If anything is unclear, reply to this thread or write to support@northwind.example and mention ticket 55102.",
    "IP of the last login was 192.168.14.27; the session was ended by the user after the password reset.",
    "Thanks again for your patience while we sorted out the invoice discrepancy from the previous quarter.",
    "Best regards, the Northwind accounts team.",
  ];
  let t = parts.join(" ");
  while (t.length < size) t += ` ${parts[t.length % parts.length]}`;
  return t.slice(0, size);
}

/** Numbers of piiPrompt that are no PII (an order, a ticket): changed per request to make every prompt new. */
export const PII_PROMPT_NUMBERS = ["88213", "55102"];

/** The five-digit groups of a counter that starts at random (bench/load.ts LoadSpec.fresh, guard-ab.ts --fresh): `body` with each of `marks` (five-digit numbers of it) replaced, a new number per call. */
export function freshBodies(body: string, marks: string[]): () => string {
  let seq = Math.floor(Math.random() * 1e15);
  return () => {
    let out = body;
    let n = seq++;
    for (const mark of marks) {
      out = out.replaceAll(mark, String(10_000 + (n % 90_000)));
      n = Math.floor(n / 90_000);
    }
    return out;
  };
}

/** One endpoint a scenario may load: its path, the JSON body sent, and its name in the output. */
export interface Candidate {
  path: string;
  body: string;
  label: string;
}

/** The one chat request every chat target receives (bench/run.ts's baseline, compat, portkey, ...). */
export const CHAT_BODY = JSON.stringify({
  model: "sim-model",
  messages: [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: "Summarize in one sentence why latency matters for an API gateway." },
  ],
  max_tokens: 64,
});

const FN_TEXT = "The delivery was late, but the support team was friendly and fixed it quickly.";

export const chatCandidate: Candidate = { path: "/v1/chat/completions", body: CHAT_BODY, label: "POST /v1/chat/completions" };

/** issue 39: the `compat` call naming a model group (GROUP_TOML) instead of a provider's model */
export const groupChatCandidate: Candidate = {
  ...chatCandidate,
  body: JSON.stringify({ ...JSON.parse(CHAT_BODY), model: "bench-group" }),
  label: "POST /v1/chat/completions (group)",
};

/** the group `groupChatCandidate` names: three weighted deployments (1, 2, 7) on the simulator */
export const GROUP_TOML = groupToml(
  "bench-group",
  [
    { provider: "sim", model: "sim-a", weight: 1 },
    { provider: "sim", model: "sim-b", weight: 2 },
    { provider: "sim", model: "sim-c", weight: 7 },
  ],
  "weighted",
);

/** issue 38: the `compat` request in Anthropic's shape, to `/v1/messages` (translated to the OpenAI-shaped simulator) */
export const messagesCandidate: Candidate = {
  path: "/v1/messages",
  body: JSON.stringify({
    model: "sim-model",
    max_tokens: 64,
    system: "You are a helpful assistant.",
    messages: [{ role: "user", content: "Summarize in one sentence why latency matters for an API gateway." }],
  }),
  label: "POST /v1/messages (translated)",
};

/** issue 38: the `compat` call to an `anthropic` provider (ANTHROPIC_TOML), translated to the Messages API and back */
export const anthropicChatCandidate: Candidate = {
  ...chatCandidate,
  body: JSON.stringify({ ...JSON.parse(CHAT_BODY), model: "bench-claude" }),
  label: "POST /v1/chat/completions (anthropic)",
};

/**
 * The `anthropic` provider on the bench's Anthropic simulator (bench/sim.ts `--anthropic-port`),
 * reached through a one-deployment group: the bench config routes chat-completions to `sim` only.
 */
export const anthropicToml = (anthropicUrl: string) => `
[[providers]]
name = "claude"
type = "anthropic"
base_url = "${anthropicUrl}"
api_key = "sk-ant-bench"
timeout_ms = 30000
${groupToml("bench-claude", [{ provider: "claude", model: "claude-bench" }])}`;

/** The function call through the simulator: bench/run.ts takes the first that exists, ab.ts and profile.ts the first. */
export const fnCandidates: Candidate[] = [
  { path: "/api/v1/ai/sentiment-analysis", body: JSON.stringify({ text: FN_TEXT }), label: "sentiment-analysis" },
  { path: "/api/v1/ai/comment-analyze", body: JSON.stringify({ comment: FN_TEXT }), label: "comment-analyze" },
];

/** The 1 KB prompt with PII as a chat request (`compat-1k`, and `guarded` with redaction of every kind). */
export const piiChatCandidate: Candidate = {
  path: "/v1/chat/completions",
  body: JSON.stringify({ ...JSON.parse(CHAT_BODY), messages: [{ role: "user", content: piiPrompt(1024) }] }),
  label: "POST /v1/chat/completions (1 KB with PII)",
};

/** The chat request streamed (server-sent events to the end, charged on the usage chunk). */
export const streamCandidate: Candidate = {
  path: "/v1/chat/completions",
  body: JSON.stringify({ ...JSON.parse(CHAT_BODY), stream: true }),
  label: "POST /v1/chat/completions (stream)",
};

/** PII redaction of the 1 KB prompt by the offline engine (no provider). */
export const offlineCandidate: Candidate = {
  path: "/api/v1/ai/pii-redaction",
  body: JSON.stringify({ text: piiPrompt(1024) }),
  label: "pii-redaction",
};

/** A well-formed key that does not exist (answered 401). */
export const UNKNOWN_KEY = `tai_live_${"B".repeat(40)}`;

/** The single-gateway scenarios bench/run.ts, bench/ab.ts and bench/profile.ts all run. */
export const GATEWAY_SCENARIOS = [
  "compat",
  "compat-1k",
  "stream",
  "function",
  "cache",
  "offline",
  "reject401",
  "reject429",
] as const;
export type GatewayScenario = (typeof GATEWAY_SCENARIOS)[number];

export interface GatewayRequest {
  /** endpoint candidates, first that exists wins */
  candidates: Candidate[];
  /** which key to send: a plan's key, or a well-formed unknown key ("bad") */
  key: "bench" | "tight" | "bad" | "guarded";
  /** send `Cache-Control: no-cache` */
  cacheBypass?: boolean;
  expectStatus: number;
  /**
   * send one request before measuring and wait for its answer: fills the cache, spends the one
   * allowed request, or (offline) waits out the offline engine's one-time load, which a process's
   * first offline call starts and awaits (src/providers/local.ts): a cost per process, not per call
   */
  prime?: boolean;
}

/** What each of GATEWAY_SCENARIOS sends and expects back. */
export const GATEWAY_REQUESTS: Record<GatewayScenario, GatewayRequest> = {
  compat: { candidates: [chatCandidate], key: "bench", cacheBypass: true, expectStatus: 200 },
  "compat-1k": { candidates: [piiChatCandidate], key: "bench", cacheBypass: true, expectStatus: 200 },
  stream: { candidates: [streamCandidate], key: "bench", cacheBypass: true, expectStatus: 200 },
  function: { candidates: fnCandidates, key: "bench", cacheBypass: true, expectStatus: 200 },
  cache: { candidates: fnCandidates, key: "bench", expectStatus: 200, prime: true },
  offline: { candidates: [offlineCandidate], key: "bench", cacheBypass: true, expectStatus: 200, prime: true },
  reject401: { candidates: fnCandidates, key: "bad", expectStatus: 401 },
  reject429: { candidates: fnCandidates, key: "tight", expectStatus: 429, prime: true },
};

/** The headers of a scenario's request with `key` (content-type, the key, no-cache when it bypasses the cache). */
export function requestHeaders(req: GatewayRequest, key: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", "x-api-key": key };
  if (req.cacheBypass) headers["cache-control"] = "no-cache";
  return headers;
}

/** the `compat` call naming the weighted group (GROUP_TOML): issue 39's `group` */
export const GROUP_REQUEST: GatewayRequest = {
  candidates: [groupChatCandidate],
  key: "bench",
  cacheBypass: true,
  expectStatus: 200,
};

/** a group of one deployment (the simulator's model): the group path without a choice (`group-one`) */
export const GROUP_ONE_TOML = groupToml("bench-one", [{ provider: "sim", model: "sim-model" }]);

/** the `compat` call naming GROUP_ONE_TOML's group */
export const GROUP_ONE_REQUEST: GatewayRequest = {
  ...GROUP_REQUEST,
  candidates: [{ ...groupChatCandidate, body: groupChatCandidate.body.replace('"bench-group"', '"bench-one"') }],
};
