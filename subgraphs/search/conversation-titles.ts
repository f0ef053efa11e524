/**
 * `Conversation.title` answered by the search subgraph itself. schema.graphql declares
 * `SearchHit.item @provides(fields: "... on Conversation { title } ...")`, so a query planner that
 * needs nothing else of a conversation hit reads the title from this subgraph's answer and skips
 * the `_entities` fetch to the conversations subgraph (issue 12: that second hop cost the gateway
 * path about a third of its throughput). The conversations subgraph stays the owner: the title
 * comes from its domain's public search module (`titles`), read live for every request, even when
 * the page itself came from the result cache, so a rename shows at once; any other field still
 * comes from the owner through the gateway.
 */
import DataLoader from "dataloader";
import type { TenantContext } from "../../lib/tenancy/token.js";

export type ConversationTitleReader = (tenant: TenantContext, ids: readonly string[]) => Promise<Map<string, string>>;

/**
 * One per request (made after the tenant is known): all the page's conversation hits (and a
 * saved search run's `newHits`, which repeat them) share one statement. null: no live
 * conversation of the caller's organization has this id.
 */
export function createConversationTitleLoader(read: ConversationTitleReader, tenant: TenantContext): DataLoader<string, string | null> {
  return new DataLoader<string, string | null>(
    async (ids) => {
      const titles = await read(tenant, ids);
      return ids.map((id) => titles.get(id.toLowerCase()) ?? null);
    },
    // A page holds at most 100 hits, and newHits repeats them: one batch covers both.
    { maxBatchSize: 200 },
  );
}
