/**
 * No word oracle between colleagues (issue 41, item 4): a member must not learn that a word occurs
 * in a colleague's private document. Typo tolerance corrects a query with the organization's
 * vocabulary, which holds every member's words; what reaches the caller ("did you mean", the
 * corrections, the hits) must rest only on what the caller may read. Through the gateway, on the
 * real stack: Mia's private document holds a rare word, Ned's private document a word one letter
 * from it. Ned types Mia's word with one letter wrong, and then exactly: both answers must be
 * what they would be if Mia's document did not exist (before, the exact word was "known" to the
 * organization's vocabulary, so it got no "did you mean" while any other unknown word did).
 * Then Mia shares the document with a team, and its members are corrected to her word.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import type { TestDatabase } from "../support/database.js";
import { uploadReadyDocument } from "../support/documents.js";
import { graphql } from "../support/graphql.js";
import { startTestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

const ORG = "org-oracle";

let db: TestDatabase;
let stack: RunningStack;
let mia: string;
let ned: string;
let documentId: string;

const SEARCH = `query Search($input: SearchInput!) {
  search(input: $input) {
    suggestion
    corrections { word searchedAs }
    hits { item { __typename ... on DocumentChunk { id document { id } } } }
  }
}`;
const SUGGESTIONS = `query Suggest($prefix: String!) { searchSuggestions(prefix: $prefix) { text source } }`;

async function searchAs(token: string, query: string) {
  const response = await graphql(stack.gateway.url, SEARCH, { input: { query, alpha: 1, typoTolerance: true } }, { token });
  expect(response.errors).toBeUndefined();
  return response.data!.search as { suggestion: string | null; corrections: { word: string; searchedAs: string[] }[]; hits: { item: { document?: { id: string } } }[] };
}

beforeAll(async () => {
  // No caches: each search reaches the providers.
  ({ db, stack } = await startTestStack({}));
  mia = await tokenFor(ORG, "mia", ["finance"]);
  ned = await tokenFor(ORG, "ned", ["support"]);
  // Ned's own word is one letter from Mia's: what he may be corrected to.
  await uploadReadyDocument(stack.gateway.url, ned, "support.md", "# Support rota\n\nThe support rota changes every Monday; file the zanzibarile form.\n");
  documentId = await uploadReadyDocument(stack.gateway.url, mia, "acquisition.md", "# Acquisition\n\nThe codename for the acquisition is zanzibarite.\n");
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

describe("a word only a colleague's private document holds", () => {
  it("is corrected for its owner", async () => {
    const own = await searchAs(mia, "zanzibarita");
    expect(own.suggestion).toBe("zanzibarite");
    expect(own.hits.map((hit) => hit.item.document?.id)).toContain(documentId);
  });

  it("is never suggested, corrected to or completed for a colleague who cannot read it", async () => {
    const other = await searchAs(ned, "zanzibarita");
    expect(other.suggestion).toBe("zanzibarile");
    expect(JSON.stringify(other)).not.toContain("zanzibarite");
    expect(other.hits.map((hit) => hit.item.document?.id)).not.toContain(documentId);
    const completions = await graphql(stack.gateway.url, SUGGESTIONS, { prefix: "zanzib" }, { token: ned });
    expect(completions.errors).toBeUndefined();
    expect(JSON.stringify(completions.data)).not.toContain("zanzibarite");
  });

  it("is, typed exactly, as unknown to the colleague as a word nobody has: corrected to what they can read", async () => {
    const exact = await searchAs(ned, "zanzibarite");
    const nobodys = await searchAs(ned, "zanzibarime");
    expect(nobodys.suggestion).toBe("zanzibarile");
    expect(exact.suggestion).toBe("zanzibarile");
    expect(exact.corrections).toEqual([{ word: "zanzibarite", searchedAs: ["zanzibarile"] }]);
    expect(exact.hits.map((hit) => hit.item.document?.id)).not.toContain(documentId);
  });

  it("is corrected for the colleague once the document is shared with their team", async () => {
    const shared = await graphql(stack.gateway.url, `mutation($id: ID!) { setDocumentSharing(id: $id, teamId: "finance") { id } }`, { id: documentId }, { token: mia });
    expect(shared.errors).toBeUndefined();
    // Ned is not in finance: still his own word.
    expect((await searchAs(ned, "zanzibarita")).suggestion).toBe("zanzibarile");
    const colleague = await tokenFor(ORG, "fay", ["finance"]);
    expect((await searchAs(colleague, "zanzibarita")).suggestion).toBe("zanzibarite");
  });
});
