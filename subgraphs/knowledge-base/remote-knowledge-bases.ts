/**
 * Asking a knowledge base that lives in AWS: BEDROCK ones with Retrieve, S3VECTORS ones with the
 * query's embedding and QueryVectors, each under its credential mode. Both the agent-facing
 * knowledge queries (knowledge-queries.ts) and the unified search's `knowledge-bases` provider
 * (search/knowledge-bases-provider.ts) ask through here, so a knowledge base answers the same
 * way whoever asks.
 *
 * `ask` never throws: every failure becomes a source status (RATE_LIMITED, ACCESS_DENIED, …)
 * with a message the user can act on. A failure that will not go away by itself (denied, not
 * found, refused as invalid) also turns an organization's own knowledge base to ERROR with that
 * reason, and its next success turns it back to ACTIVE, so `knowledgeBases` shows what is broken
 * without anyone reading logs. Platform knowledge bases are read-only to tenants: their status
 * is the platform's to keep.
 */
import { LRUCache } from "lru-cache";
import type { RetrievedPassage } from "../../lib/aws/bedrock-knowledge-base.js";
import { AwsCredentialSource, type AwsCredentialSettings } from "../../lib/aws/credentials.js";
import { AwsBackendError, type AwsProviderStatus } from "../../lib/aws/errors.js";
import type { Config } from "../../lib/config.js";
import type { Logger } from "../../lib/logger.js";
import type { Embedder } from "../../lib/retrieval/embeddings/embedder.js";
import type { HitRanking } from "../../lib/retrieval/search-provider.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { KnowledgeBase, KnowledgeBaseStore } from "./knowledge-base-store.js";

export type SourceStatus = "OK" | "DEGRADED" | "RATE_LIMITED" | "ACCESS_DENIED" | "BAD_REQUEST" | "NOT_FOUND" | "TIMEOUT" | "UNSUPPORTED" | "ERROR";

export interface PassageSourceInfo {
  documentId: string | null;
  chunkId: string | null;
  fileName: string | null;
  uri: string | null;
  headingPath: string[];
  page: number | null;
}

export interface KnowledgePassage {
  text: string;
  score: number;
  source: PassageSourceInfo;
  knowledgeBase: KnowledgeBase | null;
  /**
   * How each of our own rankings that found it scored it (a LOCAL knowledge base's documents: BM25,
   * and vectors below alpha 1), so the unified search weighs it as those rankings' hits. Unset for
   * a remote knowledge base's passages, which have one score of their own.
   */
  rankings?: (HitRanking & { nativeScore: number })[];
  /** How much of the query it covers, 0 to 1 (ProviderHit.relevance), when a ranking of ours measured it. */
  relevance?: number;
}

export interface SourceReport {
  knowledgeBase: KnowledgeBase | null;
  provider: string;
  status: SourceStatus;
  returned: number;
  error: string | null;
  tookMs: number;
}

export interface SourceAnswer {
  passages: KnowledgePassage[];
  report: SourceReport;
}

export interface RemoteKnowledgeBaseDependencies {
  knowledgeBases: KnowledgeBaseStore;
  credentials: AwsCredentialSource;
  /** Embeds queries for S3VECTORS knowledge bases (whose vectors must be of this model). */
  embedder: Embedder;
  endpoints: { bedrockAgentRuntime: string | null; s3vectors: string | null };
  /** Each knowledge base's time budget. */
  timeoutMs: number;
  logger: Logger;
}

/** Failures that last until someone changes a key, a role, a policy or the knowledge base itself. */
const LASTING: ReadonlySet<AwsProviderStatus> = new Set(["ACCESS_DENIED", "NOT_FOUND", "BAD_REQUEST"]);

/**
 * The remote knowledge bases as a process asks them: AWS credentials under the configured
 * keyring and STS endpoint, the configured endpoints, the search providers' time budget. The
 * knowledge-base subgraph and the unified search's provider each build one from config.
 */
export function remoteKnowledgeBasesFrom(config: Config, knowledgeBases: KnowledgeBaseStore, embedder: Embedder, logger: Logger): { remote: RemoteKnowledgeBases; close(): void } {
  const credentials = new AwsCredentialSource({
    keyring: config.secrets.keyring ?? undefined,
    sts: { endpoint: config.knowledgeBase.awsEndpoints.sts ?? undefined },
    refusalTtlMs: config.knowledgeBase.assumeRoleRefusalTtlMs,
  });
  const remote = new RemoteKnowledgeBases({ knowledgeBases, credentials, embedder, endpoints: config.knowledgeBase.awsEndpoints, timeoutMs: config.search.providerTimeoutMs, logger });
  return { remote, close: () => credentials.close() };
}

export function isRemote(base: KnowledgeBase): boolean {
  return base.backend === "BEDROCK" || base.backend === "S3VECTORS";
}

export class RemoteKnowledgeBases {
  /**
   * The health last written per knowledge base ("" for healthy): callers may hold a row read
   * seconds ago (the search provider keeps its list briefly), so a write is decided on what
   * this process last wrote when it knows, and on the row otherwise.
   */
  private readonly written = new LRUCache<string, string>({ max: 10_000 });

  constructor(private readonly deps: RemoteKnowledgeBaseDependencies) {}

  get timeoutMs(): number {
    return this.deps.timeoutMs;
  }

  /** One BEDROCK or S3VECTORS knowledge base as one source; `minScore` cuts on the backend's own score. */
  async ask(tenant: TenantContext, base: KnowledgeBase, query: string, limit: number, minScore: number, signal?: AbortSignal): Promise<SourceAnswer> {
    const started = performance.now();
    const provider = base.backend === "BEDROCK" ? "bedrock" : "s3vectors";
    const report = (status: SourceStatus, returned: number, error: string | null): SourceReport => ({
      knowledgeBase: base,
      provider,
      status,
      returned,
      error,
      tookMs: Math.round(performance.now() - started),
    });
    try {
      const found = base.backend === "BEDROCK" ? await this.askBedrock(tenant, base, query, limit, signal) : await this.askS3Vectors(tenant, base, query, limit, signal);
      const passages = found.filter((passage) => passage.score >= minScore).slice(0, limit);
      this.recordHealth(tenant, base, null);
      return { passages, report: report("OK", passages.length, null) };
    } catch (error) {
      if (!(error instanceof AwsBackendError)) {
        this.deps.logger.error(`query of knowledge base ${base.id} failed`, error);
        return { passages: [], report: report("ERROR", 0, `${base.name}: the query failed unexpectedly`) };
      }
      if (LASTING.has(error.status)) this.recordHealth(tenant, base, error.message);
      return { passages: [], report: report(error.status, 0, error.message) };
    }
  }

  private async askBedrock(tenant: TenantContext, base: KnowledgeBase, query: string, limit: number, signal: AbortSignal | undefined): Promise<KnowledgePassage[]> {
    const settings = await this.credentialSettings(tenant, base);
    // Loaded when a Bedrock knowledge base is first asked: the AWS SDK is seconds of a start on a busy machine.
    const { retrieve } = await import("../../lib/aws/bedrock-knowledge-base.js");
    const found: RetrievedPassage[] = await retrieve({
      knowledgeBaseId: base.bedrockKnowledgeBaseId!,
      region: base.awsRegion!,
      query,
      numberOfResults: limit,
      credentials: this.deps.credentials.providerFor(settings, tenant.organizationId),
      timeoutMs: this.deps.timeoutMs,
      signal,
      endpoint: this.deps.endpoints.bedrockAgentRuntime ?? undefined,
    });
    return found.map((passage) => ({
      text: passage.text,
      score: passage.score,
      source: { documentId: null, chunkId: null, fileName: null, uri: uriOf(passage), headingPath: [], page: pageOf(passage.metadata) },
      knowledgeBase: base,
    }));
  }

  private async askS3Vectors(tenant: TenantContext, base: KnowledgeBase, query: string, limit: number, signal: AbortSignal | undefined): Promise<KnowledgePassage[]> {
    const { embedder } = this.deps;
    // Vectors of another model live in another space: comparing them would return confident nonsense.
    if (base.embeddingModel && base.embeddingModel !== embedder.model) {
      throw new AwsBackendError("BAD_REQUEST", `${base.name}: its vectors were made with ${base.embeddingModel}, but this deployment embeds queries with ${embedder.model}`);
    }
    const settings = await this.credentialSettings(tenant, base);
    const [vector] = await embedder.embed([query]);
    const { queryS3VectorsKnowledgeBase } = await import("../../lib/aws/s3-vectors-knowledge-base.js");
    const found = await queryS3VectorsKnowledgeBase({
      bucket: base.s3VectorsBucket!,
      index: base.s3VectorsIndex!,
      region: base.awsRegion!,
      vector: vector!,
      topK: limit,
      credentials: this.deps.credentials.providerFor(settings, tenant.organizationId),
      timeoutMs: this.deps.timeoutMs,
      signal,
      endpoint: this.deps.endpoints.s3vectors ?? undefined,
    });
    return found.map((passage) => ({
      text: passage.text,
      score: passage.score,
      source: { documentId: null, chunkId: null, fileName: null, uri: passage.uri, headingPath: [], page: passage.page },
      knowledgeBase: base,
    }));
  }

  // Private: the knowledge base's credential mode as lib/aws/credentials.ts takes it; user keys are read sealed and opened only there.
  private async credentialSettings(tenant: TenantContext, base: KnowledgeBase): Promise<AwsCredentialSettings> {
    switch (base.credentialMode) {
      case "USER_KEYS": {
        const sealedKeys = await this.deps.knowledgeBases.sealedCredentials(tenant, base.id);
        if (!sealedKeys) throw new AwsBackendError("ACCESS_DENIED", `knowledge base ${base.id} uses your organization's AWS keys and none are stored: set them with setKnowledgeBaseCredentials`);
        return { mode: "user-keys", sealedKeys };
      }
      case "ASSUME_ROLE":
        return { mode: "assume-role", roleArn: base.roleArn!, externalId: base.externalId ?? undefined };
      default:
        return { mode: "platform" };
    }
  }

  // Private: ERROR with the reason after a lasting failure, ACTIVE after a success; written off the response path, only on change.
  private recordHealth(tenant: TenantContext, base: KnowledgeBase, failure: string | null): void {
    if (base.organizationId !== tenant.organizationId) return;
    const wanted = failure ?? "";
    const current = this.written.get(base.id) ?? (base.status === "ERROR" ? (base.statusReason ?? "") || "error" : "");
    if (current === wanted) return;
    this.written.set(base.id, wanted);
    this.deps.knowledgeBases.setHealth(tenant, base.id, failure).catch((error: unknown) => {
      this.written.delete(base.id);
      this.deps.logger.warn(`could not record the status of knowledge base ${base.id}: ${(error as Error).message}`);
    });
  }
}

function uriOf(passage: RetrievedPassage): string | null {
  const source = passage.source as { uri?: string | null; url?: string; id?: string };
  return source.uri ?? source.url ?? source.id ?? null;
}

function pageOf(metadata: Record<string, unknown>): number | null {
  const page = metadata["x-amz-bedrock-kb-document-page-number"];
  return typeof page === "number" && Number.isInteger(page) ? page : null;
}
