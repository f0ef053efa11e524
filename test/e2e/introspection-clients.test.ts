/**
 * Exploring the graph with the clients people use, against one running stack (issue 38): the
 * standard introspection query with every option of graphql-js passes at the gateway (with and
 * without a token) and at every subgraph; graphql-codegen generates TypeScript from the gateway's
 * live introspection; Apollo Sandbox's preflight and introspection from its origin succeed; the
 * MCP stdio server validates its tools against the live gateway, never its schema file. GraphiQL
 * in Chromium: test/browser/graphiql.test.ts. The response cache is on (its default TTL), as it
 * was when the gateway refused introspection for the `__typename` aliases it adds itself.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { getIntrospectionQuery } from "graphql";
import { APOLLO_SANDBOX_ORIGIN } from "../../lib/config.js";
import { graphql, STANDARD_INTROSPECTION_OPTIONS } from "../support/graphql.js";
import { startTestStack, type TestStack } from "../support/stack.js";
import { tokenFor } from "../support/tenants.js";

let test: TestStack;
let token: string;

/** graphql 16.15's introspection query with every option a client asks for. */
const FULL_INTROSPECTION = getIntrospectionQuery(STANDARD_INTROSPECTION_OPTIONS);

beforeAll(async () => {
  test = await startTestStack({ SEARCH_INDEXER: "false" });
  token = await tokenFor("org-explorer", "ada");
}, 120_000);

afterAll(async () => test?.stop());

const gatewayUrl = () => test.stack.gateway.url;

describe("the standard introspection query", () => {
  it.each([
    ["with a token", true],
    ["without a token", false],
  ])("passes at the gateway %s, every option asked for", async (_name, withToken) => {
    const response = await graphql(gatewayUrl(), FULL_INTROSPECTION, {}, { token: withToken ? token : null });
    expect(response.errors).toBeUndefined();
    expect(response.status).toBe(200);
    const types = (response.data!.__schema.types as { name: string; fields: { name: string }[] | null }[]);
    expect(types.find((type) => type.name === "Query")!.fields!.map((field) => field.name)).toContain("search");
    expect(types.map((type) => type.name)).toEqual(expect.arrayContaining(["SearchInput", "SearchResult"]));
  });

  it("passes at every subgraph", async () => {
    expect(test.stack.subgraphs.length).toBeGreaterThanOrEqual(4);
    for (const subgraph of test.stack.subgraphs) {
      const response = await graphql(subgraph.url, FULL_INTROSPECTION, {}, { token });
      expect({ subgraph: subgraph.name, errors: response.errors }).toEqual({ subgraph: subgraph.name, errors: undefined });
      expect(response.data!.__schema.queryType.name).toBe("Query");
    }
  });

  it("50 aliased searches (with a fragment) reach the search subgraph with the gateway's __typename fields, and are answered; 51 are refused", async () => {
    const search = test.stack.subgraphs.find((subgraph) => subgraph.name === "search")!;
    // 49 searches of one hit cost 24,549 of the 25,000; the rest are cheap aliased fields.
    const searches = (count: number) =>
      `query Many { ${Array.from({ length: count }, (_, i) => (i < 49 ? `s${i}: search(input: { query: "explore ${i}", limit: 1 }) { ...Page }` : `c${i}: conversations(first: 1) { totalCount }`)).join(" ")} } fragment Page on SearchResult { tookMs hits { score } }`;
    search.operations.reset();
    const admitted = await graphql(gatewayUrl(), searches(50), {}, { token });
    expect(admitted.errors).toBeUndefined();
    expect(Object.keys(admitted.data!)).toHaveLength(50);
    // What the search subgraph was sent and answered: the response cache's alias in its selection
    // sets, inside the planner's own fragment too.
    const sent = search.operations.recent.join("\n");
    expect(sent).toMatch(/fragment \w+ on SearchResult \{[^}]*__responseCacheTypeName: __typename/);

    const refused = await graphql(gatewayUrl(), searches(51), {}, { token });
    expect(refused.status).toBe(400);
    expect(refused.errors![0]!.extensions).toMatchObject({ code: "OPERATION_LIMIT_EXCEEDED", limit: "alias", actual: 51 });
  });
});

describe("graphql-codegen", () => {
  it("generates TypeScript types from the gateway's live introspection, run as a user runs it (npx graphql-codegen --config codegen.json)", async () => {
    // The CLI in a process of its own, as a user runs it: under Jest's module sandbox its plugin
    // loader cannot require the ESM packages it depends on.
    const directory = mkdtempSync(path.join(tmpdir(), "codegen-"));
    try {
      const config = {
        schema: [{ [gatewayUrl()]: { headers: { Authorization: `Bearer ${token}` } } }],
        generates: { [path.join(directory, "context-search.ts")]: { plugins: ["typescript"] } },
      };
      writeFileSync(path.join(directory, "codegen.json"), JSON.stringify(config, null, 2));
      // From the project's folder, where codegen finds its plugin packages (as in a user's project).
      const child = spawn(process.execPath, [path.resolve("node_modules/@graphql-codegen/cli/esm/bin.js"), "--config", path.join(directory, "codegen.json")], { env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect({ code, output: code === 0 ? "" : output }).toEqual({ code: 0, output: "" });
      const types = readFileSync(path.join(directory, "context-search.ts"), "utf8");
      expect(types).toMatch(/export type SearchInput = \{/);
      expect(types).toMatch(/export type SearchResult = \{/);
      // Nullable: null when the search could not run at all (see its description).
      expect(types).toMatch(/export type Query = \{[\s\S]*?\n  search\?: Maybe<SearchResult>;/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }, 120_000);
});

describe("Apollo Sandbox", () => {
  it("gets through the CORS preflight from its origin, then introspects", async () => {
    const preflight = await fetch(gatewayUrl(), {
      method: "OPTIONS",
      headers: { origin: APOLLO_SANDBOX_ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "content-type,authorization" },
    });
    expect(preflight.status).toBeLessThan(300);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(APOLLO_SANDBOX_ORIGIN);
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toEqual(expect.stringContaining("authorization"));
    expect(preflight.headers.get("access-control-allow-headers")?.toLowerCase()).toEqual(expect.stringContaining("content-type"));
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");

    const response = await graphql(gatewayUrl(), FULL_INTROSPECTION, {}, { token, headers: { origin: APOLLO_SANDBOX_ORIGIN } });
    expect(response.errors).toBeUndefined();
    expect(response.headers.get("access-control-allow-origin")).toBe(APOLLO_SANDBOX_ORIGIN);
    expect(response.data!.__schema.queryType.name).toBe("Query");
  });

  it("gives an origin that is not listed no CORS headers", async () => {
    const response = await graphql(gatewayUrl(), "{ __typename }", {}, { headers: { origin: "https://elsewhere.example" } });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("the MCP stdio server (npm run mcp)", () => {
  it("validates its tools against the live gateway's introspection, never its schema file", async () => {
    const script = path.resolve("scripts/mcp.ts");
    // A schema file that does not exist: had the server fallen back to it, it could not start.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", script],
      env: { PATH: process.env.PATH ?? "", GATEWAY_URL: gatewayUrl(), CONTEXT_SEARCH_TOKEN: token, MCP_SCHEMA_FILE: "/nonexistent/supergraph.graphql" },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    // Read once the process has said all it will: stderr ends when it exits.
    const stderrEnded = new Promise<void>((resolve) => transport.stderr!.once("end", () => resolve()));
    const client = new Client({ name: "introspection-clients-test", version: "1.0.0" });
    try {
      await client.connect(transport);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("search");
    } finally {
      await client.close();
    }
    await stderrEnded;
    expect(stderr).not.toContain("does not answer introspection");
    expect(stderr).toMatch(/context-search MCP server on stdio: \d+ tools against /);
  }, 60_000);
});
