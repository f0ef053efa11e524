/**
 * `SearchInput.distinct` (on by default) through the whole stack's gateway: a document whose
 * chunks match shows once, at its best chunk, with its other matching chunks as `moreMatches`
 * (loaded like `item`, places and all); facets count documents then; paging one hit at a time
 * shows every document once, with no gap; and `distinct: false` gives every chunk as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import { uploadReadyDocument } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

let stack: RunningStack;
let ada: string;
const documents = new Map<string, string>();

const SEARCH = `query($input: SearchInput!) {
  search(input: $input) {
    hits {
      item { __typename ... on DocumentChunk { id headingPath document { id fileName } } }
      moreMatches { __typename ... on DocumentChunk { id headingPath document { id fileName } } }
      explanation { provider rank }
    }
    facets { kinds { kind count } }
    pageInfo { hasNextPage endCursor }
  }
}`;

interface Chunk {
  __typename: string;
  id: string;
  headingPath: string[];
  document: { id: string; fileName: string };
}
interface Hit {
  item: Chunk;
  moreMatches: (Chunk | null)[];
  explanation: { provider: string; rank: number }[];
}
interface Page {
  hits: Hit[];
  facets: { kinds: { kind: string; count: number }[] };
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

async function search(input: Record<string, unknown>): Promise<Page> {
  const response = await graphql(stack.gateway.url, SEARCH, { input: { query: "deadlock lock order", alpha: 1, providers: ["documents.keyword"], ...input } }, { token: ada });
  expect(response.errors).toBeUndefined();
  return response.data!.search as Page;
}

/** A runbook of `sections` sections, each long enough to be a chunk of its own, each about deadlocks. */
function runbook(title: string, sections: number): string {
  const body = (n: number) => `A deadlock happens when two sessions wait on each other's locks (case ${n}). ${"Take locks in one order, keep transactions short, and retry the loser. ".repeat(30)}`;
  return `# ${title}\n\n${Array.from({ length: sections }, (_, n) => `## Deadlock case ${n + 1}\n\n${body(n + 1)}\n`).join("\n")}`;
}

beforeAll(async () => {
  ({ stack } = await startTestStack({ GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0", SEARCH_PROVIDER_TIMEOUT_MS: "30000", UPSTREAM_TIMEOUT_MS: "120000" }));
  ada = await tokenFor("org-distinct", "ada", ["sre"], "admin");
  for (const [fileName, sections] of [["orders-runbook.md", 4], ["payments-runbook.md", 3], ["billing-runbook.md", 2]] as const) {
    documents.set(await uploadReadyDocument(stack.gateway.url, ada, fileName, runbook(fileName, sections)), fileName);
  }
}, 180_000);

afterAll(async () => stack?.stop());

describe("distinct search", () => {
  it("shows each document once, its other matching chunks as moreMatches with their places", async () => {
    const page = await search({});
    expect(page.hits.map((hit) => hit.item.document.fileName).sort()).toEqual([...documents.values()].sort());
    for (const hit of page.hits) {
      expect(hit.explanation).toHaveLength(1);
      const chunks = [hit.item, ...hit.moreMatches.map((more) => more!)];
      // Every matching chunk of the document, once, all of the same document.
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(chunks.length);
      expect(new Set(chunks.map((chunk) => chunk.document.id))).toEqual(new Set([hit.item.document.id]));
      expect(chunks.every((chunk) => chunk.headingPath.length > 0)).toBe(true);
    }
    const orders = page.hits.find((hit) => hit.item.document.fileName === "orders-runbook.md")!;
    expect(orders.moreMatches.length).toBeGreaterThan(0);
    // Facets count what the page shows: documents.
    expect(page.facets.kinds).toEqual([{ kind: "DOCUMENT_CHUNK", count: documents.size }]);
  });

  it("without distinct, gives every chunk as a hit of its own and counts chunks", async () => {
    const distinct = await search({});
    const chunks = await search({ distinct: false });
    const every = distinct.hits.flatMap((hit) => [hit.item.id, ...hit.moreMatches.map((more) => more!.id)]);
    expect(chunks.hits.map((hit) => hit.item.id).sort()).toEqual(every.sort());
    expect(chunks.hits.every((hit) => hit.moreMatches.length === 0)).toBe(true);
    expect(chunks.facets.kinds).toEqual([{ kind: "DOCUMENT_CHUNK", count: every.length }]);
  });

  it("pages one document at a time without duplicates or gaps, and refuses a cursor of the other mode", async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const result: Page = await search({ limit: 1, ...(after ? { after } : {}) });
      seen.push(...result.hits.map((hit) => hit.item.document.id));
      if (!result.pageInfo.hasNextPage) break;
      after = result.pageInfo.endCursor;
    }
    expect(seen.sort()).toEqual([...documents.keys()].sort());
    const first = await search({ limit: 1 });
    const response = await graphql(stack.gateway.url, SEARCH, { input: { query: "deadlock lock order", alpha: 1, providers: ["documents.keyword"], limit: 1, distinct: false, after: first.pageInfo.endCursor } }, { token: ada });
    expect(response.errors?.[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT" } });
  });
});
