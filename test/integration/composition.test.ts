/**
 * Composition from supergraph.yaml: the committed supergraph.graphql must be exactly what the
 * subgraphs' schemas compose to (run `npm run compose` after changing a schema), and broken
 * configurations fail with messages that say what to fix.
 */
import fs from "node:fs";
import { describe, expect, it } from "@jest/globals";
import { parse } from "graphql";
import { composeFromConfig, composeSupergraph, CompositionError } from "../../lib/composition/compose.js";
import { parseSupergraphConfig, readSupergraphConfig, SupergraphConfigError } from "../../lib/composition/supergraph-config.js";
import { subgraphLocations } from "../../gateway/server.js";

describe("supergraph.graphql", () => {
  it("matches what supergraph.yaml's subgraph schemas compose to (run `npm run compose` if not)", async () => {
    const composed = await composeFromConfig(readSupergraphConfig("supergraph.yaml", {}));
    expect(fs.readFileSync("supergraph.graphql", "utf8").trim()).toBe(composed.trim());
  });

  it("routes each subgraph to the URL the environment gives", async () => {
    const sdl = await composeFromConfig(readSupergraphConfig("supergraph.yaml", { CONVERSATIONS_URL: "http://conversations.internal:8080/graphql" }));
    expect(subgraphLocations(sdl)).toEqual([
      { name: "conversations", url: "http://conversations.internal:8080/graphql" },
      { name: "external-search", url: "http://127.0.0.1:4004/graphql" },
      { name: "knowledge-base", url: "http://127.0.0.1:4003/graphql" },
      { name: "search", url: "http://127.0.0.1:4002/graphql" },
    ]);
  });
});

describe("supergraph.yaml", () => {
  it("expands ${env.NAME} and ${env.NAME:-default} like Rover", () => {
    const yaml = `federation_version: =2.9.0
subgraphs:
  a:
    routing_url: \${env.A_URL}
    schema: { file: ./a.graphql }
  b:
    routing_url: \${env.B_URL:-http://localhost:9/graphql}
    schema: { subgraph_url: "http://localhost:9/graphql" }
`;
    const config = parseSupergraphConfig(yaml, "/tmp/supergraph.yaml", { A_URL: "http://a/graphql" });
    expect(config.federationVersion).toBe("=2.9.0");
    expect(config.subgraphs).toEqual([
      { name: "a", routingUrl: "http://a/graphql", schema: { file: "/tmp/a.graphql" } },
      { name: "b", routingUrl: "http://localhost:9/graphql", schema: { subgraphUrl: "http://localhost:9/graphql", headers: {} } },
    ]);
  });

  it.each([
    ["no subgraphs", "federation_version: 2\n", /subgraphs/],
    ["a missing variable", "subgraphs:\n  a:\n    routing_url: ${env.NOPE}\n    schema: { file: a.graphql }\n", /NOPE is not set/],
    ["a routing URL that is not http", "subgraphs:\n  a:\n    routing_url: ftp://x\n    schema: { file: a.graphql }\n", /routing_url must be an http/],
    ["no schema source", "subgraphs:\n  a:\n    routing_url: http://x\n    schema: {}\n", /file.*subgraph_url/],
    ["broken YAML", "subgraphs: [\n", /not valid YAML/],
  ])("rejects %s with a message naming the problem", (_name, yaml, message) => {
    expect(() => parseSupergraphConfig(yaml, "supergraph.yaml", {})).toThrow(SupergraphConfigError);
    expect(() => parseSupergraphConfig(yaml, "supergraph.yaml", {})).toThrow(message);
  });
});

describe("composition errors", () => {
  it("stops with the composer's own messages", () => {
    const a = parse(`extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])
      type Query { thing: Thing }
      type Thing @key(fields: "id") { id: ID! size: Int }`);
    const b = parse(`extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@key"])
      type Query { other: Thing }
      type Thing @key(fields: "id") { id: ID! size: String }`);
    let error: unknown;
    try {
      composeSupergraph([{ name: "a", url: "http://a", typeDefs: a }, { name: "b", url: "http://b", typeDefs: b }]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CompositionError);
    expect((error as CompositionError).problems.join("\n")).toMatch(/Thing\.size|size/);
  });
});
