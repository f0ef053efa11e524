/**
 * Rate limits for calls that reach a subgraph without passing the gateway. The gateway charges
 * every request it admits (rate-limit.ts) and signs each subgraph call it makes; a call that is not
 * signed came from somewhere else (a client that found the subgraph's port, another team's
 * router), and was charged by nobody. Without this, 50 aliased searches sent straight to the
 * search subgraph cost their sender nothing and everyone else that subgraph's CPU (issue 19: a
 * victim's p50 23 times its unattacked value).
 *
 * Such a call spends the same budgets, by the same rule, as the gateway would have charged it:
 * 1 point, plus 1 per 64 KiB of body, plus 1 per 100 of the operation's estimated cost (so each
 * aliased `search` costs what a search costs), from the caller's user and organization budgets
 * (the same counters as the gateway's when Redis is shared) or its address's anonymous budget. A
 * deployment without SUBGRAPH_SIGNING_SECRET cannot tell the gateway's calls apart: they are
 * charged again here, which halves what each budget buys; set the secret (production should).
 */
import { parse, type DocumentNode, type GraphQLSchema } from "graphql";
import type { TokenSettings } from "../tenancy/token.js";
import { checkDocument, type OperationLimits } from "./operation-limits.js";
import { bodyPoints, callerOf, COST_PER_POINT, type RateLimitRejection, type RequestRateLimiter } from "./rate-limit.js";

export interface DirectCall {
  /** The parsed JSON body (one request or a batch), or undefined for a GET. */
  body: unknown;
  searchParams: URLSearchParams;
  bodyBytes: number;
  authorization: string | undefined;
  clientAddress: string;
}

export class DirectCallBudget {
  constructor(
    private readonly limiter: RequestRateLimiter,
    private readonly auth: TokenSettings,
    private readonly limits: OperationLimits,
    private readonly schema: GraphQLSchema,
  ) {}

  /** Spends what the call costs; the rejection when a budget is spent, null when it may go on. */
  async charge(call: DirectCall): Promise<RateLimitRejection | null> {
    const points = 1 + bodyPoints(call.bodyBytes) + Math.floor(this.estimatedCost(call) / COST_PER_POINT);
    return this.limiter.consume(await callerOf(call.authorization, this.auth), call.clientAddress, points);
  }

  /** Resolves once the shared counters are reachable (at most a second; they work either way). */
  async ready(): Promise<void> {
    await this.limiter.ready(1_000);
  }

  async close(): Promise<void> {
    await this.limiter.close();
  }

  /**
   * The summed cost of the call's operations. The body's tokens are already within the limits
   * (requestOverLimits ran first), so parsing is bounded; a document that does not parse or is
   * over a limit costs nothing here, because Apollo refuses it before anything runs.
   */
  private estimatedCost(call: DirectCall): number {
    const requests: { query?: unknown; variables?: unknown }[] = [];
    if (call.body && typeof call.body === "object") requests.push(...(Array.isArray(call.body) ? call.body : [call.body]));
    else if (call.searchParams.has("query")) requests.push({ query: call.searchParams.get("query"), variables: parseJson(call.searchParams.get("variables")) });
    let cost = 0;
    for (const request of requests) {
      if (!request || typeof request !== "object" || typeof request.query !== "string") continue;
      let document: DocumentNode;
      try {
        document = parse(request.query, { maxTokens: this.limits.maxTokens });
        const variables = request.variables && typeof request.variables === "object" && !Array.isArray(request.variables) ? (request.variables as Record<string, unknown>) : null;
        cost += checkDocument(document, this.limits, this.schema, variables).cost;
      } catch {
        continue;
      }
    }
    return cost;
  }
}

function parseJson(text: string | null): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
