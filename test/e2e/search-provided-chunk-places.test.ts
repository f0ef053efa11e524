/**
 * The search subgraph provides where a DocumentChunk hit sits (`headingPath`, `page`,
 * `document { id fileName }`) on `SearchHit.item`, as it provides a conversation's title
 * (search-provided-titles.test.ts), so the search page's first results need no `_entities` hop
 * to the knowledge-base subgraph (subgraphs/search/provided-fields.ts). Through the whole
 * stack's gateway (the Rust planner), counting the operations each subgraph executed:
 * - places only: the knowledge-base subgraph is not called, the values are the owner's, and they
 *   cost one statement for the page;
 * - a field the search subgraph does not provide (`text`) still comes from the owner, in one call;
 * - another user of the organization, whom the document is not shared with, gets no hit of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import type { RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import type { TestDatabase } from "../support/database.js";
import { uploadReadyDocument } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let knowledgeBase: RunningSubgraph;
let ada: string;
let bob: string;
let documentId: string;

const PLACES_ONLY = `query($input: SearchInput!) {
  search(input: $input) { hits { item { __typename ... on DocumentChunk { id headingPath page document { id fileName } } } } }
}`;
const WITH_TEXT = `query($input: SearchInput!) {
  search(input: $input) { hits { item { __typename ... on DocumentChunk { id headingPath page text document { id fileName } } } } }
}`;
const INPUT = { input: { query: "deadlock locks", alpha: 1, providers: ["documents.keyword"] } };

// The statement the search subgraph sends for a page's chunk places (knowledge-base/search/visible-chunks.ts).
const isPlaceRead = (sql: string) => sql.includes("c.heading_path, c.page, d.id::text AS document_id, d.file_name");

interface ChunkItem {
  __typename: string;
  id: string;
  headingPath: string[];
  page: number | null;
  text?: string;
  document: { id: string; fileName: string };
}

async function searchChunks(token: string, query: string): Promise<ChunkItem[]> {
  const response = await graphql(stack.gateway.url, query, INPUT, { token });
  expect(response.errors).toBeUndefined();
  return (response.data!.search.hits as { item: ChunkItem | null }[]).map((hit) => hit.item!).filter((item) => item.__typename === "DocumentChunk");
}

beforeAll(async () => {
  ({ db, stack } = await startTestStack({ GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0", SEARCH_PROVIDER_TIMEOUT_MS: "30000", UPSTREAM_TIMEOUT_MS: "120000" }));
  knowledgeBase = stack.subgraphs.find((subgraph) => subgraph.name === "knowledge-base")!;
  ada = await tokenFor("org-places", "ada", ["sre"], "admin");
  bob = await tokenFor("org-places", "bob", ["design"], "member");
  documentId = await uploadReadyDocument(stack.gateway.url, ada, "locking.md", "# Locking guide\n\n## Deadlocks\n\nDeadlocks happen when two sessions wait on each other's locks. Take locks in one order and keep transactions short.\n");
}, 180_000);

afterAll(async () => stack?.stop());

describe("DocumentChunk places provided by the search subgraph", () => {
  it("answers headingPath, page and the document's file name without calling the knowledge-base subgraph, in one statement", async () => {
    const before = knowledgeBase.operations.count;
    db.database.statements.reset();
    const chunks = await searchChunks(ada, PLACES_ONLY);
    expect(chunks.length).toBeGreaterThan(0);
    expect(knowledgeBase.operations.count).toBe(before);
    expect(db.database.statements.log.filter(isPlaceRead)).toHaveLength(1);
    for (const chunk of chunks) expect(chunk.document).toEqual({ id: documentId, fileName: "locking.md" });
    expect(chunks.map((chunk) => chunk.headingPath)).toContainEqual(["Locking guide", "Deadlocks"]);
  });

  it("gives what the owner gives, and asks the owner once for a field it does not provide", async () => {
    const provided = await searchChunks(ada, PLACES_ONLY);
    const before = knowledgeBase.operations.count;
    const owned = await searchChunks(ada, WITH_TEXT);
    expect(knowledgeBase.operations.count).toBe(before + 1);
    expect(owned.every((chunk) => typeof chunk.text === "string" && chunk.text.length > 0)).toBe(true);
    expect(owned.map(({ text: _text, ...place }) => place)).toEqual(provided);
  });

  it("shows nothing of the document to a user it is not shared with", async () => {
    expect(await searchChunks(bob, PLACES_ONLY)).toEqual([]);
  });
});
