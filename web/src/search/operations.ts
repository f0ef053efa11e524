/**
 * The search page's operations and the shapes it reads from them. Only the fields the page
 * renders are asked; each hit's item is one of `SearchItem`'s members (supergraph.graphql).
 */
import { gql, type TypedDocumentNode } from "@apollo/client";
import type { HighlightPassage } from "../components/Highlight";

/**
 * What a card shows of a hit's entity, for every kind a search returns: the results list and the
 * answer panel's citations read the same fields (one selection, so a hit cited in the answer is
 * the same cached entity as its card). On SearchHit, a concrete type, so Apollo's cache matches it
 * without a list of the union's members.
 */
export const SEARCH_HIT_ITEM_FIELDS = gql`
  fragment SearchHitItem on SearchHit {
    item {
      __typename
      ... on Conversation {
        id
        title
        createdAt
        updatedAt
        owner {
          id
          name
        }
      }
      ... on DocumentChunk {
        id
        headingPath
        page
        document {
          id
          fileName
          createdAt
          category
          owner {
            id
            name
          }
        }
      }
      ... on KnowledgeBasePassage {
        id
        uri
        page
        knowledgeBase {
          id
          name
        }
      }
      ... on WebResult {
        id
        title
        url
      }
      ... on SlackMessage {
        id
        author
        channelName
        permalink
        postedAt
      }
      ... on LinkedInPost {
        id
        url
        articleTitle
        publishedAt
      }
    }
  }
`;

// What one page of results shows: hits with their highlights, how each provider did, where the
// page ends, "did you mean" and the facet counts of the candidate window.
const SEARCH_RESULT_FIELDS = gql`
  fragment SearchPageResult on SearchResult {
    searchId
    hits {
      score
      ...SearchHitItem
      highlights(limit: 3) {
        text
        matches {
          start
          end
        }
        truncatedBefore
        truncatedAfter
        messageId
        role
      }
    }
    pageInfo {
      hasNextPage
      endCursor
    }
    providers {
      name
      kind
      status
      tookMs
      returned
      error
    }
    suggestion
    weakMatches
    corrections {
      word
      searchedAs
    }
    facets {
      window
      kinds {
        kind
        count
      }
      providers {
        provider
        count
      }
      months {
        month
        from
        to
        count
      }
      categories {
        value
        count
      }
      knowledgeBases {
        value
        count
      }
    }
  }
  ${SEARCH_HIT_ITEM_FIELDS}
`;

export type SearchItemKind = "CONVERSATION" | "DOCUMENT_CHUNK" | "KNOWLEDGE_BASE_PASSAGE" | "WEB_RESULT" | "SLACK_MESSAGE" | "LINKEDIN_POST";
export type SearchSort = "RELEVANCE" | "NEWEST";
export type ProviderStatus = "OK" | "TIMEOUT" | "ERROR" | "SKIPPED";

/** A hit's passage as the Highlight component shows it, and for a conversation the message it is from. */
export interface SearchHighlight extends HighlightPassage {
  messageId: string | null;
  role: string | null;
}

/** A person as the API names them (`User`). */
export interface Person {
  id: string;
  name: string;
}

export type SearchItem =
  | { __typename: "Conversation"; id: string; title: string; createdAt: string; updatedAt: string; owner: Person }
  | { __typename: "DocumentChunk"; id: string; headingPath: string[]; page: number | null; document: { id: string; fileName: string; createdAt: string; category: string | null; owner: Person } }
  | { __typename: "KnowledgeBasePassage"; id: string; uri: string | null; page: number | null; knowledgeBase: { id: string; name: string } | null }
  | { __typename: "WebResult"; id: string; title: string; url: string }
  | { __typename: "SlackMessage"; id: string; author: string | null; channelName: string | null; permalink: string | null; postedAt: string }
  | { __typename: "LinkedInPost"; id: string; url: string; articleTitle: string | null; publishedAt: string };

export interface SearchHit {
  score: number;
  item: SearchItem | null;
  highlights: SearchHighlight[] | null;
}

export interface ProviderReport {
  name: string;
  kind: "KEYWORD" | "SEMANTIC";
  status: ProviderStatus;
  tookMs: number;
  returned: number;
  error: string | null;
}

export interface SearchFacets {
  window: number;
  kinds: { kind: SearchItemKind; count: number }[];
  providers: { provider: string; count: number }[];
  months: { month: string; from: string; to: string; count: number }[];
  categories: { value: string; count: number }[];
  knowledgeBases: { value: string; count: number }[];
}

export interface SearchResultPage {
  /** This search's id, for recording which hit was opened (analytics/record-search-click.ts). */
  searchId: string;
  hits: SearchHit[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  providers: ProviderReport[];
  suggestion: string | null;
  /** Nothing on the list matched the query's words well (the API's relevance floor). */
  weakMatches: boolean;
  /** Each misspelled word of the query and the words searched for it as well, best first. */
  corrections: { word: string; searchedAs: string[] }[];
  facets: SearchFacets | null;
}

export interface SearchInput {
  query: string;
  limit: number;
  alpha?: number;
  after?: string;
  providers?: string[];
  latency?: "LOCAL";
  /** False: search the words only as typed (no corrections, no suggestion). */
  typoTolerance?: boolean;
  /** NEWEST: the best candidates, newest first; left out, best first. */
  sort?: SearchSort;
  filter?: {
    kinds?: SearchItemKind[];
    created?: { from: string; to: string };
    categories?: string[];
    knowledgeBases?: string[];
  };
}

/**
 * The first page, streamed: the LOCAL providers' page (`fast`) arrives at once, the page of every
 * provider (`all`) when the slow ones (web, Slack, remote knowledge bases) answer. docs/search.md: "Slow
 * providers streamed (`@defer`)". `$local` is `$input` plus `latency: LOCAL`.
 */
export const STREAMED_SEARCH: TypedDocumentNode<
  { fast: SearchResultPage | null; all?: SearchResultPage | null },
  { input: SearchInput; local: SearchInput }
> = gql`
  query SearchPageStreamed($input: SearchInput!, $local: SearchInput!) {
    fast: search(input: $local) {
      ...SearchPageResult
    }
    ... @defer(label: "all") {
      all: search(input: $input) {
        ...SearchPageResult
      }
    }
  }
  ${SEARCH_RESULT_FIELDS}
`;

/** A later page of the `all` list: `$input.after` is the previous page's `endCursor`. */
export const NEXT_SEARCH_PAGE: TypedDocumentNode<{ search: SearchResultPage | null }, { input: SearchInput }> = gql`
  query SearchPageNext($input: SearchInput!) {
    search(input: $input) {
      ...SearchPageResult
    }
  }
  ${SEARCH_RESULT_FIELDS}
`;

/** The alpha a search without one uses, to show on the slider. */
export const DEFAULT_ALPHA: TypedDocumentNode<{ searchIndexStatus: { defaultAlpha: { alpha: number } } | null }, Record<string, never>> = gql`
  query SearchPageDefaultAlpha {
    searchIndexStatus {
      defaultAlpha {
        alpha
      }
    }
  }
`;

export type SuggestionSource = "MY_QUERY" | "ORGANIZATION_QUERY" | "CONVERSATION_TITLE" | "DOCUMENT_NAME";

export interface SearchSuggestion {
  text: string;
  source: SuggestionSource;
  /** Where `text` matched what was typed (UTF-16 ranges): the rest is the completion. */
  matches: { start: number; end: number }[];
}

/** Completions for the search box as the user types. */
export const SEARCH_SUGGESTIONS: TypedDocumentNode<{ searchSuggestions: SearchSuggestion[] | null }, { prefix: string; limit: number }> = gql`
  query SearchBoxSuggestions($prefix: String!, $limit: Int!) {
    searchSuggestions(prefix: $prefix, limit: $limit) {
      text
      source
      matches {
        start
        end
      }
    }
  }
`;

/** Names for the knowledge-base facet, whose values are ids (asked only when that facet has values). */
export const KNOWLEDGE_BASE_NAMES: TypedDocumentNode<{ knowledgeBases: { nodes: { id: string; name: string }[] } | null }, Record<string, never>> = gql`
  query SearchFacetKnowledgeBaseNames {
    knowledgeBases(first: 100) {
      nodes {
        id
        name
      }
    }
  }
`;
