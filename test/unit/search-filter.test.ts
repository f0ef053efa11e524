/**
 * The search filter's checks (before any provider sees it), which providers a filter skips and
 * why, and facet counting with the ranges its month values select.
 */
import { describe, expect, it } from "@jest/globals";
import { GraphQLError } from "graphql";
import { hostMatchesSites, monthRange, NO_FILTER } from "../../lib/retrieval/search-filter.js";
import type { TenantContext } from "../../lib/tenancy/token.js";
import { computeFacets } from "../../subgraphs/search/facets.js";
import type { FusedHit } from "../../subgraphs/search/fusion.js";
import { filterIdentity, normalizeFilter } from "../../subgraphs/search/search-filter-input.js";
import { withSites } from "../../subgraphs/external-search/search.js";
import { filterSkipReason } from "../../subgraphs/search/search-service.js";

const ann: TenantContext = { organizationId: "acme", userId: "ann", teamIds: ["blue", "green"], role: "member", userName: null, userEmail: null };

function refusal(run: () => unknown): { field: unknown; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GraphQLError);
    const graphQLError = error as GraphQLError;
    expect(graphQLError.extensions.code).toBe("BAD_USER_INPUT");
    return { field: graphQLError.extensions.field, message: graphQLError.message };
  }
  throw new Error("expected BAD_USER_INPUT");
}

describe("normalizeFilter", () => {
  it("passes no filter through as NO_FILTER, and normalizes lists (deduplicated, sorted, lowercased where stored so)", () => {
    expect(normalizeFilter(null, ann)).toBe(NO_FILTER);
    const filter = normalizeFilter(
      { kinds: ["CONVERSATION", "CONVERSATION", "WEB_RESULT"], teams: ["green", "blue", "green"], formats: ["PDF", "TEXT"], sites: ["Docs.Example.COM.", "example.org"], knowledgeBases: ["0190F1E2-0000-7000-8000-000000000001"] },
      ann,
    );
    expect([...filter.kinds!]).toEqual(["Conversation", "WebResult"]);
    expect(filter.teams).toEqual(["blue", "green"]);
    expect(filter.formats).toEqual(["pdf", "text"]);
    expect(filter.sites).toEqual(["docs.example.com", "example.org"]);
    expect(filter.knowledgeBases).toEqual(["0190f1e2-0000-7000-8000-000000000001"]);
  });

  it("gives the same identity to the same filter written differently, and another to another", () => {
    const a = filterIdentity(normalizeFilter({ categories: ["b", "a"], created: { from: new Date("2026-01-01T00:00:00Z") } }, ann));
    const b = filterIdentity(normalizeFilter({ categories: ["a", "b", "a"], created: { from: new Date("2026-01-01T00:00:00.000Z"), to: null } }, ann));
    const c = filterIdentity(normalizeFilter({ categories: ["a"], created: { from: new Date("2026-01-01T00:00:00Z") } }, ann));
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(c));
  });

  it.each([
    [{ created: { from: new Date("2026-02-01"), to: new Date("2026-01-01") } }, "input.filter.created", /is after `to`/],
    [{ updated: { from: null, to: null } }, "input.filter.updated", /give `from`, `to` or both/],
    [{ teams: ["red"] }, "input.filter.teams", /not a member of team "red".*blue, green/],
    [{ teams: [] }, "input.filter.teams", /at least one value/],
    [{ categories: Array.from({ length: 51 }, (_, i) => String(i)) }, "input.filter.categories", /at most 50 values, got 51/],
    [{ categories: [""] }, "input.filter.categories", /1 to 200 characters, got 0/],
    [{ knowledgeBases: ["kb-1"] }, "input.filter.knowledgeBases", /not a knowledge base id/],
    [{ formats: ["EXE"] }, "input.filter.formats", /unknown format "EXE"/],
    [{ sites: ["example.com:8080"] }, "input.filter.sites", /not a host name/],
    [{ sites: Array.from({ length: 11 }, (_, i) => `s${i}.example.com`) }, "input.filter.sites", /at most 10 sites, got 11/],
    [{ owner: "" }, "input.filter.owner", /1 to 200 characters/],
  ])("refuses %j naming %s", (raw, field, message) => {
    const refused = refusal(() => normalizeFilter(raw, ann));
    expect(refused.field).toBe(field);
    expect(refused.message).toMatch(message);
    expect(refused.message.startsWith(`${field}: `)).toBe(true);
  });

  it("says the same about a team of another organization as about one that does not exist", () => {
    expect(refusal(() => normalizeFilter({ teams: ["globex-blue"] }, ann)).message.replace("globex-blue", "X")).toBe(
      refusal(() => normalizeFilter({ teams: ["no-such-team"] }, ann)).message.replace("no-such-team", "X"),
    );
  });
});

describe("filterSkipReason", () => {
  const conversations = { itemTypes: ["Conversation"], filters: ["created", "updated", "owner"] as const };
  it("calls a provider whose kinds and filters fit, and skips one that would return what the filter excludes", () => {
    expect(filterSkipReason(conversations, NO_FILTER)).toBeNull();
    expect(filterSkipReason(conversations, normalizeFilter({ kinds: ["CONVERSATION"], owner: "bob" }, ann))).toBeNull();
    expect(filterSkipReason(conversations, normalizeFilter({ kinds: ["WEB_RESULT"] }, ann))).toBe("filter.kinds asks for WebResult; this provider returns Conversation");
    expect(filterSkipReason(conversations, normalizeFilter({ categories: ["x"], sites: ["example.com"] }, ann))).toBe(
      "cannot apply filter.categories, filter.sites: skipped rather than return hits the filter excludes",
    );
    // A provider that declares nothing is skipped by any filter, never called with one it ignores.
    expect(filterSkipReason({}, normalizeFilter({ owner: "ann" }, ann))).toMatch(/cannot apply filter\.owner/);
  });
});

describe("facets", () => {
  const hit = (typename: string, id: string, providers: string[]): FusedHit => ({
    key: `${typename}:${id}`,
    ref: { typename, id },
    moreMatches: [],
    score: 1,
    bestRank: 1,
    contributions: providers.map((provider) => ({ provider, kind: "KEYWORD" as const, rank: 1, weight: 1, contribution: 1, nativeScore: 1 })),
  });

  it("counts kinds, providers, months, categories and knowledge bases from the hits' attributes", () => {
    const attributes: Record<string, object> = {
      c1: { createdAt: "2026-10-31T23:59:59.999Z" },
      c2: { createdAt: "2026-11-01T00:00:00.000Z" },
      d1: { createdAt: "2026-11-15T00:00:00.000Z", category: "runbook", knowledgeBaseId: "kb" },
      w1: { site: "example.com" },
    };
    const facets = computeFacets(
      [hit("Conversation", "c1", ["conversations.keyword", "conversations.semantic"]), hit("Conversation", "c2", ["conversations.keyword"]), hit("DocumentChunk", "d1", ["documents.keyword"]), hit("WebResult", "w1", ["web.serper"])],
      (h) => attributes[h.ref.id],
    );
    expect(facets.window).toBe(4);
    expect(facets.kinds).toEqual([{ kind: "CONVERSATION", count: 2 }, { kind: "DOCUMENT_CHUNK", count: 1 }, { kind: "WEB_RESULT", count: 1 }]);
    expect(facets.providers[0]).toEqual({ provider: "conversations.keyword", count: 2 });
    expect(facets.months.map((m) => [m.month, m.count])).toEqual([["2026-11", 2], ["2026-10", 1]]);
    expect(facets.categories).toEqual([{ value: "runbook", count: 1 }]);
    expect(facets.knowledgeBases).toEqual([{ value: "kb", count: 1 }]);
  });

  it("gives each month the inclusive range of its first and last millisecond, leap years included", () => {
    expect(monthRange("2026-10")).toEqual({ from: new Date("2026-10-01T00:00:00.000Z"), to: new Date("2026-10-31T23:59:59.999Z") });
    expect(monthRange("2028-02").to).toEqual(new Date("2028-02-29T23:59:59.999Z"));
    expect(monthRange("2026-12").to).toEqual(new Date("2026-12-31T23:59:59.999Z"));
  });
});

describe("sites", () => {
  it("become Google site: operators, and only the sites' hosts and subdomains match", () => {
    expect(withSites("kafka lag", null)).toBe("kafka lag");
    expect(withSites("kafka lag", ["example.com"])).toBe("kafka lag site:example.com");
    expect(withSites("kafka lag", ["a.com", "b.org"])).toBe("kafka lag (site:a.com OR site:b.org)");
    expect(hostMatchesSites("docs.example.com", ["example.com"])).toBe(true);
    expect(hostMatchesSites("example.com", ["example.com"])).toBe(true);
    expect(hostMatchesSites("notexample.com", ["example.com"])).toBe(false);
    expect(hostMatchesSites("example.com.evil.net", ["example.com"])).toBe(false);
  });
});
