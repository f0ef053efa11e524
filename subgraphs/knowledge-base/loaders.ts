/**
 * Per-request DataLoaders of the knowledge-base subgraph, created with the request's tenant
 * baked in: their caches never cross requests, organizations or users. Every batch is one
 * scope-checked SQL statement (the store filters by organization and access scope).
 */
import DataLoader from "dataloader";
import { isUuid } from "../../lib/graphql/pagination.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import type { Document, DocumentChunk, DocumentStore } from "./document-store.js";

export interface DocumentLoaders {
  documentById: DataLoader<string, Document | null>;
  chunkById: DataLoader<string, DocumentChunk | null>;
  /** By content hash: the newest SAME_CONTENT_PER_HASH documents with it that the caller may see (`Document.sameContent`). */
  documentsByContentHash: DataLoader<string, Document[]>;
}

/** `Document.sameContent` lists at most 20 others; one more makes room for the document itself. */
export const SAME_CONTENT_PER_HASH = 21;

export function createDocumentLoaders(store: DocumentStore, tenant: TenantContext): DocumentLoaders {
  // An id that is not a UUID cannot exist; asking PostgreSQL would only raise a cast error.
  const byIds =
    <T extends { id: string }>(load: (ids: string[]) => Promise<T[]>) =>
    async (ids: readonly string[]): Promise<(T | null)[]> => {
      const valid = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
      const rows = valid.length > 0 ? await load(valid) : [];
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
    };
  return {
    documentById: new DataLoader(byIds((ids) => store.findByIds(tenant, ids)), { maxBatchSize: 1000 }),
    chunkById: new DataLoader(byIds((ids) => store.findChunksByIds(tenant, ids)), { maxBatchSize: 1000 }),
    documentsByContentHash: new DataLoader(
      async (hashes: readonly string[]) => {
        const rows = await store.withContentHashes(tenant, hashes, SAME_CONTENT_PER_HASH);
        return hashes.map((hash) => rows.filter((row) => row.contentHash === hash));
      },
      { maxBatchSize: 1000 },
    ),
  };
}
