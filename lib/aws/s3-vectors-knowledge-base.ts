/**
 * Querying a knowledge base that lives in an organization's own S3 Vectors index
 * (`QueryVectors` of @aws-sdk/client-s3vectors): the query's embedding in, the nearest vectors'
 * passages out, similarity = 1 − cosine distance.
 *
 * Unlike the S3 Vectors *store* (s3-vectors-store.ts, where we write and so know the layout),
 * these indexes are filled by someone else: by Bedrock (which puts the passage text under
 * `AMAZON_BEDROCK_TEXT` and its source under `x-amz-bedrock-kb-source-uri`) or by the
 * organization's own pipeline (commonly `text` / `source`). The text and the source are read
 * from the first of those keys that holds a string; a vector without text is dropped, since it
 * gives a reader nothing. The index must hold vectors of the embedding model this deployment
 * runs (the knowledge base's `embeddingModel` says which; the caller checks it).
 */
import { QueryVectorsCommand, S3VectorsClient } from "@aws-sdk/client-s3vectors";
import type { AwsCredentialIdentityProvider } from "@smithy/types";
import { AwsBackendError, deadlineSignal, toAwsBackendError } from "./errors.js";

/** S3 Vectors' upper bound for `topK`. */
export const MAX_TOP_K = 100;
/** Bucket names: 3-63 lower-case letters, digits and hyphens; index names may also hold dots. */
const BUCKET = /^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/;
const INDEX = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z]{2}(?:-[a-z]+)+-\d$/;

/** Where the passage text may be, in the order tried (Bedrock's key first). */
export const TEXT_KEYS = ["AMAZON_BEDROCK_TEXT", "AMAZON_BEDROCK_TEXT_CHUNK", "text", "content", "chunk"] as const;
/** Where its source may be. */
export const SOURCE_KEYS = ["x-amz-bedrock-kb-source-uri", "source", "uri", "url"] as const;
const PAGE_KEYS = ["x-amz-bedrock-kb-document-page-number", "page"] as const;

export interface S3VectorsQueryRequest {
  bucket: string;
  index: string;
  region: string;
  vector: number[];
  topK: number;
  credentials: AwsCredentialIdentityProvider;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** For stand-ins and VPC endpoints. */
  endpoint?: string | undefined;
}

export interface S3VectorsPassage {
  /** The vector's key in the index. */
  key: string;
  text: string;
  /** 1 − cosine distance: 1 is the same direction. */
  score: number;
  uri: string | null;
  page: number | null;
}

export async function queryS3VectorsKnowledgeBase(request: S3VectorsQueryRequest): Promise<S3VectorsPassage[]> {
  const { bucket, index, region } = request;
  if (!BUCKET.test(bucket)) throw new AwsBackendError("BAD_REQUEST", `"${bucket.slice(0, 70)}" is not an S3 Vectors bucket name (3-63 lower-case letters, digits and hyphens)`);
  if (!INDEX.test(index)) throw new AwsBackendError("BAD_REQUEST", `"${index.slice(0, 70)}" is not an S3 Vectors index name (3-63 lower-case letters, digits, hyphens and dots)`);
  if (!REGION.test(region)) throw new AwsBackendError("BAD_REQUEST", `"${region.slice(0, 40)}" is not an AWS region (e.g. us-east-1)`);
  const topK = Math.min(MAX_TOP_K, Math.max(1, Math.floor(request.topK)));
  const what = `S3 Vectors index ${bucket}/${index} (${region})`;
  // One attempt, as for Bedrock: a search's deadline is better served by RATE_LIMITED now than by backoff.
  const client = new S3VectorsClient({ region, credentials: request.credentials, maxAttempts: 1, ...(request.endpoint ? { endpoint: request.endpoint } : {}) });
  const signal = deadlineSignal(request.timeoutMs, request.signal);
  try {
    const output = await client.send(
      new QueryVectorsCommand({ vectorBucketName: bucket, indexName: index, topK, queryVector: { float32: request.vector }, returnMetadata: true, returnDistance: true }),
      { abortSignal: signal },
    );
    const passages: S3VectorsPassage[] = [];
    for (const match of (output.vectors ?? []).slice(0, topK)) {
      const metadata = (match.metadata ?? {}) as Record<string, unknown>;
      const text = firstString(metadata, TEXT_KEYS);
      if (!text || typeof match.key !== "string") continue;
      const distance = typeof match.distance === "number" && Number.isFinite(match.distance) ? match.distance : 1;
      passages.push({ key: match.key, text, score: 1 - distance, uri: firstString(metadata, SOURCE_KEYS), page: firstPage(metadata) });
    }
    return passages;
  } catch (error) {
    throw toAwsBackendError(error, what, signal.aborted);
  } finally {
    client.destroy();
  }
}

function firstString(metadata: Record<string, unknown>, keys: readonly string[]): string | null {
  for (const key of keys) {
    const value = metadata[key];
    if (typeof value === "string" && value.trim().length > 0) return value;
  }
  return null;
}

function firstPage(metadata: Record<string, unknown>): number | null {
  for (const key of PAGE_KEYS) {
    const value = metadata[key];
    const page = typeof value === "string" && /^\d{1,6}$/.test(value) ? Number(value) : value;
    if (typeof page === "number" && Number.isInteger(page) && page >= 0 && page < 1_000_000) return page;
  }
  return null;
}
