/**
 * The search subgraph's `SearchHit.item @provides(fields: "... on Conversation { title }")`
 * (issue 12, lever 3) is valid federation for both composers' rules, not only for the one we
 * run:
 * - The Guild's composer (`npm run compose`, lib/composition/compose.ts) composes it and records
 *   the provides in the supergraph, with the conversations subgraph still the title's owner.
 * - Apollo's own subgraph validation (@apollo/federation-internals) accepts the search
 *   subgraph's schema, and reads the provides back out of our composed supergraph. Apollo's
 *   full composer runs in composers.test.ts, which also requires the provided title to be
 *   shareable in its owner.
 * A provides of a field the search subgraph does not declare `@external` fails both: the check
 * can fail.
 */
import fs from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { buildSubgraph, Supergraph } from "@apollo/federation-internals";
import { parse } from "graphql";
import { composeFromConfig, composeSupergraph, CompositionError, loadSubgraphSchemas } from "../../lib/composition/compose.js";
import { readSupergraphConfig } from "../../lib/composition/supergraph-config.js";

const searchSdl = fs.readFileSync("subgraphs/search/schema.graphql", "utf8");
const PROVIDED_FIELDS = "... on Conversation { title }";
const PROVIDES = `@provides(fields: "${PROVIDED_FIELDS}")`;
// The same schema, providing a field it does not declare: both composers must reject it.
const brokenSdl = searchSdl.replace(PROVIDES, `@provides(fields: "... on Conversation { createdAt }")`);

describe("SearchHit.item provides Conversation.title", () => {
  it("is in the search subgraph's schema, with title declared external", () => {
    expect(searchSdl).toContain(`item: SearchItem ${PROVIDES}`);
    expect(searchSdl).toMatch(/title: String! @external/);
    expect(brokenSdl).not.toBe(searchSdl);
  });

  it("composes with The Guild's composer, which records the provides and keeps conversations the owner", async () => {
    const supergraph = await composeFromConfig(readSupergraphConfig("supergraph.yaml", {}));
    expect(supergraph).toContain(`provides: "${PROVIDED_FIELDS}"`);
    expect(supergraph).toContain(`title: String! @join__field(graph: CONVERSATIONS) @join__field(graph: SEARCH, external: true)`);
    // Where a chunk sits is answered by both subgraphs (shareable, subgraphs/search/provided-fields.ts), not
    // provided: a provided field is external in the search subgraph, and a supergraph composed
    // without the knowledge-base subgraph then has no subgraph that resolves it.
    expect(supergraph).not.toMatch(/headingPath: \[String!\]! @join__field/);
    expect(supergraph).not.toMatch(/fileName: String! @join__field\(graph: KNOWLEDGE_BASE\) @join__field\(graph: SEARCH, external: true\)/);
  });

  it("fails The Guild's composer when the provided field is not external", async () => {
    const subgraphs = await loadSubgraphSchemas(readSupergraphConfig("supergraph.yaml", {}));
    const broken = subgraphs.map((subgraph) => (subgraph.name === "search" ? { ...subgraph, typeDefs: parse(brokenSdl) } : subgraph));
    expect(() => composeSupergraph(broken)).toThrow(CompositionError);
  });

  it("passes Apollo's subgraph validation, and Apollo reads the provides out of the composed supergraph", () => {
    expect(() => buildSubgraph("search", "http://search/graphql", searchSdl).validate()).not.toThrow();
    const conversationsSdl = fs.readFileSync("subgraphs/conversations/schema.graphql", "utf8");
    expect(() => buildSubgraph("conversations", "http://conversations/graphql", conversationsSdl).validate()).not.toThrow();
    const extracted = Supergraph.build(fs.readFileSync("supergraph.graphql", "utf8")).subgraphs().get("search")!;
    const item = extracted.schema.type("SearchHit") as unknown as { field(name: string): { appliedDirectives: unknown[] } };
    expect(item.field("item").appliedDirectives.map(String)).toContain(PROVIDES);
  });

  it("fails Apollo's subgraph validation when the provided field is not external", () => {
    expect(() => buildSubgraph("search", "http://search/graphql", brokenSdl).validate()).toThrow(/createdAt/);
  });
});
