/**
 * The saved-search operations the app sends (search subgraph), and the shapes it reads back.
 * One place, so the search page's "Save this search" and the saved-searches page ask for the
 * same fields and the normalized cache (SavedSearch by id) stays whole.
 */
import { gql } from "@apollo/client";
import type { TypedDocumentNode } from "@apollo/client";
import type { QueryCorrection } from "../components/AlsoSearched";
import type { HighlightPassage } from "../components/Highlight";
import type { SavedFilter, SearchInputToSave } from "../search/search-url";

export interface SavedSearchFields {
  __typename: "SavedSearch";
  id: string;
  name: string;
  query: string;
  alpha: number;
  providers: string[] | null;
  filter: SavedFilter | null;
  typoTolerance: boolean;
  createdAt: string;
  lastRunAt: string | null;
}

/** The fields every list row and every mutation answer carries, so the cache never holds half a row. */
export const SAVED_SEARCH_FIELDS = gql`
  fragment SavedSearchFields on SavedSearch {
    id
    name
    query
    alpha
    providers
    filter {
      kinds
      created {
        from
        to
      }
      updated {
        from
        to
      }
      owner
      teams
      knowledgeBases
      categories
      formats
      sites
    }
    typoTolerance
    createdAt
    lastRunAt
  }
`;

/** Enough for a person's list: the server allows 100 per user (MAX_SAVED_SEARCHES_PER_USER). */
export const SAVED_SEARCHES_PAGE_SIZE = 100;

export const SAVED_SEARCHES: TypedDocumentNode<{ savedSearches: { nodes: SavedSearchFields[] } | null }, { first: number }> = gql`
  query SavedSearches($first: Int!) {
    savedSearches(first: $first) {
      nodes {
        ...SavedSearchFields
      }
    }
  }
  ${SAVED_SEARCH_FIELDS}
`;

export interface SaveSearchVariables {
  input: { name: string } & SearchInputToSave;
}

export const SAVE_SEARCH: TypedDocumentNode<{ saveSearch: SavedSearchFields | null }, SaveSearchVariables> = gql`
  mutation SaveSearch($input: SaveSearchInput!) {
    saveSearch(input: $input) {
      ...SavedSearchFields
    }
  }
  ${SAVED_SEARCH_FIELDS}
`;

export const RENAME_SAVED_SEARCH: TypedDocumentNode<{ renameSavedSearch: SavedSearchFields | null }, { id: string; name: string }> = gql`
  mutation RenameSavedSearch($id: ID!, $name: String!) {
    renameSavedSearch(id: $id, name: $name) {
      ...SavedSearchFields
    }
  }
  ${SAVED_SEARCH_FIELDS}
`;

export const DELETE_SAVED_SEARCH: TypedDocumentNode<{ deleteSavedSearch: { id: string } | null }, { id: string }> = gql`
  mutation DeleteSavedSearch($id: ID!) {
    deleteSavedSearch(id: $id) {
      id
    }
  }
`;

/** The default alpha of this deployment: what a search without one ran with, so saving it keeps its ranking. */
export const DEFAULT_ALPHA: TypedDocumentNode<{ searchIndexStatus: { defaultAlpha: { alpha: number } } | null }, Record<string, never>> = gql`
  query SearchDefaultAlpha {
    searchIndexStatus {
      defaultAlpha {
        alpha
      }
    }
  }
`;

/** A run hit's passage: exactly what the shared Highlight component shows. */
export type HitHighlight = HighlightPassage;

export type HitItem =
  | { __typename: "Conversation"; id: string; title: string }
  | { __typename: "DocumentChunk"; id: string; headingPath: string[]; document: { id: string; fileName: string } }
  | { __typename: "KnowledgeBasePassage"; id: string; uri: string | null }
  | { __typename: "WebResult"; id: string; url: string; title: string }
  | { __typename: "SlackMessage"; id: string; channelName: string | null; permalink: string | null }
  | { __typename: "LinkedInPost"; id: string; url: string };

export interface RunHit {
  score: number;
  item: HitItem | null;
  highlights: HitHighlight[] | null;
}

export interface SavedSearchRunData {
  runSavedSearch: {
    savedSearch: SavedSearchFields;
    result: { hits: RunHit[]; providers: { name: string; status: string; error: string | null }[]; corrections: QueryCorrection[] };
    newHits: RunHit[];
  } | null;
}

const RUN_HIT_FIELDS = gql`
  fragment SavedSearchRunHit on SearchHit {
    score
    item {
      __typename
      ... on Conversation {
        id
        title
      }
      ... on DocumentChunk {
        id
        headingPath
        document {
          id
          fileName
        }
      }
      ... on KnowledgeBasePassage {
        id
        uri
      }
      ... on WebResult {
        id
        url
        title
      }
      ... on SlackMessage {
        id
        channelName
        permalink
      }
      ... on LinkedInPost {
        id
        url
      }
    }
    highlights(limit: 1) {
      text
      matches {
        start
        end
      }
      truncatedBefore
      truncatedAfter
    }
  }
`;

/** A mutation: a run moves `lastRunAt` and remembers this page for the next run's `newHits`. */
export const RUN_SAVED_SEARCH: TypedDocumentNode<SavedSearchRunData, { id: string; limit: number }> = gql`
  mutation RunSavedSearch($id: ID!, $limit: Int!) {
    runSavedSearch(id: $id, limit: $limit) {
      savedSearch {
        ...SavedSearchFields
      }
      result {
        hits {
          ...SavedSearchRunHit
        }
        providers {
          name
          status
          error
        }
        corrections {
          word
          searchedAs
        }
      }
      newHits {
        ...SavedSearchRunHit
      }
    }
  }
  ${SAVED_SEARCH_FIELDS}
  ${RUN_HIT_FIELDS}
`;
