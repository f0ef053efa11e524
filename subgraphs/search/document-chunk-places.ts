/**
 * `DocumentChunk.headingPath`, `page` and `document { id fileName }` answered by the search
 * subgraph itself, as `Conversation.title` is (conversation-titles.ts): schema.graphql declares
 * them `@shareable` with the knowledge-base subgraph, so a page whose document hits ask only where each passage
 * sits (the web app's search page) needs no `_entities` fetch to the knowledge-base subgraph.
 * That hop cost the search page 15-35 ms of its first results on the embedded database (README,
 * "Keystroke to first results"). The knowledge-base subgraph stays the owner: the fields come
 * from its domain's public search module (`places`), read live for every request under the same
 * visibility rule as its highlights, and any other field still comes from it through the gateway.
 */
import DataLoader from "dataloader";
import type { ChunkPlace } from "../knowledge-base/index.js";
import type { TenantContext } from "../../lib/tenancy/token.js";

export type ChunkPlaceReader = (tenant: TenantContext, ids: readonly string[]) => Promise<Map<string, ChunkPlace>>;

/**
 * One per request (made after the tenant is known): all the page's chunk hits share one
 * statement. null: no chunk the caller may see has this id.
 */
export function createChunkPlaceLoader(read: ChunkPlaceReader, tenant: TenantContext): DataLoader<string, ChunkPlace | null> {
  return new DataLoader<string, ChunkPlace | null>(
    async (ids) => {
      const places = await read(tenant, ids);
      return ids.map((id) => places.get(id.toLowerCase()) ?? null);
    },
    { maxBatchSize: 200 },
  );
}
