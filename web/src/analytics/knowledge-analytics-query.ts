/**
 * The dashboard's one operation, `KnowledgeAnalyticsDashboard`: the organization's knowledge
 * queries over a range (admins only; a member gets FORBIDDEN), with only the fields it renders.
 */
import { gql, type TypedDocumentNode } from "@apollo/client";

export interface QueryCount {
  query: string;
  count: number;
}

export interface QueriesOnDay {
  day: string;
  queries: number;
  zeroResultQueries: number;
  failedQueries: number;
}

export interface ProviderUsage {
  provider: string;
  queries: number;
  failedQueries: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  latencyP99Ms: number;
}

export interface KnowledgeBaseUsage {
  knowledgeBaseId: string | null;
  knowledgeBase: { id: string; name: string } | null;
  queries: number;
  zeroResultQueries: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  latencyP99Ms: number;
}

export interface KnowledgeAnalytics {
  totalQueries: number;
  topQueries: QueryCount[];
  zeroResultQueries: QueryCount[];
  queriesPerDay: QueriesOnDay[];
  providers: ProviderUsage[];
  knowledgeBases: KnowledgeBaseUsage[];
}

export interface KnowledgeAnalyticsDashboardData {
  knowledgeAnalytics: KnowledgeAnalytics | null;
}

export interface KnowledgeAnalyticsDashboardVariables {
  from: string;
  to: string;
}

export const KNOWLEDGE_ANALYTICS_DASHBOARD: TypedDocumentNode<KnowledgeAnalyticsDashboardData, KnowledgeAnalyticsDashboardVariables> = gql`
  query KnowledgeAnalyticsDashboard($from: DateTime!, $to: DateTime!) {
    knowledgeAnalytics(from: $from, to: $to) {
      totalQueries
      topQueries {
        query
        count
      }
      zeroResultQueries {
        query
        count
      }
      queriesPerDay {
        day
        queries
        zeroResultQueries
        failedQueries
      }
      providers {
        provider
        queries
        failedQueries
        latencyP50Ms
        latencyP95Ms
        latencyP99Ms
      }
      knowledgeBases {
        knowledgeBaseId
        knowledgeBase {
          id
          name
        }
        queries
        zeroResultQueries
        latencyP50Ms
        latencyP95Ms
        latencyP99Ms
      }
    }
  }
`;

/** What a knowledge base row is called: its name, or why it has none. */
export function knowledgeBaseLabel(usage: KnowledgeBaseUsage): string {
  if (usage.knowledgeBase) return usage.knowledgeBase.name;
  return usage.knowledgeBaseId ? `Deleted knowledge base ${usage.knowledgeBaseId.slice(0, 8)}` : "Members' own documents";
}
