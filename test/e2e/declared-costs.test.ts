/**
 * What each field costs is declared in its subgraph's schema with Federation's demand-control
 * directives (`@cost`, `@listSize`; the cost spec Apollo Router, Hive Gateway and Hive Router
 * read), and that declaration is what is enforced: at the gateway before the query planner, on
 * the composed supergraph, and at the owning subgraph for a call straight to it, on its own
 * schema. With the cost limit at its floor (100), every costed field is refused on both paths
 * with the same measured cost, computed from the directives alone.
 *
 * The table below must name every field that carries `@cost` or `@listSize` in the subgraphs'
 * SDL: a field annotated later without a row here fails the first test.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Kind, parse, type ConstDirectiveNode } from "graphql";
import { INCREMENTAL_PART_COST } from "../../lib/graphql/operation-limits.js";
import { graphql } from "../support/graphql.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

const MAX_COST = 100;

/** [coordinate, owning subgraph, one copy of a query that selects it, the cost of that copy]. */
const costed: [string, string, string, number][] = [
  ["Query.search", "search", `search(input: { query: "x" }) { cached }`, 500],
  ["SearchResult.facets", "search", `search(input: { query: "x" }) { facets { window } }`, 500 + 100],
  // A field with a selection set and no weight of its own costs 1; a list of such items costs 1
  // for the list and its items' selections once per item (by `@listSize`, or once when unsized).
  ["SearchHit.highlights", "search", `search(input: { query: "x", limit: 10 }) { hits { highlights(limit: 5) { text } } }`, 500 + 10 * (1 + 1)],
  ["Query.answer", "search", `answer(input: { question: "x" }) { text }`, 1000],
  ["Answer.passages", "search", `answer(input: { question: "x" }) { passages { text } }`, 1000 + 1],
  ["Answer.citations", "search", `answer(input: { question: "x" }) { citations { passage { text } } }`, 1000 + 1 + 10 * 1],
  ["Query.searchSuggestions", "search", `searchSuggestions(prefix: "dea", limit: 20) { text }`, 50],
  ["Query.searchIndexStatus", "search", `searchIndexStatus { pending }`, 10],
  ["Query.savedSearches", "search", `savedSearches(first: 30) { nodes { query } }`, 1 + 30 * 1],
  ["Query.searchAnalytics", "search", `searchAnalytics(range: { relative: LAST_24_HOURS }) { totalSearches }`, 200],
  ["Mutation.runSavedSearch", "search", `runSavedSearch(id: "00000000-0000-4000-8000-000000000000") { savedSearch { id } }`, 500 + 1],
  ["Query.conversations", "conversations", `conversations(first: 40) { nodes { id } }`, 1 + 40 * 1],
  ["ConversationConnection.totalCount", "conversations", `conversations(first: 1) { totalCount }`, 1 + 10],
  ["Query.documents", "knowledge-base", `documents(first: 60) { edges { node { id } } }`, 1 + 60 * (1 + 1)],
  ["Query.knowledgeBases", "knowledge-base", `knowledgeBases(first: 70) { nodes { id } }`, 1 + 70 * 1],
  ["KnowledgeBase.documents", "knowledge-base", `knowledgeBases(first: 2) { nodes { documents(first: 50) { nodes { id } } } }`, 1 + 2 * (1 + (1 + 50 * 1))],
  ["Query.queryKnowledgeBase", "knowledge-base", `queryKnowledgeBase(input: { query: "x" }) { tookMs }`, 500],
  ["Query.queryPlatformKnowledge", "knowledge-base", `queryPlatformKnowledge(capability: "c", query: "x") { tookMs }`, 2000],
  ["Query.knowledgeAnalytics", "knowledge-base", `knowledgeAnalytics(from: "2026-01-01T00:00:00.000Z", to: "2026-01-02T00:00:00.000Z") { totalQueries }`, 200],
  ["Query.webSearch", "external-search", `webSearch(query: "x") { estimatedCredits }`, 500],
  ["Query.discoverQuestions", "external-search", `discoverQuestions(query: "x") { estimatedCredits }`, 300],
  ["Query.research", "external-search", `research(query: "x") { estimatedCredits }`, 1000],
  ["Query.slackSearch", "external-search", `slackSearch(query: "x") { estimatedCredits }`, 300],
  ["Query.linkedInOrganization", "external-search", `linkedInOrganization(vanityName: "x") { estimatedCredits }`, 100],
  ["Query.linkedInPosts", "external-search", `linkedInPosts(organization: "1") { estimatedCredits }`, 300],
];

/** Every field the subgraphs' SDL gives `@cost` or `@listSize`, as `Type.field`. */
function annotatedFields(): Set<string> {
  const found = new Set<string>();
  const annotated = (directives: readonly ConstDirectiveNode[] | undefined) => directives?.some((directive) => directive.name.value === "cost" || directive.name.value === "listSize");
  for (const name of ["conversations", "search", "knowledge-base", "external-search"]) {
    const document = parse(fs.readFileSync(`subgraphs/${name}/schema.graphql`, "utf8"));
    for (const definition of document.definitions) {
      if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
      for (const field of definition.fields ?? []) if (annotated(field.directives)) found.add(`${definition.name.value}.${field.name.value}`);
    }
  }
  return found;
}

let test: TestStack;
let token: string;

beforeAll(async () => {
  test = await startTestStack({ OPERATION_MAX_COST: String(MAX_COST) });
  token = await tokenFor("org-costs", "cora");
}, 120_000);

afterAll(async () => test?.stop());

/** Enough aliased copies of one selection to pass the limit (50 aliases at most: the cheapest field costs 10). */
function overTheLimit(coordinate: string, selection: string, cost: number): { query: string; cost: number } {
  const copies = Math.floor(MAX_COST / cost) + 1;
  const operation = coordinate.startsWith("Mutation.") ? "mutation " : "";
  return { query: `${operation}{ ${Array.from({ length: copies }, (_, i) => `c${i}: ${selection}`).join(" ")} }`, cost: copies * cost };
}

describe("declared costs", () => {
  it("the table names every field the subgraphs' schemas give @cost or @listSize", () => {
    expect(new Set(costed.map(([coordinate]) => coordinate))).toEqual(annotatedFields());
  });

  it.each(costed)("%s: the gateway and its subgraph (%s) measure the same declared cost and refuse it over the limit", async (coordinate, subgraphName, selection, cost) => {
    const { query, cost: total } = overTheLimit(coordinate, selection, cost);
    const atGateway = await graphql(test.stack.gateway.url, query, {}, { token });
    expect(atGateway.status).toBe(400);
    expect(atGateway.errors?.[0]?.extensions).toMatchObject({ code: "OPERATION_LIMIT_EXCEEDED", limit: "cost", max: MAX_COST, actual: total });

    const subgraph = test.stack.subgraphs.find((candidate) => candidate.name === subgraphName)!;
    const direct = await graphql(subgraph.url, query, {}, { token });
    expect(direct.errors?.[0]?.extensions).toMatchObject({ code: "OPERATION_LIMIT_EXCEEDED", limit: "cost", max: MAX_COST, actual: total });
  });

  it("a deferred fragment is one more part, and costs one more point's worth", async () => {
    const plain = `{ searchIndexStatus { pending } }`;
    const deferred = `{ ... @defer { searchIndexStatus { pending } } ... @defer { searchIndexStatus { pending } } }`;
    expect((await graphql(test.stack.gateway.url, plain, {}, { token })).errors).toBeUndefined();
    const refused = await graphql(test.stack.gateway.url, deferred, {}, { token });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: "OPERATION_LIMIT_EXCEEDED", limit: "cost", actual: 2 * (10 + INCREMENTAL_PART_COST) });
  });

  it("a query under the limit is answered", async () => {
    const answered = await graphql(test.stack.gateway.url, `{ searchIndexStatus { pending } conversations(first: 5) { totalCount } }`, {}, { token });
    expect(answered.errors).toBeUndefined();
    expect(answered.data).toEqual({ searchIndexStatus: { pending: 0 }, conversations: { totalCount: 0 } });
  });
});
