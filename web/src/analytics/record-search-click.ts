/**
 * Click-through for the analytics dashboard: when a person opens a hit, the search page tells the
 * API which hit of which search it was (`recordSearchClick`, with the page's `searchId` and the
 * hit's 1-based position in the list). Fire and forget: the link is followed at once, whatever
 * the mutation does, and a failure (offline, rate limited, a search too old) is dropped, never
 * shown: it costs a dashboard one click, never the person their navigation.
 */
import { gql, type ApolloClient, type TypedDocumentNode } from "@apollo/client";

export type SearchItemTypename = "Conversation" | "DocumentChunk" | "KnowledgeBasePassage" | "WebResult" | "SlackMessage" | "LinkedInPost";

/** `SearchItemKind` of each `SearchItem` member. */
const ITEM_KINDS: Record<SearchItemTypename, string> = {
  Conversation: "CONVERSATION",
  DocumentChunk: "DOCUMENT_CHUNK",
  KnowledgeBasePassage: "KNOWLEDGE_BASE_PASSAGE",
  WebResult: "WEB_RESULT",
  SlackMessage: "SLACK_MESSAGE",
  LinkedInPost: "LINKEDIN_POST",
};

export interface SearchClick {
  /** `SearchResult.searchId` of the search the hit came from. */
  searchId: string;
  /** 1 for the first hit of the list (pages loaded later continue the count). */
  position: number;
  item: { __typename: SearchItemTypename; id: string };
}

const RECORD_SEARCH_CLICK: TypedDocumentNode<{ recordSearchClick: { firstClick: boolean } | null }, { input: { searchId: string; position: number; itemId: string; itemKind: string } }> = gql`
  mutation RecordSearchClick($input: RecordSearchClickInput!) {
    recordSearchClick(input: $input) {
      firstClick
    }
  }
`;

/** Sends the click and returns at once; nothing it does can throw or delay the caller. */
export function recordSearchClick(client: ApolloClient, click: SearchClick): void {
  try {
    const itemKind = ITEM_KINDS[click.item.__typename];
    if (!itemKind || !click.searchId || !(click.position >= 1)) return;
    void client
      .mutate({ mutation: RECORD_SEARCH_CLICK, variables: { input: { searchId: click.searchId, position: click.position, itemId: click.item.id, itemKind } }, fetchPolicy: "no-cache", errorPolicy: "ignore" })
      .catch(() => undefined);
  } catch {
    // A click must never fail to open what was clicked.
  }
}
