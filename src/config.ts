import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type Static, Type as T } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { parse as parseToml } from "smol-toml";
import { literalsOf } from "./schema-check";
import { closest } from "./words";

const PositiveInt = T.Integer({ minimum: 1 });
const NonNegInt = T.Integer({ minimum: 0 });
/** [limits] credit_lease_max unless set (credits/postgres.ts) */
export const DEFAULT_CREDIT_LEASE_MAX = 10_000;
/** [limits] credit_journal_ship_ms unless set (credits/journal.ts) */
export const DEFAULT_CREDIT_JOURNAL_SHIP_MS = 100;
/** [limits] credit_journal unless set, in PostgreSQL mode (docs/many-nodes.md#credit-journal) */
export const DEFAULT_CREDIT_JOURNAL = false;
/** what a node id may be (TEXTAI_NODE_ID, `node_id`): it names the node's rows and journal file */
const NODE_ID = "^[A-Za-z0-9_.-]{1,64}$";
/** The roles `[[sso.map]]` may give (a member's roles, docs/teams.md). */
export const SSO_ROLES = ["owner", "admin", "developer", "viewer"] as const;

/** How a model group picks its deployment (CONTRACT section 16, docs/routing.md). */
export const GROUP_STRATEGIES = ["ordered", "weighted", "least-busy", "latency", "headroom", "cost"] as const;
export type GroupStrategy = (typeof GROUP_STRATEGIES)[number];

const DeploymentSchema = T.Object(
  {
    provider: T.String({ minLength: 1 }),
    model: T.String({ minLength: 1 }),
    weight: T.Optional(T.Number()),
    rpm: T.Optional(PositiveInt),
    tpm: T.Optional(PositiveInt),
    max_context_tokens: T.Optional(PositiveInt),
    tags: T.Optional(T.Record(T.String({ minLength: 1 }), T.String())),
    priority: T.Optional(T.Integer()),
  },
  { additionalProperties: false },
);

const ModelGroupSchema = T.Object(
  {
    name: T.String({ minLength: 1 }),
    strategy: T.Optional(T.Union(GROUP_STRATEGIES.map((s) => T.Literal(s)))),
    fallbacks: T.Optional(T.Array(T.String({ minLength: 1 }))),
    deployments: T.Array(DeploymentSchema, { minItems: 1 }),
  },
  { additionalProperties: false },
);

const ModelRouteSchema = T.Object(
  {
    model: T.String({ minLength: 1 }),
    when_header: T.Optional(T.String({ minLength: 1, maxLength: 100 })),
    when_tags: T.Optional(T.Record(T.String({ minLength: 1 }), T.String())),
    group: T.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);

/**
 * A conditional route (`[[model_routes]]`, docs/routing.md): a request for `model` whose
 * `x-textai-route` header is `whenHeader` and whose caller carries every tag of `whenTags` (the
 * conditions given) goes to model group `group` instead. The first rule that matches wins.
 */
export interface ModelRouteConfig {
  model: string;
  whenHeader?: string;
  whenTags?: Record<string, string>;
  group: string;
}

/** One deployment of a model group: a provider, its upstream model and its limits. */
export interface DeploymentConfig {
  /** `group/provider/model`: its id in the deployment state, /metrics and logs */
  id: string;
  group: string;
  provider: string;
  model: string;
  /** `provider/model`: what answers, the request log and the pricing name it by (made once) */
  served: string;
  weight: number;
  rpm?: number;
  tpm?: number;
  maxContextTokens?: number;
  tags: Record<string, string>;
  /** lower first: a strategy orders the deployments of one priority before the next's */
  priority: number;
}

/** A public model name over deployments (`[[models]]`). */
export interface ModelGroupConfig {
  name: string;
  strategy: GroupStrategy;
  /** other groups, tried in turn after this one's deployments */
  fallbacks: string[];
  deployments: DeploymentConfig[];
}

/** What an OpenAI-style provider serves beyond plain text chat (docs/openai-compatible.md). */
export const PROVIDER_FEATURES = [
  "tools",
  "images",
  "audio",
  "files",
  "structured_output",
  "responses",
  "embeddings",
  /** fetches http(s) URLs the client sends (images, files): default only for OpenAI's and Groq's own hosts */
  "remote_urls",
] as const;
export type ProviderFeature = (typeof PROVIDER_FEATURES)[number];

const ProviderConfigSchema = T.Object(
  {
    name: T.String({ minLength: 1, pattern: "^[A-Za-z0-9_.-]+$" }),
    /** a vendor type of the registry (providers/vendors/index.ts checks it, with the base URL its type requires) */
    type: T.String({ minLength: 1 }),
    base_url: T.Optional(T.String({ minLength: 1 })),
    api_key: T.Optional(T.String()),
    api_key_env: T.Optional(T.String()),
    default_model: T.Optional(T.String({ minLength: 1 })),
    models: T.Optional(T.Record(T.String(), T.String())),
    timeout_ms: T.Optional(PositiveInt),
    /** mock only: artificial latency per call */
    latency_ms: T.Optional(NonNegInt),
    /** embeddings model, for hybrid knowledge-base search */
    embedding_model: T.Optional(T.String()),
    /** openai / groq / openai-compatible: features of its API (default by type) */
    features: T.Optional(T.Array(T.Union(PROVIDER_FEATURES.map((f) => T.Literal(f))))),
    /**
     * Further model ids it serves on /v1 besides default_model, models and embedding_model; `*`
     * matches any run of characters (default by type: ["*"] for openai and groq, none otherwise)
     */
    model_patterns: T.Optional(T.Array(T.String({ minLength: 1 }))),
    /** /v1: pass the upstream's 4xx error message to clients word for word (default: true for openai and groq) */
    pass_upstream_messages: T.Optional(T.Boolean()),
    /** azure-openai: the resource's endpoint (https://NAME.openai.azure.com), the same as its base_url */
    endpoint: T.Optional(T.String({ minLength: 1 })),
    /** azure-openai: the api-version of its deployment URLs, or "v1" for the resource's v1 API */
    api_version: T.Optional(T.String({ minLength: 1 })),
    /** azure-openai: model name to deployment name (a model not in it is its own deployment name) */
    deployments: T.Optional(T.Record(T.String(), T.String({ minLength: 1 }))),
    /** azure-openai: a Microsoft Entra ID token, sent as Authorization: Bearer instead of the api-key header */
    azure_ad_token: T.Optional(T.String({ minLength: 1 })),
    /** bedrock: the AWS region of its endpoint and of its SigV4 signature (default: AWS_REGION, else AWS_DEFAULT_REGION) */
    region: T.Optional(T.String({ minLength: 1, pattern: "^[a-z0-9-]+$" })),
    /** bedrock: the access key id it signs with (default: AWS_ACCESS_KEY_ID) */
    aws_access_key_id: T.Optional(T.String({ minLength: 1 })),
    /** bedrock: the secret access key it signs with (default: AWS_SECRET_ACCESS_KEY) */
    aws_secret_access_key: T.Optional(T.String({ minLength: 1 })),
    /** bedrock: the session token of temporary credentials (default: AWS_SESSION_TOKEN) */
    aws_session_token: T.Optional(T.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

/**
 * The most output tokens a /v1 call may ask for per choice (max_tokens, max_completion_tokens,
 * max_output_tokens), whatever the model: with n <= 128 choices and prices <= MAX_TOKEN_PRICE, every
 * hold is a safe integer (docs/pricing.md, "Bounds").
 */
export const MAX_OUTPUT_TOKENS = 1_000_000;
/** The dearest price per 1,000 tokens `[pricing]` takes. */
export const MAX_TOKEN_PRICE = 1_000_000;
/** The dearest per-call fee `[pricing]` takes, and the most tokens an image or audio part may be held at. */
export const MAX_CALL_PRICE = 1_000_000_000;
export const MAX_MEDIA_TOKENS = 10_000_000;

const MediaTokens = T.Integer({ minimum: 0, maximum: MAX_MEDIA_TOKENS });

/**
 * Credits per 1,000 tokens (fractions allowed: a call's total is rounded up to whole credits), and
 * what bounds a call's hold on the model (docs/pricing.md).
 */
const TokenPriceSchema = T.Object(
  {
    input: T.Number({ minimum: 0, maximum: MAX_TOKEN_PRICE }),
    output: T.Optional(T.Number({ minimum: 0, maximum: MAX_TOKEN_PRICE })),
    /** the most output tokens the model writes per choice: held when the request sets no cap */
    max_output_tokens: T.Optional(T.Integer({ minimum: 1, maximum: MAX_OUTPUT_TOKENS })),
    /** input tokens held per image part (default: [pricing] image_tokens) */
    image_tokens: T.Optional(MediaTokens),
    /** input tokens held per audio part sent by reference (default: [pricing] audio_tokens) */
    audio_tokens: T.Optional(MediaTokens),
    /** credits per call that enables a built-in tool or audio output, by name (web_search, audio_output...) */
    per_call: T.Optional(T.Record(T.String({ minLength: 1 }), T.Number({ minimum: 0, maximum: MAX_CALL_PRICE }))),
    /** credits per 1,000 of the input tokens the provider read from its prompt cache (default: the input price) */
    cached_input: T.Optional(T.Number({ minimum: 0, maximum: MAX_TOKEN_PRICE })),
    /** credits per 1,000 of the input tokens the provider wrote to its prompt cache (default: the input price) */
    cache_write: T.Optional(T.Number({ minimum: 0, maximum: MAX_TOKEN_PRICE })),
    /** credits per 1,000 of the output tokens that were reasoning or thinking (default: the output price) */
    reasoning: T.Optional(T.Number({ minimum: 0, maximum: MAX_TOKEN_PRICE })),
  },
  { additionalProperties: false },
);

/**
 * The PII kinds a guardrail names (docs/guardrails.md): the offline recognizer's types, with its
 * `phone_number` called `phone` (`phone_number` is taken as the same kind).
 */
export const GUARDRAIL_PII_KINDS = [
  "email",
  "phone",
  "credit_card",
  "ssn",
  "ip_address",
  "name",
  "address",
  "date_of_birth",
] as const;
export type GuardrailPiiKind = (typeof GUARDRAIL_PII_KINDS)[number];
/** The offline moderation engine's categories: local/moderation.ts scores exactly these. */
export const GUARDRAIL_MODERATION_CATEGORIES = [
  "toxicity",
  "harassment",
  "hate",
  "sexual",
  "violence",
  "self_harm",
  "spam",
  "profanity",
  "threat",
  "insult",
] as const;

/** What a plan (or a key's policy) asks of the guardrails; every field may be left out. */
export interface GuardrailSettings {
  redactPii: GuardrailPiiKind[];
  restorePii: boolean;
  blockPii: GuardrailPiiKind[];
  blockModeration: string[];
}

const GuardrailsSchema = T.Object(
  {
    redact_pii: T.Optional(T.Array(T.String())),
    restore_pii: T.Optional(T.Boolean()),
    block_pii: T.Optional(T.Array(T.String())),
    block_moderation: T.Optional(T.Array(T.String())),
  },
  { additionalProperties: false },
);

/** A guardrails table as the file (or a key's policy) writes it, checked: an unknown kind is an error, not ignored. */
export function parseGuardrails(
  where: string,
  raw: { redact_pii?: unknown; restore_pii?: unknown; block_pii?: unknown; block_moderation?: unknown },
): GuardrailSettings {
  const kinds = (field: string, v: unknown): GuardrailPiiKind[] => {
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw new ConfigError(`${where}.${field}: expected a list of PII kinds`);
    const out = new Set<GuardrailPiiKind>();
    for (const k of v) {
      const kind = k === "phone_number" ? "phone" : k;
      if (!(GUARDRAIL_PII_KINDS as readonly unknown[]).includes(kind))
        throw new ConfigError(`${where}.${field}: unknown PII kind "${String(k)}" (one of ${GUARDRAIL_PII_KINDS.join(", ")})`);
      out.add(kind as GuardrailPiiKind);
    }
    return [...out];
  };
  const categories = (v: unknown): string[] => {
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw new ConfigError(`${where}.block_moderation: expected a list of moderation categories`);
    for (const c of v)
      if (!(GUARDRAIL_MODERATION_CATEGORIES as readonly unknown[]).includes(c))
        throw new ConfigError(
          `${where}.block_moderation: unknown category "${String(c)}" (one of ${GUARDRAIL_MODERATION_CATEGORIES.join(", ")})`,
        );
    return [...new Set(v as string[])];
  };
  if (raw.restore_pii !== undefined && typeof raw.restore_pii !== "boolean")
    throw new ConfigError(`${where}.restore_pii: expected true or false`);
  return {
    redactPii: kinds("redact_pii", raw.redact_pii),
    restorePii: raw.restore_pii === true,
    blockPii: kinds("block_pii", raw.block_pii),
    blockModeration: categories(raw.block_moderation),
  };
}

/**
 * A node's id unless configured: its host name and a digest of its SQLite file's absolute path, the
 * same at every start of the same node (one TEXTAI_DB per node: a server claims its file).
 */
function defaultNodeId(dbPath: string): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9_.-]/g, "_")
      .slice(0, 40) || "node";
  const digest = new Bun.CryptoHasher("sha256").update(resolve(dbPath)).digest("hex").slice(0, 10);
  return `${host}-${digest}`;
}

/** PostgreSQL connections per node unless configured: a node's credits need one at a time (docs/capacity.md) */
export const DEFAULT_DATABASE_POOL = 4;

const FileConfigSchema = T.Object(
  {
    welcome_credits: T.Optional(NonNegInt),
    /** "host:port" of a second listener serving only /metrics, without the admin token */
    metrics_listen: T.Optional(T.String({ minLength: 1 })),
    /** connections this node opens to PostgreSQL (TEXTAI_DATABASE_URL) at most */
    database_pool: T.Optional(T.Integer({ minimum: 1, maximum: 1000 })),
    /** false: no named prepared statements, for a pooler in transaction mode (PgBouncer before 1.21) */
    database_prepare: T.Optional(T.Boolean()),
    /** this node's name among many (its credit journal and lease rows); stable across its restarts */
    node_id: T.Optional(T.String({ pattern: NODE_ID })),
    providers: T.Optional(T.Array(ProviderConfigSchema)),
    routes: T.Optional(T.Record(T.String(), T.Array(T.String()))),
    /** model groups: a public model name over deployments (CONTRACT section 16, docs/routing.md) */
    models: T.Optional(T.Array(ModelGroupSchema)),
    /** conditional routing: a request header or the caller's tags pick a model group (docs/routing.md) */
    model_routes: T.Optional(T.Array(ModelRouteSchema)),
    costs: T.Optional(T.Record(T.String(), NonNegInt)),
    plans: T.Optional(
      T.Record(
        T.String(),
        T.Object(
          {
            rate_limits: T.Optional(T.Record(T.String(), PositiveInt)),
            max_keys: T.Optional(PositiveInt),
            /** knowledge storage of one account, over all its bases (docs/quotas.md) */
            knowledge_bytes: T.Optional(PositiveInt),
            knowledge_documents: T.Optional(PositiveInt),
            knowledge_bases: T.Optional(PositiveInt),
            knowledge_faq_collections: T.Optional(PositiveInt),
            knowledge_chatbots: T.Optional(PositiveInt),
            /** CONTRACT section 14, docs/guardrails.md */
            guardrails: T.Optional(GuardrailsSchema),
            /** the ceiling every key, the playground and every internal call of the plan's accounts run under (docs/key-policies.md) */
            policy: T.Optional(
              T.Object(
                {
                  allowed_functions: T.Optional(T.Array(T.String({ minLength: 1 }), { minItems: 1, maxItems: 200 })),
                  allowed_models: T.Optional(T.Array(T.String({ minLength: 1 }), { minItems: 1, maxItems: 200 })),
                  rate_limit_per_minute: T.Optional(PositiveInt),
                  monthly_credit_limit: T.Optional(NonNegInt),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    cache: T.Optional(
      T.Object(
        {
          enabled: T.Optional(T.Boolean()),
          ttl_seconds: T.Optional(PositiveInt),
          max_entries: T.Optional(PositiveInt),
          max_bytes: T.Optional(PositiveInt),
        },
        { additionalProperties: false },
      ),
    ),
    limits: T.Optional(
      T.Object(
        {
          max_body_bytes: T.Optional(PositiveInt),
          max_text_chars: T.Optional(PositiveInt),
          max_json_depth: T.Optional(PositiveInt),
          request_timeout_ms: T.Optional(PositiveInt),
          offline_cpu_ms: T.Optional(PositiveInt),
          body_timeout_ms: T.Optional(PositiveInt),
          credit_lease_max: T.Optional(NonNegInt),
          credit_journal: T.Optional(T.Boolean()),
          credit_journal_ship_ms: T.Optional(T.Integer({ minimum: 1, maximum: 60_000 })),
          credit_journal_path: T.Optional(T.String({ minLength: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    hedge_after_ms: T.Optional(T.Record(T.String(), PositiveInt)),
    breaker: T.Optional(
      T.Object(
        {
          failure_threshold: T.Optional(PositiveInt),
          cooldown_ms: T.Optional(PositiveInt),
          long_output_tokens: T.Optional(PositiveInt),
        },
        { additionalProperties: false },
      ),
    ),
    dashboard: T.Optional(
      T.Object(
        {
          signup: T.Optional(T.Boolean()),
          signup_credits: T.Optional(NonNegInt),
          ipv6_prefix: T.Optional(T.Integer({ minimum: 1, maximum: 128 })),
          trusted_proxies: T.Optional(T.Array(T.String({ minLength: 1 }))),
          invitation_hours: T.Optional(T.Integer({ minimum: 1, maximum: 24 * 365 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** alerts by signed webhook (docs/alerts.md#settings) */
    alerts: T.Optional(
      T.Object(
        {
          poll_ms: T.Optional(T.Integer({ minimum: 10, maximum: 60_000 })),
          scan_ms: T.Optional(T.Integer({ minimum: 10, maximum: 3_600_000 })),
          retry_base_ms: T.Optional(T.Integer({ minimum: 10, maximum: 3_600_000 })),
          retry_hours: T.Optional(T.Number({ exclusiveMinimum: 0, maximum: 168 })),
          timeout_ms: T.Optional(T.Integer({ minimum: 100, maximum: 60_000 })),
          rotation_grace_hours: T.Optional(T.Number({ minimum: 0, maximum: 720 })),
          allow_private_urls: T.Optional(T.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    /** single sign-on with OpenID Connect (docs/sso.md) */
    sso: T.Optional(
      T.Object(
        {
          issuer: T.String({ minLength: 1 }),
          client_id: T.String({ minLength: 1 }),
          client_secret: T.Optional(T.String({ minLength: 1 })),
          redirect_uri: T.String({ minLength: 1 }),
          scopes: T.Optional(T.Array(T.String({ minLength: 1, maxLength: 200, pattern: "^\\S+$" }), { maxItems: 32 })),
          groups_claim: T.Optional(T.String({ minLength: 1, maxLength: 200 })),
          operator_groups: T.Optional(T.Array(T.String({ minLength: 1 }), { maxItems: 1000 })),
          sso_required: T.Optional(T.Array(T.String({ minLength: 1 }), { maxItems: 100_000 })),
          trust_missing_email_verified: T.Optional(T.Boolean()),
          map: T.Optional(
            T.Array(
              T.Object(
                {
                  group: T.Optional(T.String({ minLength: 1 })),
                  email_domain: T.Optional(T.String({ minLength: 1, maxLength: 253 })),
                  account: T.String({ minLength: 1 }),
                  role: T.Union(SSO_ROLES.map((r) => T.Literal(r))),
                },
                { additionalProperties: false },
              ),
              { maxItems: 10_000 },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    /** browsers on other origins calling /api and /v1 (docs/configuration.md#cors) */
    cors: T.Optional(
      T.Object(
        {
          allowed_origins: T.Optional(T.Array(T.String({ minLength: 1, maxLength: 300 }), { maxItems: 1000 })),
          max_age_seconds: T.Optional(T.Integer({ minimum: 0, maximum: 86_400 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** the request log (CONTRACT section 13) */
    log: T.Optional(
      T.Object({ enabled: T.Optional(T.Boolean()), retention_days: T.Optional(PositiveInt) }, { additionalProperties: false }),
    ),
    shutdown: T.Optional(
      T.Object(
        { drain_grace_ms: T.Optional(NonNegInt), drain_deadline_ms: T.Optional(PositiveInt) },
        { additionalProperties: false },
      ),
    ),
    pricing: T.Optional(
      T.Object(
        {
          /** credits per 1,000 tokens of models that no entry of `models` matches */
          default: T.Optional(TokenPriceSchema),
          /** model name or glob (`*` any run of characters), bare or as provider/model, to its price */
          models: T.Optional(T.Record(T.String({ minLength: 1 }), TokenPriceSchema)),
          /** refuse /v1 calls to models no entry of `models` matches, instead of charging `default` */
          refuse_unpriced: T.Optional(T.Boolean()),
          /** output tokens held per choice when a request sets no max_tokens / max_completion_tokens / max_output_tokens */
          default_max_output_tokens: T.Optional(T.Integer({ minimum: 1, maximum: MAX_OUTPUT_TOKENS })),
          /** input tokens held per image part, for models whose entry does not say */
          image_tokens: T.Optional(MediaTokens),
          /** input tokens held per audio part sent by reference, for models whose entry does not say */
          audio_tokens: T.Optional(MediaTokens),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type ProviderConfig = Static<typeof ProviderConfigSchema>;
export type FileConfig = Static<typeof FileConfigSchema>;

export interface Config {
  /**
   * The environment variables a provider adapter reads credentials from when its entry names none
   * (a `bedrock` entry: the AWS SDKs' AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
   * AWS_REGION, AWS_DEFAULT_REGION); they enable no provider by themselves
   */
  providerEnv?: Record<string, string>;
  port: number;
  host: string;
  dbPath: string;
  /** the config file TEXTAI_CONFIG names, as an absolute path (null: none) */
  configFile?: string | null;
  /**
   * TEXTAI_NODE_ID or `node_id`: this node's name among many, stable across its restarts (its
   * credit journal's file and its lease rows); unless set, the host name and a digest of TEXTAI_DB's path
   */
  nodeId: string;
  /** TEXTAI_DATABASE_URL: accounts, keys and the credit ledger in PostgreSQL (many nodes); null: SQLite at dbPath */
  databaseUrl: string | null;
  /** TEXTAI_REDIS_URL: limits, answer cache, idempotency records and revocations shared through Redis; null: per process */
  redisUrl: string | null;
  /** TEXTAI_REDIS_CLUSTER=true: redisUrl names seed nodes of a Redis Cluster (comma-separated) */
  redisCluster: boolean;
  /** TEXTAI_REDIS_PREFIX: the first part of every Redis key and channel name (default `textai`) */
  redisPrefix: string;
  /** how long a write waits for a lock held by another process before answering 503 */
  dbBusyTimeoutMs: number;
  /**
   * TEXTAI_DATABASE_POOL or `database_pool`: connections this node opens to PostgreSQL at most
   * (credits go in one batch at a time, so few are needed; docs/capacity.md)
   */
  databasePool: number;
  /**
   * TEXTAI_DATABASE_PREPARE or `database_prepare`: false sends every query unnamed (no named
   * prepared statements), as a pooler in transaction mode needs (PgBouncer before 1.21:
   * docs/many-nodes.md#behind-pgbouncer); true (the default) lets the client prepare and reuse them
   */
  databasePrepare: boolean;
  adminToken: string | null;
  /**
   * TEXTAI_METRICS_LISTEN or `metrics_listen`: a second listener serving only GET /metrics to
   * whoever reaches it (keep it on a private address); null: /metrics only on the main listener,
   * for the admin token
   */
  metricsListen: { host: string; port: number } | null;
  welcomeCredits: number;
  logLevel: "debug" | "info" | "warn" | "error";
  providers: ProviderConfig[];
  routes: Record<string, string[]>;
  /** `[[models]]`: model groups, validated (docs/routing.md); empty when none */
  models: ModelGroupConfig[];
  /** `[[model_routes]]`: conditional routes to model groups, in config order (docs/routing.md); empty when none */
  modelRoutes: ModelRouteConfig[];
  costs: Record<string, number>;
  plans: Record<string, Record<string, number>>;
  /** active keys an account of each plan may hold (plans.NAME.max_keys); maxKeysFor() applies the default */
  maxKeys: Record<string, number>;
  /** knowledge storage per plan as the file sets it (plans.NAME.knowledge_*); knowledgeQuotaFor() applies the defaults */
  knowledgeQuotas: Record<string, Partial<KnowledgeQuota>>;
  /** plans.NAME.guardrails, checked (docs/guardrails.md); a plan without the table has none */
  guardrails: Record<string, GuardrailSettings>;
  /** plans.NAME.policy: the operator's ceiling for the plan's accounts; a key's own policy only narrows it */
  planPolicies: Record<string, PlanPolicy>;
  cache: { enabled: boolean; ttlSeconds: number; maxEntries: number; maxBytes: number };
  limits: {
    maxBodyBytes: number;
    maxTextChars: number;
    maxJsonDepth: number;
    requestTimeoutMs: number;
    /** CPU milliseconds one call may spend in the offline engine */
    offlineCpuMs: number;
    /** a request body must arrive whole within this (slowloris, never-ending bodies) */
    bodyTimeoutMs: number;
    /** PostgreSQL: the most credits a node's lease of a hot account takes (0: no leases; docs/many-nodes.md) */
    creditLeaseMax: number;
    /**
     * PostgreSQL: charges of calls admitted against a lease committed to a node-local SQLite
     * journal and shipped in batches (docs/many-nodes.md#credit-journal)
     */
    creditJournal: boolean;
    /** how often the journal ships to PostgreSQL (sooner when many charges are pending) */
    creditJournalShipMs: number;
    /** the journal's file: `<dir of TEXTAI_DB>/credit-journal-<node id>.sqlite` unless set */
    creditJournalPath: string;
  };
  hedgeAfterMs: Record<string, number>;
  /** longOutputTokens: a request asking for more output than this owns its timeouts (docs/fairness.md) */
  breaker: { failureThreshold: number; cooldownMs: number; longOutputTokens: number };
  /**
   * SIGTERM: /ready answers 503 and the listener stays open for `drainGraceMs`, or until nothing
   * is in flight (answers carry Connection: close); then it closes, and calls in flight have until
   * `drainDeadlineMs` after the signal before what is left is cut off (server.ts).
   */
  shutdown: { drainGraceMs: number; drainDeadlineMs: number };
  /**
   * signup: open sign-up on /dashboard/signup, each new account receiving `signupCredits` (default
   * 0, so open sign-up is no credit faucet; not the welcome credits). ipv6PrefixBits: an IPv6 client
   * is counted (guesses, sign-ups) as its network of this many bits (default 64). trustedProxies: peer
   * addresses whose X-Forwarded-Proto and X-Forwarded-For are believed (TEXTAI_TRUSTED_PROXIES,
   * comma-separated, or `[dashboard] trusted_proxies`). invitationHours: how long a member's
   * invitation link is valid (default 72; docs/teams.md).
   */
  dashboard: {
    signup: boolean;
    signupCredits: number;
    ipv6PrefixBits: number;
    trustedProxies: string[];
    invitationHours: number;
  };
  /** /v1 prices per model (docs/pricing.md) */
  pricing: PricingConfig;
  /** the request log: on unless `[log] enabled = false`; entries are kept `[log] retention_days` (default 30) */
  log: { enabled: boolean; retentionDays: number };
  /**
   * `[cors]`: the origins whose browser pages may call /api and /v1 (`*`: any), and how long a
   * browser keeps a preflight's answer. Empty (the default): no CORS headers, as before.
   */
  cors: { anyOrigin: boolean; origins: ReadonlySet<string>; maxAgeSeconds: number };
  /** `[alerts]`: delivery timing and the URL rule of webhook endpoints (docs/alerts.md#settings) */
  alerts: {
    pollMs: number;
    scanMs: number;
    retryBaseMs: number;
    retryWindowMs: number;
    timeoutMs: number;
    rotationGraceMs: number;
    allowPrivateUrls: boolean;
  };
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces exported over OTLP/HTTP (docs/tracing.md); null: no tracing, nothing loaded */
  tracing: TracingConfig | null;
  /** `[sso]`: single sign-on with OpenID Connect (docs/sso.md); null: passwords only */
  sso: SsoConfig | null;
}

/** `[sso]` validated (docs/sso.md). */
export interface SsoConfig {
  /** the issuer URL exactly as its ID tokens name it; discovery at {issuer}/.well-known/openid-configuration */
  issuer: string;
  clientId: string;
  /** `client_secret` or TEXTAI_SSO_CLIENT_SECRET */
  clientSecret: string;
  /** where the issuer sends the browser back: this gateway's /dashboard/sso/callback */
  redirectUri: string;
  scopes: string[];
  groupsClaim: string;
  operatorGroups: string[];
  /** accounts whose members sign in only through the issuer (their passwords are refused) */
  ssoRequired: Set<string>;
  /**
   * `trust_missing_email_verified`: an ID token without an `email_verified` claim (Microsoft Entra ID
   * sends none) is taken as verified; by default it is refused as unverified. `false` is refused always.
   */
  trustMissingEmailVerified: boolean;
  /** first match wins */
  map: { group?: string; emailDomain?: string; account: string; role: (typeof SSO_ROLES)[number] }[];
  /** plain http to the issuer: only on a loopback address (a test or a local issuer) */
  insecureHttp: boolean;
}

export interface TracingConfig {
  /** the endpoint with /v1/traces appended, as the OpenTelemetry specification says */
  tracesUrl: string;
  /** OTEL_SERVICE_NAME, default "textai-gateway" */
  serviceName: string;
  /** OTEL_BSP_SCHEDULE_DELAY: ms between two exports of the batch processor, default 5000 */
  scheduleDelayMs: number;
}

/** Credits per 1,000 input and output tokens, and the model's bounds and per-call fees (docs/pricing.md). */
export interface TokenPrice {
  input: number;
  output: number;
  /** the most output tokens per choice the model writes (held when the request sets no cap) */
  maxOutputTokens?: number;
  /** input tokens held per image part */
  imageTokens?: number;
  /** input tokens held per audio part sent by reference */
  audioTokens?: number;
  /** credits per call that enables a built-in tool or audio output, by name */
  perCall?: Record<string, number>;
  /** credits per 1,000 tokens of a kind priced apart (providers/usage.ts USAGE_KINDS: cached_input, cache_write, reasoning); absent: as input or output */
  kinds?: Record<string, number>;
}

export interface PricingConfig {
  default: TokenPrice;
  /** in config order: the first pattern that matches wins */
  models: { pattern: string; price: TokenPrice }[];
  refuseUnpriced: boolean;
  defaultMaxOutputTokens: number;
  /** input tokens held per image part / audio part by reference, for models whose entry does not say */
  imageTokens: number;
  audioTokens: number;
}

/** The shortest admin token accepted: it is a bearer secret, guessed from any address. */
export const MIN_ADMIN_TOKEN = 32;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

function serverUrl(env: Env, name: "TEXTAI_DATABASE_URL" | "TEXTAI_REDIS_URL", schemes: string[]): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a URL`);
  }
  if (!schemes.includes(url.protocol))
    throw new ConfigError(`${name} must start with ${schemes.map((s) => `${s}//`).join(" or ")}`);
  return raw;
}

/**
 * A server URL as logs may show it: scheme, user, host, port and path, never a password (in the
 * URL or in its query, such as `?password=`); a comma-separated list (Redis Cluster seeds) each so.
 */
export function urlForLog(raw: string): string {
  return raw
    .split(",")
    .map((one) => {
      try {
        const u = new URL(one.trim());
        u.password = "";
        u.search = "";
        u.hash = "";
        return u.toString();
      } catch {
        return "(not a URL)";
      }
    })
    .join(",");
}

/** `[breaker]` with its defaults. */
function breakerSettings(file: FileConfig): Config["breaker"] {
  return {
    failureThreshold: file.breaker?.failure_threshold ?? 5,
    cooldownMs: file.breaker?.cooldown_ms ?? 30_000,
    longOutputTokens: file.breaker?.long_output_tokens ?? 4096,
  };
}

/**
 * `[cors]` with its defaults: each origin as a browser sends it (`https://app.example.com`,
 * `http://localhost:5173`: a scheme, a host, a port when not the scheme's own, no path and no
 * trailing slash), or `*` alone for any origin.
 */
function corsSettings(file: FileConfig): Config["cors"] {
  const listed = file.cors?.allowed_origins ?? [];
  const origins = new Set<string>();
  for (const o of listed) {
    if (o === "*") continue;
    let url: URL | null = null;
    try {
      url = new URL(o);
    } catch {}
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.origin !== o)
      throw new ConfigError(
        `cors.allowed_origins: "${o}" is not an origin as a browser sends it (a scheme and a host, a port if not the scheme's own, no path or trailing slash: "https://app.example.com"), or "*"`,
      );
    origins.add(o);
  }
  const anyOrigin = listed.includes("*");
  if (anyOrigin && origins.size > 0) throw new ConfigError('cors.allowed_origins: "*" allows every origin; list it alone');
  return { anyOrigin, origins, maxAgeSeconds: file.cors?.max_age_seconds ?? 600 };
}

/** `[alerts]` with its defaults (docs/alerts.md#settings). */
function alertSettings(file: FileConfig): Config["alerts"] {
  const a = file.alerts;
  return {
    pollMs: a?.poll_ms ?? 1000,
    scanMs: a?.scan_ms ?? 60_000,
    retryBaseMs: a?.retry_base_ms ?? 2000,
    retryWindowMs: (a?.retry_hours ?? 24) * 3600_000,
    timeoutMs: a?.timeout_ms ?? 10_000,
    rotationGraceMs: (a?.rotation_grace_hours ?? 24) * 3600_000,
    allowPrivateUrls: a?.allow_private_urls ?? false,
  };
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** An absolute http(s) URL of `[sso]`: https, or http on a loopback address only. */
function ssoUrl(raw: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`sso.${field} is not a URL`);
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.has(url.hostname)))
    throw new ConfigError(`sso.${field} must be an https:// URL (http:// only on a loopback address)`);
  return url;
}

/** `[sso]` and TEXTAI_SSO_CLIENT_SECRET, checked (docs/sso.md); null without `[sso]`. */
function ssoSettings(env: Env, file: FileConfig): SsoConfig | null {
  const s = file.sso;
  if (!s) return null;
  const issuer = ssoUrl(s.issuer, "issuer");
  const redirect = ssoUrl(s.redirect_uri, "redirect_uri");
  if (!redirect.pathname.endsWith("/dashboard/sso/callback"))
    throw new ConfigError("sso.redirect_uri must be this gateway's /dashboard/sso/callback (as registered with the issuer)");
  const clientSecret = env.TEXTAI_SSO_CLIENT_SECRET ?? s.client_secret;
  if (!clientSecret)
    throw new ConfigError(
      "[sso] needs the client's secret: sso.client_secret, or TEXTAI_SSO_CLIENT_SECRET (kept out of the file)",
    );
  const scopes = s.scopes ?? ["openid", "email", "profile"];
  if (!scopes.includes("openid")) throw new ConfigError('sso.scopes must include "openid"');
  const map = (s.map ?? []).map((m, i) => {
    if ((m.group === undefined) === (m.email_domain === undefined))
      throw new ConfigError(`sso.map[${i}]: give exactly one of group and email_domain`);
    const emailDomain = m.email_domain?.toLowerCase().replace(/^@/, "");
    return { group: m.group, emailDomain, account: m.account, role: m.role };
  });
  return {
    issuer: s.issuer,
    clientId: s.client_id,
    clientSecret,
    redirectUri: redirect.href,
    scopes,
    groupsClaim: s.groups_claim ?? "groups",
    operatorGroups: s.operator_groups ?? [],
    ssoRequired: new Set(s.sso_required ?? []),
    trustMissingEmailVerified: s.trust_missing_email_verified ?? false,
    map,
    insecureHttp: issuer.protocol === "http:",
  };
}

/** Where this node keeps its data, for the start-up log: the PostgreSQL URL (no password) or the SQLite file. */
export const storeForLog = (config: Pick<Config, "databaseUrl" | "dbPath">): string =>
  config.databaseUrl ? urlForLog(config.databaseUrl) : config.dbPath;

/**
 * TEXTAI_REDIS_URL: one URL, or with TEXTAI_REDIS_CLUSTER=true one or more seed nodes of a Redis
 * Cluster, comma-separated (a cluster has only database 0).
 */
function redisUrl(env: Env): string | null {
  if (env.TEXTAI_REDIS_CLUSTER !== "true") {
    if (env.TEXTAI_REDIS_URL?.includes(","))
      throw new ConfigError("TEXTAI_REDIS_URL lists several nodes: set TEXTAI_REDIS_CLUSTER=true for a Redis Cluster");
    return serverUrl(env, "TEXTAI_REDIS_URL", ["redis:", "rediss:"]);
  }
  const raw = env.TEXTAI_REDIS_URL?.trim();
  if (!raw) throw new ConfigError("TEXTAI_REDIS_CLUSTER=true needs TEXTAI_REDIS_URL: one or more seed nodes, comma-separated");
  for (const seed of raw.split(",")) {
    serverUrl({ TEXTAI_REDIS_URL: seed }, "TEXTAI_REDIS_URL", ["redis:", "rediss:"]);
    const db = new URL(seed.trim()).pathname.replace(/^\//, "");
    if (db !== "" && db !== "0") throw new ConfigError("TEXTAI_REDIS_URL: a Redis Cluster has only database 0");
  }
  return raw;
}

/**
 * The environment variables the gateway reads, in the same kind of closed schema as the file:
 * numbers are converted from their text and checked here, and a bad value names its variable.
 * An empty value counts as unset. (A provider's `api_key_env` names a variable of its own.)
 */
const EnvInt = (minimum: number, maximum?: number) => T.Optional(T.Integer({ minimum, maximum }));
const EnvText = T.Optional(T.String());
const EnvSchema = T.Object({
  PORT: EnvInt(0, 65535),
  HOST: EnvText,
  TEXTAI_CONFIG: EnvText,
  TEXTAI_DB: EnvText,
  TEXTAI_DATABASE_URL: EnvText,
  TEXTAI_REDIS_URL: EnvText,
  TEXTAI_REDIS_CLUSTER: T.Optional(T.Union([T.Literal("true"), T.Literal("false")])),
  TEXTAI_REDIS_PREFIX: T.Optional(T.String({ pattern: "^[A-Za-z0-9_.-]{1,64}$" })),
  TEXTAI_DATABASE_POOL: EnvInt(1, 1000),
  TEXTAI_DATABASE_PREPARE: T.Optional(T.Union([T.Literal("true"), T.Literal("false")])),
  TEXTAI_NODE_ID: T.Optional(T.String({ pattern: NODE_ID })),
  TEXTAI_CREDIT_JOURNAL: T.Optional(T.Union([T.Literal("true"), T.Literal("false")])),
  TEXTAI_CREDIT_JOURNAL_SHIP_MS: EnvInt(1, 60_000),
  TEXTAI_CREDIT_JOURNAL_PATH: EnvText,
  TEXTAI_DB_BUSY_TIMEOUT_MS: EnvInt(0),
  TEXTAI_ADMIN_TOKEN: EnvText,
  TEXTAI_METRICS_LISTEN: EnvText,
  TEXTAI_WELCOME_CREDITS: EnvInt(0),
  TEXTAI_LOG_LEVEL: T.Optional(T.Union(LOG_LEVELS.map((l) => T.Literal(l)))),
  TEXTAI_DRAIN_GRACE_MS: EnvInt(0),
  TEXTAI_DRAIN_DEADLINE_MS: EnvInt(1),
  TEXTAI_TRUSTED_PROXIES: EnvText,
  TEXTAI_SSO_CLIENT_SECRET: EnvText,
  OPENAI_API_KEY: EnvText,
  OPENAI_BASE_URL: EnvText,
  GROQ_API_KEY: EnvText,
  GROQ_BASE_URL: EnvText,
  ANTHROPIC_API_KEY: EnvText,
  ANTHROPIC_BASE_URL: EnvText,
  GEMINI_API_KEY: EnvText,
  GEMINI_BASE_URL: EnvText,
  MISTRAL_API_KEY: EnvText,
  MISTRAL_BASE_URL: EnvText,
  AZURE_OPENAI_API_KEY: EnvText,
  AZURE_OPENAI_ENDPOINT: EnvText,
  AWS_ACCESS_KEY_ID: EnvText,
  AWS_SECRET_ACCESS_KEY: EnvText,
  AWS_SESSION_TOKEN: EnvText,
  AWS_REGION: EnvText,
  AWS_DEFAULT_REGION: EnvText,
  OTEL_EXPORTER_OTLP_ENDPOINT: EnvText,
  OTEL_SERVICE_NAME: EnvText,
  OTEL_BSP_SCHEDULE_DELAY: EnvInt(0),
});
type Env = Static<typeof EnvSchema>;

function parseEnv(raw: Record<string, string | undefined>): Env {
  const picked: Record<string, string> = {};
  const env: Record<string, string | number> = {};
  for (const [name, schema] of Object.entries(EnvSchema.properties)) {
    const v = raw[name];
    if (v === undefined || v === "") continue;
    picked[name] = v;
    // whole numbers only: "1.5", "1e3" or "0x10" stay text and fail the check below
    env[name] = schema.type === "integer" && /^-?\d{1,15}$/.test(v.trim()) ? Number(v.trim()) : v;
  }
  const first = Value.Errors(EnvSchema, env).First();
  if (first) {
    const name = first.path.replace(/^\//, "");
    const literals = literalsOf(first.schema);
    const allowed = literals ? `one of ${literals.join(", ")}` : first.message.replace(/^Expected/, "expected");
    throw new ConfigError(`${name}: ${allowed}, got "${picked[name]}"`);
  }
  return env as Env;
}

function tracingSettings(env: Env): TracingConfig | null {
  const raw = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT is not a URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError("OTEL_EXPORTER_OTLP_ENDPOINT must start with http:// or https:// (OTLP over HTTP)");
  return {
    tracesUrl: `${raw.replace(/\/+$/, "")}/v1/traces`,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || "textai-gateway",
    scheduleDelayMs: env.OTEL_BSP_SCHEDULE_DELAY ?? 5000,
  };
}

/** [limits]: bodies, time, the offline engine's CPU, credit leases and the node's credit journal (beside the database by default). */
function limitSettings(env: Env, file: FileConfig, dbPath: string, nodeId: string): Config["limits"] {
  return {
    maxBodyBytes: file.limits?.max_body_bytes ?? 1_048_576,
    maxTextChars: file.limits?.max_text_chars ?? 100_000,
    maxJsonDepth: file.limits?.max_json_depth ?? 32,
    requestTimeoutMs: file.limits?.request_timeout_ms ?? 60_000,
    offlineCpuMs: file.limits?.offline_cpu_ms ?? 50,
    bodyTimeoutMs: file.limits?.body_timeout_ms ?? 30_000,
    creditLeaseMax: file.limits?.credit_lease_max ?? DEFAULT_CREDIT_LEASE_MAX,
    creditJournal: env.TEXTAI_CREDIT_JOURNAL
      ? env.TEXTAI_CREDIT_JOURNAL === "true"
      : (file.limits?.credit_journal ?? DEFAULT_CREDIT_JOURNAL),
    creditJournalShipMs:
      env.TEXTAI_CREDIT_JOURNAL_SHIP_MS ?? file.limits?.credit_journal_ship_ms ?? DEFAULT_CREDIT_JOURNAL_SHIP_MS,
    creditJournalPath:
      env.TEXTAI_CREDIT_JOURNAL_PATH ||
      file.limits?.credit_journal_path ||
      join(dirname(resolve(dbPath)), `credit-journal-${nodeId}.sqlite`),
  };
}

function drainSettings(env: Env, file: FileConfig): Config["shutdown"] {
  const drainGraceMs = env.TEXTAI_DRAIN_GRACE_MS ?? file.shutdown?.drain_grace_ms ?? 5000;
  const drainDeadlineMs = env.TEXTAI_DRAIN_DEADLINE_MS ?? file.shutdown?.drain_deadline_ms ?? 30_000;
  if (drainDeadlineMs < drainGraceMs)
    throw new ConfigError(
      `shutdown.drain_deadline_ms: must be at least drain_grace_ms (${drainGraceMs}), got ${drainDeadlineMs}`,
    );
  return { drainGraceMs, drainDeadlineMs };
}

/** Active keys an account may hold when its plan sets no `max_keys`. */
export const DEFAULT_MAX_KEYS = 50;

export function maxKeysFor(config: Pick<Config, "maxKeys">, plan: string): number {
  return config.maxKeys[plan] ?? DEFAULT_MAX_KEYS;
}

const priceOf = (
  p:
    | {
        input: number;
        output?: number;
        max_output_tokens?: number;
        image_tokens?: number;
        audio_tokens?: number;
        per_call?: Record<string, number>;
        cached_input?: number;
        cache_write?: number;
        reasoning?: number;
      }
    | undefined,
): TokenPrice | undefined => {
  if (!p) return undefined;
  const kinds: Record<string, number> = {};
  if (p.cached_input !== undefined) kinds.cached_input = p.cached_input;
  if (p.cache_write !== undefined) kinds.cache_write = p.cache_write;
  if (p.reasoning !== undefined) kinds.reasoning = p.reasoning;
  return {
    input: p.input,
    output: p.output ?? p.input,
    ...(p.max_output_tokens !== undefined ? { maxOutputTokens: p.max_output_tokens } : {}),
    ...(p.image_tokens !== undefined ? { imageTokens: p.image_tokens } : {}),
    ...(p.audio_tokens !== undefined ? { audioTokens: p.audio_tokens } : {}),
    ...(p.per_call !== undefined ? { perCall: p.per_call } : {}),
    ...(Object.keys(kinds).length ? { kinds } : {}),
  };
};

/** "host:port", "[v6]:port" or ":port" (host 127.0.0.1); the name says where it came from. */
export function listenAddress(raw: string, name: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^\s:[\]]*)):(\d{1,5})$/.exec(raw.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535)
    throw new ConfigError(`${name}: expected host:port (such as 127.0.0.1:9464 or [::1]:9464), got "${raw}"`);
  return { host: m[1] ?? (m[2] || "127.0.0.1"), port };
}

/** What one account may store in knowledge bases, over all its bases. */
/** A plan's policy ceiling (the fields of a key policy an operator may set for every key of the plan's accounts). */
export interface PlanPolicy {
  allowed_functions?: string[];
  allowed_models?: string[];
  rate_limit_per_minute?: number;
  monthly_credit_limit?: number;
}

export interface KnowledgeQuota {
  /** UTF-8 bytes of the documents' content, title and metadata, and of the FAQ collections' questions and answers */
  bytes: number;
  documents: number;
  bases: number;
  faqCollections: number;
  chatbots: number;
}

/** Defaults (2026-11-26): the free plan small, every other plan generous. */
export const DEFAULT_KNOWLEDGE_QUOTA: { free: KnowledgeQuota; other: KnowledgeQuota } = {
  free: { bytes: 25_000_000, documents: 1_000, bases: 10, faqCollections: 10, chatbots: 10 },
  other: { bytes: 1_000_000_000, documents: 100_000, bases: 100, faqCollections: 100, chatbots: 100 },
};

export function knowledgeQuotaFor(config: Pick<Config, "knowledgeQuotas">, plan: string): KnowledgeQuota {
  const base = plan === "free" ? DEFAULT_KNOWLEDGE_QUOTA.free : DEFAULT_KNOWLEDGE_QUOTA.other;
  return { ...base, ...config.knowledgeQuotas[plan] };
}

export function parseConfigText(text: string, path: string): FileConfig {
  let raw: unknown;
  try {
    raw = path.endsWith(".json") ? JSON.parse(text) : parseToml(text);
  } catch (err) {
    throw new ConfigError(`${path}: cannot parse: ${(err as Error).message}`);
  }
  const first = Value.Errors(FileConfigSchema, raw).First();
  if (first) {
    const key = first.path.replace(/^\//, "").replaceAll("/", ".") || "(root)";
    // an enum (a union of literals) says the values it accepts, as a provider's unknown type does
    const literals = literalsOf(first.schema);
    // a key the table does not have: the one meant, when one is near it, else the table's keys
    const known = Object.keys((first.schema as { properties?: Record<string, unknown> }).properties ?? {});
    if (first.message === "Unexpected property" && known.length > 0) {
      const name = key.slice(key.lastIndexOf(".") + 1);
      const near = closest(name, known);
      throw new ConfigError(
        `${path}: unknown key "${key}": ${near ? `did you mean "${near}"?` : `the keys here are ${known.join(", ")}`}`,
      );
    }
    const why = literals ? `${JSON.stringify(first.value)} is not one of ${literals.join(", ")}` : first.message;
    throw new ConfigError(`${path}: invalid value for "${key}": ${why}`);
  }
  return raw as FileConfig;
}

/** The config file's [plans]: each plan's rate limits, key count, knowledge quota, guardrails and policy ceiling. */
function planSettings(file: FileConfig): Pick<Config, "plans" | "maxKeys" | "knowledgeQuotas" | "guardrails" | "planPolicies"> {
  const plans: Record<string, Record<string, number>> = {};
  const maxKeys: Record<string, number> = {};
  const planPolicies: Record<string, PlanPolicy> = {};
  const knowledgeQuotas: Record<string, Partial<KnowledgeQuota>> = {};
  const guardrails: Record<string, GuardrailSettings> = {};
  for (const [plan, def] of Object.entries(file.plans ?? {})) {
    plans[plan] = { ...(def.rate_limits ?? {}) };
    if (def.max_keys !== undefined) maxKeys[plan] = def.max_keys;
    const quota: Partial<KnowledgeQuota> = {};
    if (def.knowledge_bytes !== undefined) quota.bytes = def.knowledge_bytes;
    if (def.knowledge_documents !== undefined) quota.documents = def.knowledge_documents;
    if (def.knowledge_bases !== undefined) quota.bases = def.knowledge_bases;
    if (def.knowledge_faq_collections !== undefined) quota.faqCollections = def.knowledge_faq_collections;
    if (def.knowledge_chatbots !== undefined) quota.chatbots = def.knowledge_chatbots;
    knowledgeQuotas[plan] = quota;
    if (def.guardrails) guardrails[plan] = parseGuardrails(`plans.${plan}.guardrails`, def.guardrails);
    if (def.policy) planPolicies[plan] = def.policy;
  }
  return { plans, maxKeys, knowledgeQuotas, guardrails, planPolicies };
}

/**
 * Why a route or a deployment may not name `name`: a provider the environment switches on is off
 * until its variable is set (say which); any other name is unknown (the one meant, if close, and
 * the names there are).
 */
function unknownProvider(name: string, known: string[]): string {
  // (the variable that switches on a provider named so without a [[providers]] entry: upsertEnvProvider below)
  const variable = `${name.toUpperCase().replace(/-/g, "_")}_API_KEY`;
  if (Object.hasOwn(EnvSchema.properties, variable))
    return `provider "${name}" is off: set ${variable} to switch it on, or declare it as a [[providers]] entry named "${name}" (providers now: ${known.join(", ")})`;
  const near = closest(name, known);
  return `unknown provider "${name}"${near ? ` (did you mean "${near}"?)` : ""} (one of ${known.join(", ")})`;
}

/**
 * The config file's `[[models]]`, checked against the providers (`names`, the local engine's
 * included): a deployment names a provider, its weight is above 0, a group's name is no
 * provider's and no other group's, its fallbacks are groups and run in no circle.
 */
function modelGroups(file: FileConfig, names: Set<string>): ModelGroupConfig[] {
  const groups: ModelGroupConfig[] = [];
  const seen = new Set<string>();
  for (const [i, g] of (file.models ?? []).entries()) {
    const at = `models[${i}] ("${g.name}")`;
    if (names.has(g.name)) throw new ConfigError(`${at}.name: a model group may not be named as a provider ("${g.name}")`);
    if (seen.has(g.name)) throw new ConfigError(`${at}.name: duplicate model group "${g.name}"`);
    seen.add(g.name);
    const ids = new Set<string>();
    const deployments = g.deployments.map((d, j): DeploymentConfig => {
      const where = `${at}.deployments[${j}]`;
      if (!names.has(d.provider)) throw new ConfigError(`${where}.provider: ${unknownProvider(d.provider, [...names])}`);
      const weight = d.weight ?? 1;
      if (!(weight > 0) || !Number.isFinite(weight))
        throw new ConfigError(`${where}.weight: must be a number above 0, got ${d.weight}`);
      const id = `${g.name}/${d.provider}/${d.model}`;
      if (ids.has(id)) throw new ConfigError(`${where}: duplicate deployment ${d.provider}/${d.model} in the group`);
      ids.add(id);
      const { rpm, tpm, max_context_tokens: maxContextTokens } = d;
      return {
        id,
        group: g.name,
        provider: d.provider,
        model: d.model,
        served: `${d.provider}/${d.model}`,
        weight,
        rpm,
        tpm,
        maxContextTokens,
        tags: d.tags ?? {},
        priority: d.priority ?? 0,
      };
    });
    groups.push({ name: g.name, strategy: g.strategy ?? "ordered", fallbacks: g.fallbacks ?? [], deployments });
  }
  const byName = new Map(groups.map((g) => [g.name, g]));
  for (const [i, g] of groups.entries())
    for (const f of g.fallbacks)
      if (!byName.has(f)) throw new ConfigError(`models[${i}] ("${g.name}").fallbacks: unknown model group "${f}"`);
  for (const g of groups) fallbackCycle(g.name, byName, []);
  return groups;
}

/**
 * The config file's `[[model_routes]]`, checked against the groups: each names a model group
 * other than its `model`, and has a condition (`when_header`, `when_tags` or both).
 */
function modelRoutes(file: FileConfig, groups: ModelGroupConfig[]): ModelRouteConfig[] {
  return (file.model_routes ?? []).map((r, i): ModelRouteConfig => {
    const at = `model_routes[${i}]`;
    if (!groups.some((g) => g.name === r.group))
      throw new ConfigError(
        `${at}.group: unknown model group "${r.group}" (one of ${groups.map((g) => g.name).join(", ") || "none: add [[models]]"})`,
      );
    if (r.group === r.model) throw new ConfigError(`${at}.group: routes "${r.model}" to itself`);
    if (r.when_header === undefined && (r.when_tags === undefined || Object.keys(r.when_tags).length === 0))
      throw new ConfigError(`${at}: needs a condition, when_header (the x-textai-route header's value) or when_tags`);
    const out: ModelRouteConfig = { model: r.model, group: r.group };
    if (r.when_header !== undefined) out.whenHeader = r.when_header;
    if (r.when_tags !== undefined) out.whenTags = r.when_tags;
    return out;
  });
}

/** Throws when the fallbacks from `name` lead back to a group already on `path`. */
function fallbackCycle(name: string, byName: Map<string, ModelGroupConfig>, path: string[]): void {
  if (path.includes(name))
    throw new ConfigError(`models: the fallbacks run in a circle (${[...path.slice(path.indexOf(name)), name].join(" -> ")})`);
  for (const f of byName.get(name)?.fallbacks ?? []) fallbackCycle(f, byName, [...path, name]);
}

/** The config file TEXTAI_CONFIG names (or the text given for it), parsed and validated; none: empty. */
function readConfigFile(path: string | undefined, fileText: string | undefined): FileConfig {
  if (fileText !== undefined) return parseConfigText(fileText, path ?? "config.toml");
  if (!path) return {};
  let text: string;
  try {
    text = require("node:fs").readFileSync(path, "utf8");
  } catch {
    throw new ConfigError(`TEXTAI_CONFIG: cannot read "${path}"`);
  }
  return parseConfigText(text, path);
}

/** the AWS SDKs' credential variables, read for `bedrock` entries that name no credentials (Config.providerEnv) */
const AWS_ENV = ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION"] as const;

/** A provider named after its type, enabled (or its key and base URL set) by environment variables. */
function upsertEnvProvider(
  providers: ProviderConfig[],
  name: string,
  key: string | undefined,
  baseUrl: string | undefined,
): void {
  if (!key && !baseUrl) return;
  const existing = providers.find((p) => p.name === name);
  if (existing) {
    if (key) existing.api_key = key;
    if (baseUrl) existing.base_url = baseUrl;
  } else providers.push({ name, type: name, api_key: key, base_url: baseUrl });
}

/** Builds the one validated Config from environment variables and the optional config file. Throws ConfigError naming the bad key. */
export function loadConfig(rawEnv: Record<string, string | undefined> = process.env, fileText?: string): Config {
  const env = parseEnv(rawEnv);
  const file = readConfigFile(env.TEXTAI_CONFIG, fileText);

  const logLevel = env.TEXTAI_LOG_LEVEL ?? "info";
  const welcomeCredits = env.TEXTAI_WELCOME_CREDITS ?? file.welcome_credits ?? 100;
  if (env.TEXTAI_ADMIN_TOKEN !== undefined && env.TEXTAI_ADMIN_TOKEN.length < MIN_ADMIN_TOKEN)
    throw new ConfigError(
      `TEXTAI_ADMIN_TOKEN must have at least ${MIN_ADMIN_TOKEN} characters (it has ${env.TEXTAI_ADMIN_TOKEN.length}); make one with: openssl rand -hex 32`,
    );

  const providers: ProviderConfig[] = [...(file.providers ?? [])];
  upsertEnvProvider(providers, "openai", env.OPENAI_API_KEY, env.OPENAI_BASE_URL);
  upsertEnvProvider(providers, "groq", env.GROQ_API_KEY, env.GROQ_BASE_URL);
  upsertEnvProvider(providers, "anthropic", env.ANTHROPIC_API_KEY, env.ANTHROPIC_BASE_URL);
  upsertEnvProvider(providers, "gemini", env.GEMINI_API_KEY, env.GEMINI_BASE_URL);
  upsertEnvProvider(providers, "mistral", env.MISTRAL_API_KEY, env.MISTRAL_BASE_URL);
  upsertEnvProvider(providers, "azure-openai", env.AZURE_OPENAI_API_KEY, env.AZURE_OPENAI_ENDPOINT);

  const names = new Set<string>();
  for (const [i, p] of providers.entries()) {
    if (names.has(p.name)) throw new ConfigError(`providers[${i}].name: duplicate provider name "${p.name}"`);
    names.add(p.name);
    if (p.api_key_env && !p.api_key) p.api_key = rawEnv[p.api_key_env];
  }
  if (!names.has("local")) providers.push({ name: "local", type: "local" });
  const models = modelGroups(file, new Set(providers.map((p) => p.name)));
  const routesToGroups = modelRoutes(file, models);
  for (const [fn, route] of Object.entries(file.routes ?? {})) {
    for (const name of route) {
      if (!providers.some((p) => p.name === name) && !models.some((g) => g.name === name))
        throw new ConfigError(
          `routes.${fn}: ${unknownProvider(name, [...providers.map((p) => p.name), ...models.map((g) => g.name)])}`,
        );
    }
  }

  for (const fn of ["chat-completions", "embeddings", "responses"])
    if (file.costs?.[fn] !== undefined)
      throw new ConfigError(`costs.${fn}: /v1 calls are priced per token, set their prices in [pricing] (docs/pricing.md)`);

  const { plans, maxKeys, knowledgeQuotas, guardrails, planPolicies } = planSettings(file);

  const dbPath = env.TEXTAI_DB || "./data/textai.db";
  const nodeId = env.TEXTAI_NODE_ID ?? file.node_id ?? defaultNodeId(dbPath);

  const providerEnv: Record<string, string> = {};
  for (const name of AWS_ENV) if (env[name]) providerEnv[name] = env[name];

  return {
    providerEnv,
    port: env.PORT ?? 8080,
    host: env.HOST || "127.0.0.1",
    dbPath,
    configFile: env.TEXTAI_CONFIG ? resolve(env.TEXTAI_CONFIG) : null,
    nodeId,
    databaseUrl: serverUrl(env, "TEXTAI_DATABASE_URL", ["postgres:", "postgresql:"]),
    redisUrl: redisUrl(env),
    redisCluster: env.TEXTAI_REDIS_CLUSTER === "true",
    redisPrefix: env.TEXTAI_REDIS_PREFIX || "textai",
    dbBusyTimeoutMs: env.TEXTAI_DB_BUSY_TIMEOUT_MS ?? 5000,
    databasePool: env.TEXTAI_DATABASE_POOL ?? file.database_pool ?? DEFAULT_DATABASE_POOL,
    databasePrepare: env.TEXTAI_DATABASE_PREPARE ? env.TEXTAI_DATABASE_PREPARE === "true" : (file.database_prepare ?? true),
    adminToken: env.TEXTAI_ADMIN_TOKEN || null,
    metricsListen: env.TEXTAI_METRICS_LISTEN
      ? listenAddress(env.TEXTAI_METRICS_LISTEN, "TEXTAI_METRICS_LISTEN")
      : file.metrics_listen
        ? listenAddress(file.metrics_listen, "metrics_listen")
        : null,
    welcomeCredits,
    logLevel,
    providers,
    routes: file.routes ?? {},
    models,
    modelRoutes: routesToGroups,
    costs: file.costs ?? {},
    plans,
    maxKeys,
    knowledgeQuotas,
    guardrails,
    planPolicies,
    cache: {
      enabled: file.cache?.enabled ?? true,
      ttlSeconds: file.cache?.ttl_seconds ?? 3600,
      maxEntries: file.cache?.max_entries ?? 10_000,
      maxBytes: file.cache?.max_bytes ?? 64 * 1024 * 1024,
    },
    limits: limitSettings(env, file, dbPath, nodeId),
    hedgeAfterMs: file.hedge_after_ms ?? {},
    breaker: breakerSettings(file),
    shutdown: drainSettings(env, file),
    tracing: tracingSettings(env),
    log: { enabled: file.log?.enabled ?? true, retentionDays: file.log?.retention_days ?? 30 },
    cors: corsSettings(file),
    alerts: alertSettings(file),
    sso: ssoSettings(env, file),
    pricing: {
      default: priceOf(file.pricing?.default) ?? { input: 1, output: 1 },
      models: Object.entries(file.pricing?.models ?? {}).map(([pattern, p]) => ({ pattern, price: priceOf(p) as TokenPrice })),
      refuseUnpriced: file.pricing?.refuse_unpriced ?? false,
      defaultMaxOutputTokens: file.pricing?.default_max_output_tokens ?? 1000,
      imageTokens: file.pricing?.image_tokens ?? 2000,
      audioTokens: file.pricing?.audio_tokens ?? 2000,
    },
    dashboard: {
      signup: file.dashboard?.signup ?? false,
      signupCredits: file.dashboard?.signup_credits ?? 0,
      ipv6PrefixBits: file.dashboard?.ipv6_prefix ?? 64,
      invitationHours: file.dashboard?.invitation_hours ?? 72,
      trustedProxies: env.TEXTAI_TRUSTED_PROXIES
        ? env.TEXTAI_TRUSTED_PROXIES.split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : (file.dashboard?.trusted_proxies ?? []),
    },
  };
}
