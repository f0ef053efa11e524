/**
 * The search box's analytics (`searchAnalytics`, admins only; a member gets FORBIDDEN): the
 * dashboard's `SearchAnalyticsDashboard` for a relative range, and `SearchAnalyticsDrillDown` for
 * the searches of one query in that range, with only the fields they render.
 */
import { gql, type TypedDocumentNode } from "@apollo/client";

export const RELATIVE_RANGES = [
  { value: "LAST_24_HOURS", label: "Last 24 hours" },
  { value: "LAST_7_DAYS", label: "Last 7 days" },
  { value: "LAST_30_DAYS", label: "Last 30 days" },
] as const;

export type RelativeRange = (typeof RELATIVE_RANGES)[number]["value"];
export const DEFAULT_RELATIVE_RANGE: RelativeRange = "LAST_7_DAYS";

export function relativeRangeOf(value: string | null): RelativeRange {
  return RELATIVE_RANGES.find((range) => range.value === value)?.value ?? DEFAULT_RELATIVE_RANGE;
}

export function relativeRangeLabel(value: RelativeRange): string {
  return RELATIVE_RANGES.find((range) => range.value === value)!.label;
}

export interface SearchQueryStats {
  query: string;
  searches: number;
  searchesWithClicks: number;
  clicks: number;
  clickThroughRate: number;
  averageClickPosition: number | null;
  noResultSearches: number;
}

export interface SearchAnalytics {
  from: string;
  to: string;
  totalSearches: number;
  noResultSearches: number;
  searchesWithClicks: number;
  clicks: number;
  clickThroughRate: number;
  averageClickPosition: number | null;
  topSearches: SearchQueryStats[];
  noResultQueries: { query: string; searches: number }[];
  searchesPerDay: { day: string; searches: number; noResultSearches: number; searchesWithClicks: number }[];
  providers: { provider: string; calls: number; failedCalls: number; latencyP50Ms: number; latencyP95Ms: number }[];
}

export const SEARCH_ANALYTICS_DASHBOARD: TypedDocumentNode<{ searchAnalytics: SearchAnalytics | null }, { relative: RelativeRange }> = gql`
  query SearchAnalyticsDashboard($relative: RelativeRange!) {
    searchAnalytics(range: { relative: $relative }) {
      from
      to
      totalSearches
      noResultSearches
      searchesWithClicks
      clicks
      clickThroughRate
      averageClickPosition
      topSearches {
        query
        searches
        searchesWithClicks
        clicks
        clickThroughRate
        averageClickPosition
        noResultSearches
      }
      noResultQueries {
        query
        searches
      }
      searchesPerDay {
        day
        searches
        noResultSearches
        searchesWithClicks
      }
      providers {
        provider
        calls
        failedCalls
        latencyP50Ms
        latencyP95Ms
      }
    }
  }
`;

export interface LoggedSearch {
  searchId: string;
  at: string;
  query: string;
  user: { id: string; name: string | null };
  results: number;
  tookMs: number;
  cached: boolean;
  clicks: { position: number; itemKind: string; itemId: string; at: string }[];
}

export const SEARCH_ANALYTICS_DRILL_DOWN: TypedDocumentNode<{ searchAnalytics: { searches: LoggedSearch[] } | null }, { relative: RelativeRange; query: string }> = gql`
  query SearchAnalyticsDrillDown($relative: RelativeRange!, $query: String!) {
    searchAnalytics(range: { relative: $relative }) {
      searches(query: $query, first: 50) {
        searchId
        at
        query
        user {
          id
          name
        }
        results
        tookMs
        cached
        clicks {
          position
          itemKind
          itemId
          at
        }
      }
    }
  }
`;
