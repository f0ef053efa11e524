/**
 * Retrieval from an AWS Bedrock knowledge base (`RetrieveCommand` of
 * @aws-sdk/client-bedrock-agent-runtime): a query in, passages with scores and where they came
 * from out. Bedrock does the embedding and the vector (or hybrid) search in the customer's
 * account; we bound what we send, map what comes back to one shape whatever the data source
 * (S3, web crawler, custom), and turn every failure into an AwsBackendError with a provider
 * status (see errors.ts).
 *
 * The SDK's own retries are off by default (`maxAttempts` 1): a search fans out under one
 * deadline, and a throttled call is better reported as RATE_LIMITED (retryable) at once than
 * retried with backoff past that deadline.
 */
import { BedrockAgentRuntimeClient, RetrieveCommand } from "@aws-sdk/client-bedrock-agent-runtime";
import type { KnowledgeBaseRetrievalResult, RetrievalFilter, SearchType } from "@aws-sdk/client-bedrock-agent-runtime";
import type { AwsCredentialIdentityProvider } from "@smithy/types";
import { AwsBackendError, deadlineSignal, toAwsBackendError } from "./errors.js";

/** Bedrock refuses longer queries (its documented limit on `retrievalQuery.text`). */
export const MAX_QUERY_CHARACTERS = 1000;
/** Bedrock's upper bound for `numberOfResults`. */
export const MAX_RESULTS = 100;
const KNOWLEDGE_BASE_ID = /^[0-9a-zA-Z]{10}$/;
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d$/;

export type BedrockSearchType = "HYBRID" | "SEMANTIC";

export interface BedrockRetrieveRequest {
  knowledgeBaseId: string;
  region: string;
  query: string;
  numberOfResults: number;
  /** Bedrock's metadata filter, as its API takes it (`{ equals: { key, value } }`, `andAll`, …). */
  filter?: RetrievalFilter | undefined;
  /** Bedrock's default (absent) lets the vector store choose. */
  searchType?: BedrockSearchType | undefined;
  credentials: AwsCredentialIdentityProvider;
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  /** For stand-ins and VPC endpoints; normally Bedrock's regional endpoint. */
  endpoint?: string | undefined;
  /** SDK attempts per call. Default 1 (see the file's header). */
  maxAttempts?: number | undefined;
}

export type PassageSource =
  | { type: "s3"; uri: string }
  | { type: "web"; url: string }
  | { type: "custom"; id: string }
  /** Confluence, SharePoint, Salesforce, … : the location's type as Bedrock names it, and its address when it has one. */
  | { type: string; uri: string | null };

export interface RetrievedPassage {
  text: string;
  /** Bedrock's relevance score (higher is better; its scale depends on the vector store). */
  score: number;
  source: PassageSource;
  metadata: Record<string, unknown>;
}

export async function retrieve(request: BedrockRetrieveRequest): Promise<RetrievedPassage[]> {
  const { knowledgeBaseId, region } = request;
  if (!KNOWLEDGE_BASE_ID.test(knowledgeBaseId)) throw new AwsBackendError("BAD_REQUEST", `"${knowledgeBaseId.slice(0, 40)}" is not a Bedrock knowledge base id (10 letters and digits)`);
  if (!REGION.test(region)) throw new AwsBackendError("BAD_REQUEST", `"${region.slice(0, 40)}" is not an AWS region (e.g. us-east-1)`);
  const query = request.query.trim();
  if (query.length === 0) throw new AwsBackendError("BAD_REQUEST", "the query is empty");
  const numberOfResults = Math.min(MAX_RESULTS, Math.max(1, Math.floor(request.numberOfResults)));
  const what = `Bedrock knowledge base ${knowledgeBaseId} (${region})`;

  const client = new BedrockAgentRuntimeClient({
    region,
    credentials: request.credentials,
    maxAttempts: request.maxAttempts ?? 1,
    ...(request.endpoint ? { endpoint: request.endpoint } : {}),
  });
  const signal = deadlineSignal(request.timeoutMs, request.signal);
  try {
    const output = await client.send(
      new RetrieveCommand({
        knowledgeBaseId,
        // Cut at a code point boundary: a lone surrogate would make Bedrock refuse the whole query.
        retrievalQuery: { text: Array.from(query).slice(0, MAX_QUERY_CHARACTERS).join("") },
        retrievalConfiguration: {
          vectorSearchConfiguration: {
            numberOfResults,
            ...(request.searchType ? { overrideSearchType: request.searchType satisfies SearchType } : {}),
            ...(request.filter ? { filter: request.filter } : {}),
          },
        },
      }),
      { abortSignal: signal },
    );
    return (output.retrievalResults ?? []).slice(0, numberOfResults).map(toPassage);
  } catch (error) {
    throw toAwsBackendError(error, what, signal.aborted);
  } finally {
    client.destroy();
  }
}

function toPassage(result: KnowledgeBaseRetrievalResult): RetrievedPassage {
  return {
    text: result.content?.text ?? "",
    score: typeof result.score === "number" && Number.isFinite(result.score) ? result.score : 0,
    source: sourceOf(result),
    metadata: { ...(result.metadata ?? {}) },
  };
}

function sourceOf(result: KnowledgeBaseRetrievalResult): PassageSource {
  const location = result.location;
  if (location?.s3Location?.uri) return { type: "s3", uri: location.s3Location.uri };
  if (location?.webLocation?.url) return { type: "web", url: location.webLocation.url };
  if (location?.customDocumentLocation?.id) return { type: "custom", id: location.customDocumentLocation.id };
  const type = (location?.type ?? "UNKNOWN").toLowerCase();
  const other =
    location?.confluenceLocation?.url ??
    location?.sharePointLocation?.url ??
    location?.salesforceLocation?.url ??
    location?.kendraDocumentLocation?.uri ??
    null;
  return { type, uri: other };
}
