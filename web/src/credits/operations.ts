/**
 * The credits page's one operation (external-search subgraph). `credits` is asked twice under
 * two names: `month` for the budget, spent and balance, which every member may read, and
 * `period` for the usage by day and provider, which needs the admin role. A member's FORBIDDEN
 * on `period.usage` then nulls `period` only (usage is non-null, so its error reaches the
 * nearest nullable field), and the month's figures still arrive.
 */
import { gql } from "@apollo/client";
import type { TypedDocumentNode } from "@apollo/client";

export type ExternalProvider = "SERPER" | "PERPLEXITY" | "DATAFORSEO" | "SLACK" | "LINKEDIN";

export interface CreditUsage {
  day: string;
  provider: ExternalProvider;
  calls: number;
  credits: number;
}

export interface CreditsData {
  month: { monthlyBudget: number | null; spentThisMonth: number; balance: number | null } | null;
  period: { usage: CreditUsage[] } | null;
}

export const CREDITS: TypedDocumentNode<CreditsData, { from: string; to: string }> = gql`
  query Credits($from: DateTime!, $to: DateTime!) {
    month: credits {
      monthlyBudget
      spentThisMonth
      balance
    }
    period: credits(from: $from, to: $to) {
      usage {
        day
        provider
        calls
        credits
      }
    }
  }
`;
