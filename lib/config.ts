/**
 * Every setting the project reads from the environment, read and validated in one place at
 * start-up. Nothing else in the code base reads `process.env`: entry points call `loadConfig()`
 * and pass the parts each component needs. A wrong value stops start-up with a message that
 * names the variable and says what it accepts.
 */
import path from "node:path";
import { AWS_REGION_NAME, S3_VECTOR_BUCKET } from "./aws/resource-names.js";
import { largestUploadableDocument } from "./http-body.js";
import { SecretKeyring } from "./secrets/keyring.js";
import type { TokenSettings } from "./tenancy/token.js";
import { DEFAULT_OPERATION_LIMITS, type OperationLimits } from "./graphql/operation-limits.js";
import type { RateLimitSettings } from "./graphql/rate-limit.js";
import { TRACE_SAMPLERS, type TracingConfig } from "./observability/tracing-config.js";

export type QueryPlanner = "rust" | "js";

export interface SubgraphEndpoint {
  /** Port the subgraph listens on when this process starts it. */
  port: number;
  /** URL the gateway uses to reach it (substituted into supergraph.yaml as `${env.<NAME>_URL}`). */
  url: string;
}

export interface Config {
  production: boolean;
  /** Interface servers bind to. 127.0.0.1 in development, 0.0.0.0 in production. */
  host: string;
  /**
   * connectTimeoutMs: how long a PostgreSQL pool waits for a connection (a new one, or a free one)
   * before the request fails with SERVICE_UNAVAILABLE instead of hanging on a database that is gone.
   */
  database: { url: string | null; pgliteDataDir: string; connectTimeoutMs: number; replica: ReplicaConfig | null };
  auth: AuthConfig;
  gateway: {
    port: number;
    supergraphPath: string;
    supergraphConfigPath: string;
    queryPlanner: QueryPlanner;
    corsOrigins: string[];
    upstreamTimeoutMs: number;
    /** How long the gateway serves a `search` answer from its own cache, per token; 0 turns it off. */
    responseCacheTtlSeconds: number;
    /** Whether the gateway serves the MCP server at `/mcp` (MCP_ENABLED). */
    mcpEnabled: boolean;
    /** Trusted documents (gateway/persisted-query-manifest.ts) and whether they are the only documents accepted. */
    persistedDocuments: PersistedDocumentsConfig;
    /** Automatic persisted queries (gateway/persisted-operations.ts); kept in Redis when REDIS_URL is set. */
    apq: { enabled: boolean; ttlSeconds: number; maxEntries: number; maxBytes: number };
  };
  subgraphs: { conversations: SubgraphEndpoint; search: SubgraphEndpoint; "knowledge-base": SubgraphEndpoint; "external-search": SubgraphEndpoint };
  knowledgeBase: KnowledgeBaseConfig;
  externalSearch: ExternalSearchConfig;
  search: SearchConfig;
  demo: { seed: boolean; conversations: number };
  /** What one GraphQL request may cost, at the gateway and in every subgraph (lib/graphql/operation-limits.ts). */
  operationLimits: OperationLimits;
  /** Requests per window per organization, user and anonymous client IP, at the gateway (lib/graphql/rate-limit.ts). */
  rateLimit: RateLimitSettings;
  /** How long a write's Idempotency-Key answers retries with its first answer (lib/database/idempotency.ts). */
  idempotency: { keyTtlSeconds: number };
  /** How long a stopping server lets in-flight requests finish before it cuts their connections. */
  shutdown: { drainTimeoutMs: number };
  /**
   * A subgraph's `/readyz` (and `/health`): its database check gets `timeoutMs` to answer, and
   * its outcome is kept `cacheMs`, so a flood of probes costs one check (lib/graphql/readiness.ts).
   */
  readiness: { timeoutMs: number; cacheMs: number };
  /** `GET /metrics` on the gateway and every subgraph: without a token only from loopback, unless public (METRICS_PUBLIC). */
  metrics: { public: boolean };
  /** OpenTelemetry traces over OTLP/HTTP: off (null endpoint) unless an OTLP endpoint is set. */
  tracing: TracingConfig;
  logLevel: "debug" | "info" | "warn" | "error";
  /** Keys that seal secrets stored at rest (lib/secrets/keyring.ts); null: storing a secret is refused. */
  secrets: { keyring: SecretKeyring | null };
}

/**
 * DATABASE_READ_URL: a hot standby of DATABASE_URL that search reads and entity loads go to
 * (lib/database/replica-reads.ts); null (unset): every read goes to DATABASE_URL.
 */
export interface ReplicaConfig {
  url: string;
  /**
   * DATABASE_READ_MAX_LAG_SECONDS: how long a user's last write keeps their reads off a replica
   * that has not replayed it, and how far behind the replica may fall before no read goes there.
   */
  maxLagSeconds: number;
  /** Where write positions are shared between instances (REDIS_URL); null: in process only. */
  redisUrl: string | null;
  redisKeyPrefix: string;
}

export interface PersistedDocumentsConfig {
  /** PERSISTED_DOCUMENTS_MANIFEST: an Apollo persisted-query manifest; null: no trusted documents. */
  manifestPath: string | null;
  /** PERSISTED_DOCUMENTS_IDS: the manifest's ids are SHA-256 hashes of the bodies (checked), or opaque ids of its own. */
  ids: "sha256" | "opaque";
  /** PERSISTED_DOCUMENTS_ONLY: refuse every document that is not in the manifest. */
  only: boolean;
}

/** How tokens are verified (see lib/tenancy/token.ts), and how the gateway proves itself to subgraphs. */
export interface AuthConfig extends TokenSettings {
  /** True when JWT_SECRET is unset outside production and the built-in development secret is used. */
  usingDevSecret: boolean;
  /**
   * Shared secret the gateway signs its subgraph requests with (HMAC-SHA256) and subgraphs check:
   * how a subgraph tells the gateway from a stranger (only signed calls or valid tokens may read
   * `_service`). Outside production it defaults to a development secret.
   */
  subgraphSigningSecret: string | null;
}

export interface KnowledgeBaseConfig {
  /** Largest document accepted, in bytes (before base64 encoding). */
  maxDocumentBytes: number;
  /** DOCUMENT_BACKLOG_PER_ORGANIZATION: documents of one organization waiting to be indexed before uploads are OVERLOADED. */
  backlogPerOrganization: number;
  /** How uploads are read into text: parser threads shared per organization, and each parse's budget (lib/documents/extract-text.ts). */
  parsing: DocumentParsingConfig;
  /** Where Bedrock Agent Runtime and STS are reached instead of AWS's regional endpoints (stand-ins, VPC endpoints); null: AWS's. */
  awsEndpoints: { bedrockAgentRuntime: string | null; sts: string | null; s3vectors: string | null };
  /** How long a role STS refused (ASSUME_ROLE) is refused again without asking STS, in ms; 0: ask every time. */
  assumeRoleRefusalTtlMs: number;
}

/** One external provider: the platform's key (null: only organizations' own keys), where it is, and what it costs. */
export interface ExternalProviderConfig {
  baseUrl: string;
  /** Credits per call. */
  credits: number;
  /** How long an answer is cached (a cached answer costs nothing); 0: not cached. */
  cacheTtlSeconds: number;
}

export interface ExternalSearchConfig {
  serper: ExternalProviderConfig & { apiKey: string | null };
  perplexity: ExternalProviderConfig & { apiKey: string | null; model: string; creditsPer1kTokens: number };
  dataforseo: ExternalProviderConfig & { login: string | null; password: string | null; locationCode: number; languageCode: string };
  /** Slack is always an organization's own workspace: no platform token. */
  slack: ExternalProviderConfig;
  /**
   * LinkedIn's versioned REST API (`baseUrl` ends in `/rest`): always an organization's own
   * OAuth token, no platform token. `version` is the `LinkedIn-Version` header (YYYYMM).
   */
  linkedin: ExternalProviderConfig & { version: string };
  /** Credits an organization may spend per UTC month unless it has its own budget; null: no cap. */
  defaultMonthlyBudget: number | null;
  /** One attempt's time budget, and the whole call's (retries included). */
  attemptTimeoutMs: number;
  callTimeoutMs: number;
  /** Consecutive vendor failures that open a provider's breaker for an organization, and how long it stays open. */
  breakerFailures: number;
  breakerCooldownMs: number;
  /** Concurrent calls per provider (per process), and how many more may wait. */
  maxConcurrentCalls: number;
  maxQueuedCalls: number;
  /** Of those, how many one organization may have in flight or waiting per provider: its fair share. */
  maxCallsPerOrganization: number;
  /** The language model that writes grounded answers (ANSWER_MODEL_*); null: none, answers are extractive. */
  answerModel: AnswerModelConfig | null;
}

/** The language model of grounded answers, a paid call of the external-search subgraph (docs/answers-models.md). */
export interface AnswerModelConfig {
  /** ANSWER_MODEL_PROVIDER: an OpenAI-compatible chat-completions endpoint, or Bedrock's Converse API. */
  provider: "openai" | "bedrock";
  /** ANSWER_MODEL: the vendor's model id (e.g. gpt-4o-mini, llama3.1:8b, anthropic.claude-3-5-haiku-20241022-v1:0). */
  model: string;
  /** ANSWER_MODEL_BASE_URL and ANSWER_MODEL_API_KEY (openai); the key may be absent for a local server that takes none. */
  openai: { baseUrl: string | null; apiKey: string | null; maxTokensParameter: "max_tokens" | "max_completion_tokens" };
  /**
   * Bedrock: ANSWER_MODEL_AWS_REGION (else AWS_REGION, else us-east-1), AWS_ENDPOINT_URL_BEDROCK_RUNTIME,
   * and the identity: the platform's (the SDK's default chain), or ANSWER_MODEL_AWS_ROLE_ARN assumed
   * with ANSWER_MODEL_AWS_EXTERNAL_ID, as knowledge bases do (lib/aws/credentials.ts).
   */
  bedrock: { region: string; endpoint: string | null; stsEndpoint: string | null; roleArn: string | null; externalId: string | null };
  /** Credits per 1,000 prompt tokens and per 1,000 output tokens. */
  creditsPer1kInputTokens: number;
  creditsPer1kOutputTokens: number;
  /** ANSWER_MODEL_MAX_OUTPUT_TOKENS: the most tokens one answer may have (a request asking more gets this many). */
  maxOutputTokens: number;
  /** ANSWER_MODEL_TIME_BUDGET_MS: the longest one generation may stream. */
  timeBudgetMs: number;
}

export type EmbedderKind = "local" | "openai" | "hashing";

/** Where document and conversation vectors live (VECTOR_STORE). */
export type VectorStoreKind = "pgvector" | "weaviate" | "s3vectors";

/** Amazon S3 Vectors as the vector store: one bucket, an index per embedding model (lib/aws/s3-vectors-store.ts). */
export interface S3VectorsConfig {
  /** S3_VECTORS_BUCKET: the vector bucket, created beforehand (the store creates indexes, never buckets). */
  bucket: string;
  /** S3_VECTORS_REGION, else AWS_REGION, else us-east-1. */
  region: string;
  /** S3_VECTORS_INDEX_PREFIX; null: the store's default ("context-search"). */
  indexPrefix: string | null;
  /** AWS_ENDPOINT_URL_S3VECTORS (a VPC endpoint or a stand-in); null: AWS's regional endpoint. */
  endpoint: string | null;
}

export interface DocumentParsingConfig {
  /** DOCUMENT_PARSE_THREADS: parser threads. */
  threads: number;
  /** DOCUMENT_PARSE_PER_ORGANIZATION: parses of one organization running at once. */
  perOrganization: number;
  /** DOCUMENT_PARSE_QUEUE_PER_ORGANIZATION: parses of one organization waiting; one more is OVERLOADED. */
  queuePerOrganization: number;
  /** DOCUMENT_PARSE_QUEUE: parses waiting over all organizations. */
  queue: number;
  /** DOCUMENT_PARSE_HEAP_MB: each parser thread's heap. */
  heapMb: number;
  /** DOCUMENT_PARSE_TIMEOUT_MS: longest one parse may run. */
  timeoutMs: number;
  /** DOCUMENT_MAX_UNPACKED_BYTES: most a file's DOCX XML or PDF streams may unpack to. */
  maxUnpackedBytes: number;
  /** DOCUMENT_MAX_COMPRESSION_RATIO: most times its size a compressed part past 1 MB may unpack to. */
  maxCompressionRatio: number;
}

export interface SearchConfig {
  /** Each provider's time budget; a slower provider is reported as TIMEOUT and left out. */
  providerTimeoutMs: number;
  /**
   * Searches one search subgraph runs at once (SEARCH_CONCURRENCY) and of them one organization's
   * (SEARCH_CONCURRENCY_PER_ORGANIZATION, below the first, so one is always free for another
   * organization); the others wait in turns by organization (search-service.ts).
   */
  concurrency: { running: number; perOrganization: number };
  /** How long search results stay cached; 0 turns the cache off. */
  cacheTtlSeconds: number;
  /** Redis for the result cache; null means an in-process LRU. */
  redisUrl: string | null;
  /** Prefix of every key this deployment writes to Redis. */
  redisKeyPrefix: string;
  embedder: EmbedderKind;
  /**
   * SEARCH_DEFAULT_ALPHA: the alpha of searches that give none, overriding the embedder's own
   * (lib/retrieval/embeddings/default-alpha.ts); null keeps the embedder's.
   */
  defaultAlpha: number | null;
  openai: { apiKey: string | null; baseUrl: string | null; model: string; dimensions: number | null };
  /** Which vector store createVectorStore builds; its settings are `weaviate` or `s3Vectors` below. */
  vectorStore: VectorStoreKind;
  weaviate: { url: string; apiKey: string | null; grpcPort: number | null } | null;
  /** Set exactly when vectorStore is s3vectors. */
  s3Vectors: S3VectorsConfig | null;
  /** Run the background indexer in this process. */
  indexer: boolean;
  /**
   * How long a claimed indexing job stays another worker's to skip (SEARCH_INDEXER_LEASE_SECONDS,
   * default 300): a worker killed mid-job holds its jobs that long. Longer than any one job takes
   * (the document indexer renews it after every slice of chunks).
   */
  indexerLeaseSeconds: number;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = "ConfigError";
  }
}

/** The secret `npm start` uses when JWT_SECRET is unset outside production; tokens signed with it are for local use only. */
export const DEV_JWT_SECRET = "dev-only-secret-do-not-use-in-production-0123456789";

/** Signs gateway-to-subgraph calls outside production when SUBGRAPH_SIGNING_SECRET is unset. */
export const DEV_SUBGRAPH_SIGNING_SECRET = "dev-only-subgraph-signing-secret-0123456789abcdef";

/** Apollo Studio's Sandbox runs on this origin and calls the endpoint from the browser. */
export const APOLLO_SANDBOX_ORIGIN = "https://studio.apollographql.com";

type Env = Record<string, string | undefined>;

/** SEARCH_CONCURRENCY and SEARCH_CONCURRENCY_PER_ORGANIZATION, the second below the first (unless both are 1). */
function searchConcurrency(env: Env): SearchConfig["concurrency"] {
  const running = int(env, "SEARCH_CONCURRENCY", 4, 1, 1_000);
  const perOrganization = int(env, "SEARCH_CONCURRENCY_PER_ORGANIZATION", Math.max(1, running - 1), 1, 1_000);
  if (perOrganization > running) throw new ConfigError("SEARCH_CONCURRENCY_PER_ORGANIZATION", `must be at most SEARCH_CONCURRENCY (${running}), got ${perOrganization}`);
  return { running, perOrganization };
}

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === "production";
  const host = str(env, "HOST") ?? (production ? "0.0.0.0" : "127.0.0.1");

  const databaseUrl = str(env, "DATABASE_URL");
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError("DATABASE_URL", `must be a postgres:// or postgresql:// URL, got "${redactUrl(databaseUrl)}"`);
  }

  const databaseReadUrl = str(env, "DATABASE_READ_URL");
  if (databaseReadUrl && !/^postgres(ql)?:\/\//.test(databaseReadUrl)) {
    throw new ConfigError("DATABASE_READ_URL", `must be a postgres:// or postgresql:// URL, got "${redactUrl(databaseReadUrl)}"`);
  }
  // A replica is a copy of the primary: without the primary there is nothing it replicates.
  if (databaseReadUrl && !databaseUrl) throw new ConfigError("DATABASE_READ_URL", "is set, but DATABASE_URL (the primary it replicates) is not");

  const jwtSecret = str(env, "JWT_SECRET");
  const jwksUrl = str(env, "JWT_JWKS_URL");
  if (jwksUrl && !/^https?:\/\//.test(jwksUrl)) throw new ConfigError("JWT_JWKS_URL", `must be an http:// or https:// URL, got "${jwksUrl}"`);
  if (!jwtSecret && !jwksUrl && production) {
    throw new ConfigError("JWT_SECRET", "(or JWT_JWKS_URL) is required when NODE_ENV=production (a secret of at least 32 characters)");
  }
  if (jwtSecret && jwtSecret.length < 32) {
    throw new ConfigError("JWT_SECRET", `must be at least 32 characters for HS256, got ${jwtSecret.length}`);
  }
  const signingSecret = str(env, "SUBGRAPH_SIGNING_SECRET");
  if (signingSecret && signingSecret.length < 32) throw new ConfigError("SUBGRAPH_SIGNING_SECRET", `must be at least 32 characters, got ${signingSecret.length}`);
  const claimName = (name: string, fallback: string) => {
    const value = str(env, name) ?? fallback;
    if (!/^[\w:/.#-]{1,200}$/.test(value)) throw new ConfigError(name, `must be a claim name (letters, digits, _ : / . # -), got "${value}"`);
    return value;
  };

  const conversationsPort = port(env, "CONVERSATIONS_PORT", 4001);
  const searchPort = port(env, "SEARCH_PORT", 4002);
  const knowledgeBasePort = port(env, "KNOWLEDGE_BASE_PORT", 4003);
  const externalSearchPort = port(env, "EXTERNAL_SEARCH_PORT", 4004);
  const openaiKey = str(env, "OPENAI_API_KEY") ?? null;
  const redisUrl = str(env, "REDIS_URL") ?? null;
  // Two deployments (or staging and production) sharing one Redis keep apart by their prefix.
  const redisKeyPrefix = str(env, "REDIS_KEY_PREFIX") ?? "context-search:";
  if (!/^[\w.:-]{1,64}$/.test(redisKeyPrefix)) throw new ConfigError("REDIS_KEY_PREFIX", `must be 1-64 letters, digits, _ . : or -, got "${redisKeyPrefix}"`);
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError("REDIS_URL", `must be a redis:// or rediss:// URL, got "${redactUrl(redisUrl)}"`);
  const weaviateUrl = str(env, "WEAVIATE_URL");
  if (weaviateUrl && !/^https?:\/\//.test(weaviateUrl)) throw new ConfigError("WEAVIATE_URL", `must be an http:// or https:// URL, got "${weaviateUrl}"`);
  const vectorStore = oneOf(env, "VECTOR_STORE", ["pgvector", "weaviate", "s3vectors"] as const, weaviateUrl ? "weaviate" : "pgvector");
  if (vectorStore === "weaviate" && !weaviateUrl) throw new ConfigError("VECTOR_STORE", "is weaviate, but WEAVIATE_URL is not set");
  const s3Vectors = vectorStore === "s3vectors" ? s3VectorsConfig(env) : null;
  const embedder = oneOf(env, "EMBEDDER", ["local", "openai", "hashing"] as const, openaiKey ? "openai" : "local");
  if (embedder === "openai" && !openaiKey) throw new ConfigError("EMBEDDER", "is openai, but OPENAI_API_KEY is not set");
  const queryPlanner = oneOf(env, "QUERY_PLANNER", ["rust", "js"] as const, "rust");
  const logLevel = oneOf(env, "LOG_LEVEL", ["debug", "info", "warn", "error"] as const, "info");
  const manifestPath = str(env, "PERSISTED_DOCUMENTS_MANIFEST");
  // On by default in production once a manifest is given: a manifest there means the frontends are
  // known, and a gateway that still runs any document defeats it. Off in development, so GraphiQL works.
  const persistedOnly = bool(env, "PERSISTED_DOCUMENTS_ONLY", production && manifestPath !== undefined);
  if (persistedOnly && !manifestPath) throw new ConfigError("PERSISTED_DOCUMENTS_ONLY", "is true, but PERSISTED_DOCUMENTS_MANIFEST is not set: with no manifest every request would be refused");

  return {
    production,
    host,
    database: {
      url: databaseUrl ?? null,
      pgliteDataDir: path.resolve(str(env, "PGLITE_DATA_DIR") ?? ".data/pglite"),
      connectTimeoutMs: int(env, "DATABASE_CONNECT_TIMEOUT_MS", 10_000, 100, 300_000),
      replica: databaseReadUrl
        ? { url: databaseReadUrl, maxLagSeconds: int(env, "DATABASE_READ_MAX_LAG_SECONDS", 30, 1, 3_600), redisUrl, redisKeyPrefix }
        : null,
    },
    auth: {
      // Outside production, `npm start` signs its dev token with the built-in secret.
      jwtSecret: jwtSecret ?? (jwksUrl || production ? null : DEV_JWT_SECRET),
      jwksUrl: jwksUrl ?? null,
      issuer: str(env, "JWT_ISSUER") ?? null,
      audience: str(env, "JWT_AUDIENCE") ?? null,
      maxLifetimeSeconds: int(env, "JWT_MAX_LIFETIME_SECONDS", production ? 86_400 : 31 * 86_400, 60, 366 * 86_400),
      clockToleranceSeconds: int(env, "JWT_CLOCK_TOLERANCE_SECONDS", 30, 0, 600),
      claims: { user: claimName("JWT_CLAIM_USER", "sub"), organization: claimName("JWT_CLAIM_ORGANIZATION", "org"), teams: claimName("JWT_CLAIM_TEAMS", "teams"), role: claimName("JWT_CLAIM_ROLE", "role") },
      usingDevSecret: !jwtSecret && !jwksUrl,
      subgraphSigningSecret: signingSecret ?? (production ? null : DEV_SUBGRAPH_SIGNING_SECRET),
    },
    gateway: {
      port: port(env, "GATEWAY_PORT", 4000),
      supergraphPath: path.resolve(str(env, "SUPERGRAPH_PATH") ?? "supergraph.graphql"),
      supergraphConfigPath: path.resolve(str(env, "SUPERGRAPH_CONFIG") ?? "supergraph.yaml"),
      queryPlanner,
      corsOrigins: list(env, "CORS_ORIGINS", ["http://localhost:3000", "http://localhost:5173"]),
      upstreamTimeoutMs: int(env, "UPSTREAM_TIMEOUT_MS", 10_000, 100, 300_000),
      responseCacheTtlSeconds: int(env, "GATEWAY_RESPONSE_CACHE_TTL_SECONDS", 10, 0, 3_600),
      mcpEnabled: bool(env, "MCP_ENABLED", true),
      persistedDocuments: {
        manifestPath: manifestPath ? path.resolve(manifestPath) : null,
        ids: oneOf(env, "PERSISTED_DOCUMENTS_IDS", ["sha256", "opaque"] as const, "sha256"),
        only: persistedOnly,
      },
      apq: {
        enabled: bool(env, "APQ_ENABLED", true),
        ttlSeconds: int(env, "APQ_TTL_SECONDS", 86_400, 1, 30 * 86_400),
        maxEntries: int(env, "APQ_MAX_ENTRIES", 10_000, 1, 10_000_000),
        maxBytes: int(env, "APQ_MAX_BYTES", 64 * 1024 * 1024, 1024, 4 * 1024 * 1024 * 1024),
      },
    },
    subgraphs: {
      conversations: {
        port: conversationsPort,
        url: str(env, "CONVERSATIONS_URL") ?? `http://127.0.0.1:${conversationsPort}/graphql`,
      },
      search: {
        port: searchPort,
        url: str(env, "SEARCH_URL") ?? `http://127.0.0.1:${searchPort}/graphql`,
      },
      "knowledge-base": {
        port: knowledgeBasePort,
        url: str(env, "KNOWLEDGE_BASE_URL") ?? `http://127.0.0.1:${knowledgeBasePort}/graphql`,
      },
      "external-search": {
        port: externalSearchPort,
        url: str(env, "EXTERNAL_SEARCH_URL") ?? `http://127.0.0.1:${externalSearchPort}/graphql`,
      },
    },
    externalSearch: {
      serper: {
        apiKey: str(env, "SERPER_API_KEY") ?? null,
        baseUrl: httpUrl(env, "SERPER_BASE_URL") ?? "https://google.serper.dev",
        credits: credits(env, "SERPER_CREDITS", 3),
        cacheTtlSeconds: int(env, "SERPER_CACHE_TTL_SECONDS", 3_600, 0, 7 * 86_400),
      },
      perplexity: {
        apiKey: str(env, "PERPLEXITY_API_KEY") ?? null,
        baseUrl: httpUrl(env, "PERPLEXITY_BASE_URL") ?? "https://api.perplexity.ai",
        model: str(env, "PERPLEXITY_MODEL") ?? "sonar",
        credits: credits(env, "PERPLEXITY_CREDITS", 5),
        creditsPer1kTokens: credits(env, "PERPLEXITY_CREDITS_PER_1K_TOKENS", 1),
        cacheTtlSeconds: int(env, "PERPLEXITY_CACHE_TTL_SECONDS", 86_400, 0, 7 * 86_400),
      },
      dataforseo: {
        login: str(env, "DATAFORSEO_LOGIN") ?? null,
        password: str(env, "DATAFORSEO_PASSWORD") ?? null,
        baseUrl: httpUrl(env, "DATAFORSEO_BASE_URL") ?? "https://api.dataforseo.com",
        credits: credits(env, "DATAFORSEO_CREDITS", 3),
        cacheTtlSeconds: int(env, "DATAFORSEO_CACHE_TTL_SECONDS", 3_600, 0, 7 * 86_400),
        locationCode: int(env, "DATAFORSEO_LOCATION_CODE", 2840, 1, 10_000_000),
        languageCode: str(env, "DATAFORSEO_LANGUAGE_CODE") ?? "en",
      },
      slack: {
        baseUrl: httpUrl(env, "SLACK_API_URL") ?? "https://slack.com/api/",
        credits: credits(env, "SLACK_CREDITS", 0),
        cacheTtlSeconds: int(env, "SLACK_CACHE_TTL_SECONDS", 300, 0, 86_400),
      },
      linkedin: {
        baseUrl: httpUrl(env, "LINKEDIN_API_URL") ?? "https://api.linkedin.com/rest",
        version: linkedInVersion(env),
        // LinkedIn bills nothing, but every call spends the platform's application quota (daily
        // limits per application and per member), so a call is not free by default.
        credits: credits(env, "LINKEDIN_CREDITS", 1),
        cacheTtlSeconds: int(env, "LINKEDIN_CACHE_TTL_SECONDS", 900, 0, 86_400),
      },
      defaultMonthlyBudget: str(env, "CREDITS_MONTHLY_BUDGET") === undefined ? null : credits(env, "CREDITS_MONTHLY_BUDGET", 0),
      attemptTimeoutMs: int(env, "EXTERNAL_ATTEMPT_TIMEOUT_MS", 4_000, 50, 120_000),
      callTimeoutMs: int(env, "EXTERNAL_CALL_TIMEOUT_MS", 10_000, 50, 300_000),
      breakerFailures: int(env, "EXTERNAL_BREAKER_FAILURES", 5, 1, 1_000),
      breakerCooldownMs: int(env, "EXTERNAL_BREAKER_COOLDOWN_MS", 30_000, 10, 3_600_000),
      maxConcurrentCalls: int(env, "EXTERNAL_MAX_CONCURRENT_CALLS", 20, 1, 10_000),
      maxQueuedCalls: int(env, "EXTERNAL_MAX_QUEUED_CALLS", 50, 0, 100_000),
      maxCallsPerOrganization: int(env, "EXTERNAL_MAX_CALLS_PER_ORGANIZATION", 4, 1, 10_000),
      answerModel: answerModelConfig(env),
    },
    knowledgeBase: {
      // 10 MB as the issue asks; base64 makes a 10 MB file ~13.4 MB, under the 16 MiB body limit.
      maxDocumentBytes: int(env, "DOCUMENT_MAX_BYTES", 10 * 1024 * 1024, 1, largestUploadableDocument()),
      // Documents of one organization waiting to be indexed before uploads are OVERLOADED (retry later).
      backlogPerOrganization: int(env, "DOCUMENT_BACKLOG_PER_ORGANIZATION", 200, 1, 1_000_000),
      parsing: {
        threads: int(env, "DOCUMENT_PARSE_THREADS", 2, 1, 64),
        perOrganization: int(env, "DOCUMENT_PARSE_PER_ORGANIZATION", 1, 1, 64),
        queuePerOrganization: int(env, "DOCUMENT_PARSE_QUEUE_PER_ORGANIZATION", 4, 0, 1_000),
        queue: int(env, "DOCUMENT_PARSE_QUEUE", 32, 0, 10_000),
        heapMb: int(env, "DOCUMENT_PARSE_HEAP_MB", 512, 64, 16_384),
        // Under UPSTREAM_TIMEOUT_MS (10 s), so a file stopped by its budget is refused with its reason, not a gateway 504.
        timeoutMs: int(env, "DOCUMENT_PARSE_TIMEOUT_MS", 8_000, 100, 600_000),
        maxUnpackedBytes: int(env, "DOCUMENT_MAX_UNPACKED_BYTES", 100 * 1024 * 1024, 1024 * 1024, 2 * 1024 * 1024 * 1024),
        maxCompressionRatio: int(env, "DOCUMENT_MAX_COMPRESSION_RATIO", 100, 2, 1_000_000),
      },
      awsEndpoints: {
        bedrockAgentRuntime: httpUrl(env, "AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME"),
        sts: httpUrl(env, "AWS_ENDPOINT_URL_STS"),
        s3vectors: httpUrl(env, "AWS_ENDPOINT_URL_S3VECTORS"),
      },
      assumeRoleRefusalTtlMs: int(env, "AWS_ASSUME_ROLE_REFUSAL_TTL_SECONDS", 60, 0, 3_600) * 1000,
    },
    search: {
      providerTimeoutMs: int(env, "SEARCH_PROVIDER_TIMEOUT_MS", 2_000, 10, 60_000),
      concurrency: searchConcurrency(env),
      cacheTtlSeconds: int(env, "SEARCH_CACHE_TTL_SECONDS", 60, 0, 86_400),
      redisUrl,
      redisKeyPrefix,
      embedder,
      defaultAlpha: fraction(env, "SEARCH_DEFAULT_ALPHA"),
      openai: {
        apiKey: openaiKey,
        baseUrl: str(env, "OPENAI_BASE_URL") ?? null,
        model: str(env, "OPENAI_EMBEDDING_MODEL") ?? "text-embedding-3-small",
        dimensions: str(env, "OPENAI_EMBEDDING_DIMENSIONS") ? int(env, "OPENAI_EMBEDDING_DIMENSIONS", 1536, 1, 2000) : null,
      },
      vectorStore,
      weaviate: weaviateUrl
        ? { url: weaviateUrl, apiKey: str(env, "WEAVIATE_API_KEY") ?? null, grpcPort: str(env, "WEAVIATE_GRPC_PORT") ? port(env, "WEAVIATE_GRPC_PORT", 50051) : null }
        : null,
      s3Vectors,
      indexer: bool(env, "SEARCH_INDEXER", true),
      indexerLeaseSeconds: int(env, "SEARCH_INDEXER_LEASE_SECONDS", 300, 1, 86_400),
    },
    demo: { seed: bool(env, "DEMO_SEED", !production), conversations: int(env, "DEMO_CONVERSATIONS", 300, 1, 100_000) },
    operationLimits: {
      ...DEFAULT_OPERATION_LIMITS,
      maxTokens: int(env, "OPERATION_MAX_TOKENS", DEFAULT_OPERATION_LIMITS.maxTokens, 100, 1_000_000),
      // The Rust planner's parser fails near 40 levels: a higher limit would let it answer 500.
      maxDepth: int(env, "OPERATION_MAX_DEPTH", DEFAULT_OPERATION_LIMITS.maxDepth, 5, 35),
      maxAliases: int(env, "OPERATION_MAX_ALIASES", DEFAULT_OPERATION_LIMITS.maxAliases, 0, 100_000),
      maxSelections: int(env, "OPERATION_MAX_SELECTIONS", DEFAULT_OPERATION_LIMITS.maxSelections, 10, 1_000_000),
      maxDirectives: int(env, "OPERATION_MAX_DIRECTIVES", DEFAULT_OPERATION_LIMITS.maxDirectives, 0, 100_000),
      maxCost: int(env, "OPERATION_MAX_COST", DEFAULT_OPERATION_LIMITS.maxCost, 100, 100_000_000),
      maxVariableDepth: int(env, "OPERATION_MAX_VARIABLE_DEPTH", DEFAULT_OPERATION_LIMITS.maxVariableDepth, 3, 1_000),
      maxVariableValues: int(env, "OPERATION_MAX_VARIABLE_VALUES", DEFAULT_OPERATION_LIMITS.maxVariableValues, 100, 10_000_000),
    },
    rateLimit: {
      windowSeconds: int(env, "RATE_LIMIT_WINDOW_SECONDS", 60, 1, 86_400),
      organizationPoints: int(env, "RATE_LIMIT_ORGANIZATION_POINTS", 6_000, 0, 100_000_000),
      userPoints: int(env, "RATE_LIMIT_USER_POINTS", 1_200, 0, 100_000_000),
      anonymousPoints: int(env, "RATE_LIMIT_ANONYMOUS_POINTS", 300, 0, 100_000_000),
      redisUrl,
      redisKeyPrefix,
    },
    // At least a minute (a retry must find it), at most 30 days (rows are kept that long).
    idempotency: { keyTtlSeconds: int(env, "IDEMPOTENCY_KEY_TTL_SECONDS", 86_400, 60, 30 * 86_400) },
    shutdown: { drainTimeoutMs: int(env, "SHUTDOWN_DRAIN_TIMEOUT_MS", 10_000, 0, 600_000) },
    readiness: { timeoutMs: int(env, "READINESS_TIMEOUT_MS", 1_000, 50, 60_000), cacheMs: int(env, "READINESS_CACHE_MS", 250, 0, 60_000) },
    metrics: { public: bool(env, "METRICS_PUBLIC", false) },
    tracing: tracingConfig(env),
    logLevel,
    secrets: { keyring: secretKeyring(env) },
  };
}

// Private: S3 Vectors' settings, checked here so a typo fails start-up rather than the first search.
function s3VectorsConfig(env: Env): S3VectorsConfig {
  const bucket = str(env, "S3_VECTORS_BUCKET");
  if (!bucket) throw new ConfigError("S3_VECTORS_BUCKET", "is required when VECTOR_STORE=s3vectors (the name of an existing S3 vector bucket)");
  if (!S3_VECTOR_BUCKET.test(bucket)) throw new ConfigError("S3_VECTORS_BUCKET", `must be 3-63 lower-case letters, digits or "-", starting and ending with a letter or digit, got "${bucket}"`);
  const region = str(env, "S3_VECTORS_REGION") ?? str(env, "AWS_REGION") ?? "us-east-1";
  if (!AWS_REGION_NAME.test(region)) {
    throw new ConfigError(str(env, "S3_VECTORS_REGION") ? "S3_VECTORS_REGION" : "AWS_REGION", `must be an AWS region such as us-east-1, got "${region}"`);
  }
  const indexPrefix = str(env, "S3_VECTORS_INDEX_PREFIX") ?? null;
  // The store appends "-<model>-<hash>" and S3 Vectors caps index names at 63 characters.
  if (indexPrefix !== null && !/^[a-z0-9][a-z0-9.-]{1,20}$/.test(indexPrefix)) {
    throw new ConfigError("S3_VECTORS_INDEX_PREFIX", `must be 2-21 lower-case letters, digits, "-" or ".", starting with a letter or digit, got "${indexPrefix}"`);
  }
  return { bucket, region, indexPrefix, endpoint: httpUrl(env, "AWS_ENDPOINT_URL_S3VECTORS") };
}

// Private: the answer model's settings, all checked at start-up (a typo must not wait for the first answer).
function answerModelConfig(env: Env): AnswerModelConfig | null {
  const provider = oneOf(env, "ANSWER_MODEL_PROVIDER", ["openai", "bedrock", "none"] as const, "none");
  if (provider === "none") {
    for (const name of ["ANSWER_MODEL", "ANSWER_MODEL_BASE_URL", "ANSWER_MODEL_API_KEY", "ANSWER_MODEL_AWS_ROLE_ARN"]) {
      if (str(env, name)) throw new ConfigError("ANSWER_MODEL_PROVIDER", `must be openai or bedrock when ${name} is set (it is none, or unset)`);
    }
    return null;
  }
  const model = str(env, "ANSWER_MODEL");
  if (!model) throw new ConfigError("ANSWER_MODEL", `is required when ANSWER_MODEL_PROVIDER=${provider} (the vendor's model id, e.g. ${provider === "openai" ? "gpt-4o-mini" : "anthropic.claude-3-5-haiku-20241022-v1:0"})`);
  if (!/^[\w.:/@-]{1,200}$/.test(model)) throw new ConfigError("ANSWER_MODEL", `must be a model id of letters, digits and _ . : / @ - (at most 200), got "${model.slice(0, 60)}"`);
  const baseUrl = httpUrl(env, "ANSWER_MODEL_BASE_URL");
  const apiKey = str(env, "ANSWER_MODEL_API_KEY") ?? null;
  if (provider === "openai" && !baseUrl && !apiKey) throw new ConfigError("ANSWER_MODEL_API_KEY", "is required for OpenAI itself (ANSWER_MODEL_BASE_URL unset); a local server that takes no key needs ANSWER_MODEL_BASE_URL");
  if (provider === "bedrock" && (baseUrl || apiKey)) throw new ConfigError(baseUrl ? "ANSWER_MODEL_BASE_URL" : "ANSWER_MODEL_API_KEY", "is for ANSWER_MODEL_PROVIDER=openai; Bedrock is reached with AWS credentials (AWS_ENDPOINT_URL_BEDROCK_RUNTIME for a VPC endpoint)");
  const region = str(env, "ANSWER_MODEL_AWS_REGION") ?? str(env, "AWS_REGION") ?? "us-east-1";
  if (!AWS_REGION_NAME.test(region)) throw new ConfigError(str(env, "ANSWER_MODEL_AWS_REGION") ? "ANSWER_MODEL_AWS_REGION" : "AWS_REGION", `must be an AWS region such as us-east-1, got "${region.slice(0, 40)}"`);
  const roleArn = str(env, "ANSWER_MODEL_AWS_ROLE_ARN") ?? null;
  if (roleArn && !/^arn:aws[\w-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/.test(roleArn)) throw new ConfigError("ANSWER_MODEL_AWS_ROLE_ARN", `must be an IAM role ARN (arn:aws:iam::123456789012:role/Name), got "${roleArn.slice(0, 80)}"`);
  const externalId = str(env, "ANSWER_MODEL_AWS_EXTERNAL_ID") ?? null;
  if (externalId && !roleArn) throw new ConfigError("ANSWER_MODEL_AWS_EXTERNAL_ID", "is set, but ANSWER_MODEL_AWS_ROLE_ARN (the role it is for) is not");
  if (externalId && !/^[\w+=,.@:/-]{2,1224}$/.test(externalId)) throw new ConfigError("ANSWER_MODEL_AWS_EXTERNAL_ID", "must be 2-1224 characters of letters, digits and +=,.@:/-_");
  return {
    provider,
    model,
    openai: {
      baseUrl,
      apiKey,
      // OpenAI's reasoning models refuse max_tokens; many other servers know only max_tokens.
      maxTokensParameter: oneOf(env, "ANSWER_MODEL_MAX_TOKENS_PARAMETER", ["max_tokens", "max_completion_tokens"] as const, baseUrl ? "max_tokens" : "max_completion_tokens"),
    },
    bedrock: { region, endpoint: httpUrl(env, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME"), stsEndpoint: httpUrl(env, "AWS_ENDPOINT_URL_STS"), roleArn, externalId },
    creditsPer1kInputTokens: credits(env, "ANSWER_MODEL_CREDITS_PER_1K_INPUT_TOKENS", 1),
    creditsPer1kOutputTokens: credits(env, "ANSWER_MODEL_CREDITS_PER_1K_OUTPUT_TOKENS", 4),
    maxOutputTokens: int(env, "ANSWER_MODEL_MAX_OUTPUT_TOKENS", 1_024, 16, 32_768),
    timeBudgetMs: answerTimeBudget(env),
  };
}

// Private: an answer is one subgraph request, and the gateway cuts any such request at
// UPSTREAM_TIMEOUT_MS (a 504 the caller cannot tell from an outage). The model's budget must end
// first, so a slow model ends as a cut answer with its reason instead.
function answerTimeBudget(env: Env): number {
  const upstreamTimeoutMs = int(env, "UPSTREAM_TIMEOUT_MS", 10_000, 100, 300_000);
  const ceiling = upstreamTimeoutMs - 500;
  if (ceiling < 1_000) throw new ConfigError("UPSTREAM_TIMEOUT_MS", `must be at least 1500 ms when an answer model is configured (the model's time budget runs inside it), got ${upstreamTimeoutMs}`);
  const budget = int(env, "ANSWER_MODEL_TIME_BUDGET_MS", Math.min(30_000, upstreamTimeoutMs - 1_000), 1_000, 600_000);
  if (budget > ceiling) throw new ConfigError("ANSWER_MODEL_TIME_BUDGET_MS", `must end before the gateway's UPSTREAM_TIMEOUT_MS (${upstreamTimeoutMs} ms) cuts the request: at most ${ceiling}, got ${budget}; raise UPSTREAM_TIMEOUT_MS for longer answers`);
  return budget;
}

function secretKeyring(env: Env): SecretKeyring | null {
  const spec = str(env, "SECRETS_ENCRYPTION_KEYS");
  if (!spec) return null;
  try {
    return SecretKeyring.parse(spec);
  } catch (error) {
    // The message names the key id at most, never key material.
    throw new ConfigError("SECRETS_ENCRYPTION_KEYS", `must be comma-separated <id>:<32 bytes in base64> (newest first): ${(error as Error).message}`);
  }
}

/**
 * The standard OpenTelemetry variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the full URL spans
 * are POSTed to; OTEL_EXPORTER_OTLP_ENDPOINT is a base URL that gets /v1/traces appended (as the
 * specification says). OTEL_SDK_DISABLED=true turns tracing off whatever else is set.
 */
function tracingConfig(env: Env): TracingConfig {
  const traces = httpUrl(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const base = httpUrl(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  const disabled = bool(env, "OTEL_SDK_DISABLED", false);
  const serviceName = str(env, "OTEL_SERVICE_NAME") ?? "context-search";
  if (!/^[\w.-]{1,64}$/.test(serviceName)) throw new ConfigError("OTEL_SERVICE_NAME", `must be 1-64 letters, digits, _ . or -, got "${serviceName}"`);
  const sampler = oneOf(env, "OTEL_TRACES_SAMPLER", TRACE_SAMPLERS, "parentbased_always_on");
  const rawRatio = str(env, "OTEL_TRACES_SAMPLER_ARG");
  let ratio = 1;
  if (rawRatio !== undefined && sampler.endsWith("traceidratio")) {
    ratio = Number(rawRatio);
    if (!/^\d*\.?\d+$/.test(rawRatio) || !(ratio >= 0 && ratio <= 1)) throw new ConfigError("OTEL_TRACES_SAMPLER_ARG", `must be a ratio between 0 and 1, got "${rawRatio}"`);
  }
  const endpoint = disabled ? null : (traces ?? (base ? `${base.replace(/\/+$/, "")}/v1/traces` : null));
  return { endpoint, serviceName, sampler, ratio };
}

function httpUrl(env: Env, name: string): string | null {
  const value = str(env, name);
  if (value === undefined) return null;
  if (!/^https?:\/\/[^\s/]+/.test(value)) throw new ConfigError(name, `must be an http:// or https:// URL, got "${redactUrl(value)}"`);
  return value;
}

/**
 * LinkedIn-Version: a month YYYYMM. LinkedIn serves each version for about a year; the default is
 * the one this client was written against, and an operator moves it forward after checking
 * LinkedIn's changelog.
 */
function linkedInVersion(env: Env): string {
  const value = str(env, "LINKEDIN_VERSION") ?? "202611";
  if (!/^20\d\d(0[1-9]|1[0-2])$/.test(value)) throw new ConfigError("LINKEDIN_VERSION", `must be a LinkedIn API version as YYYYMM, e.g. 202611, got "${value}"`);
  return value;
}

/** Credits: a decimal number of at most 3 places, 0 to a billion. */
function credits(env: Env, name: string, fallback: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d{1,10}(?:\.\d{1,3})?$/.test(raw)) throw new ConfigError(name, `must be a number of credits such as 3 or 0.5 (at most 3 decimals), got "${raw}"`);
  return Number(raw);
}

function str(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A number from 0 to 1 written as a plain decimal (e.g. 1, 0.75, .5), or null when unset. */
function fraction(env: Env, name: string): number | null {
  const raw = str(env, name);
  if (raw === undefined) return null;
  // Bounded before parsing; Number() alone would also take "0x1", "1e0" or "Infinity".
  const value = raw.length <= 20 && /^(\d+(\.\d*)?|\.\d+)$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 0 && value <= 1)) throw new ConfigError(name, `must be a number from 0 (semantic only) to 1 (keyword only), got "${raw.slice(0, 40)}"`);
  return value;
}

function port(env: Env, name: string, fallback: number): number {
  return int(env, name, fallback, 0, 65_535);
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  return raw.split(",").map((item) => item.trim()).filter(Boolean);
}

/** Hides the password of a connection URL before it reaches a log or an error message. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, "//$1:***@");
}
