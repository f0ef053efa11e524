/**
 * `Conversation.title` answered by the search subgraph itself. schema.graphql declares
 * `SearchHit.item @provides(fields: "... on Conversation { title }")`, so a query planner that
 * needs nothing else of a conversation hit reads the title from this subgraph's answer and skips
 * the `_entities` fetch to the conversations subgraph (issue 12: that second hop cost the gateway
 * path about a third of its throughput). The conversations subgraph stays the owner: the title
 * comes from its domain's public search module (`titles`), read live for every request, even when
 * the page itself came from the result cache, so a rename shows at once; any other field still
 * comes from the owner through the gateway.
 */
import DataLoader from "dataloader";
import { Kind, type FieldNode, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from "graphql";
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

// Fragments nest only as deep as the operation limits let a document nest; this bounds a cycle
// the validator would have rejected anyway, so a bug cannot become a stack overflow.
const MAX_FRAGMENT_DEPTH = 32;

// graphql-js hands every hit of a page the same fieldNodes array, so the answer is worked out once per page.
const answered = new WeakMap<readonly FieldNode[], boolean>();

/** Whether the client's selection on this `item` field asks for a Conversation's `title` (inline fragments and named fragments included). */
export function selectsConversationTitle(info: GraphQLResolveInfo): boolean {
  let selects = answered.get(info.fieldNodes);
  if (selects === undefined) {
    selects = info.fieldNodes.some((node: FieldNode) => node.selectionSet !== undefined && selectsTitle(node.selectionSet, info.fragments, 0));
    answered.set(info.fieldNodes, selects);
  }
  return selects;
}

function selectsTitle(selectionSet: SelectionSetNode, fragments: Record<string, FragmentDefinitionNode>, depth: number): boolean {
  if (depth > MAX_FRAGMENT_DEPTH) return false;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      // A field straight on the union can only be __typename; a field named title here would be invalid.
      continue;
    }
    const typeCondition = selection.kind === Kind.INLINE_FRAGMENT ? selection.typeCondition?.name.value : fragments[selection.name.value]?.typeCondition.name.value;
    const inner = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments[selection.name.value]?.selectionSet;
    if (!inner) continue;
    // Untyped inline fragments (`... @include(if: $x) { … }`) and `... on SearchItem` hold more of the same.
    if (typeCondition === undefined || typeCondition === "SearchItem") {
      if (selectsTitle(inner, fragments, depth + 1)) return true;
    } else if (typeCondition === "Conversation" && conversationSelectsTitle(inner, fragments, depth + 1)) {
      return true;
    }
  }
  return false;
}

function conversationSelectsTitle(selectionSet: SelectionSetNode, fragments: Record<string, FragmentDefinitionNode>, depth: number): boolean {
  if (depth > MAX_FRAGMENT_DEPTH) return false;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === "title") return true;
      continue;
    }
    const inner = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments[selection.name.value]?.selectionSet;
    if (inner && conversationSelectsTitle(inner, fragments, depth + 1)) return true;
  }
  return false;
}
