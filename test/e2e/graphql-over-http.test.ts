/**
 * The GraphQL-over-HTTP conformance audits of the `graphql-http` package, against the gateway
 * (with the Rust query planner, the one that ships, and the JavaScript one) and against each
 * subgraph directly: clients of any of them get the behaviour the spec promises.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { serverAudits } from "graphql-http";
import { loadConfig, type Config } from "../../lib/config.js";
import { silentLogger } from "../../lib/logger.js";
import { startStack, type RunningStack } from "../../app/stack.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { TEST_AUTH } from "../support/tenants.js";

let db: TestDatabase;
const stacks: Partial<Record<"rust" | "js", RunningStack>> = {};

function stackConfig(planner: "rust" | "js"): Config {
  const loaded = loadConfig({ GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0", EMBEDDER: "hashing", SEARCH_INDEXER: "false", QUERY_PLANNER: planner });
  return { ...loaded, auth: { ...TEST_AUTH, usingDevSecret: false } };
}

beforeAll(async () => {
  db = await createTestDatabase();
  for (const planner of ["rust", "js"] as const) {
    stacks[planner] = await startStack({ config: stackConfig(planner), database: db.database, logger: silentLogger, gateway: { runtimeLogLevel: false } });
  }
});

afterAll(async () => {
  for (const stack of Object.values(stacks)) await stack?.stop();
  await db?.dispose();
});

async function failedAudits(url: string): Promise<string[]> {
  const results = await Promise.all(serverAudits({ url }).map(async (audit) => ({ name: audit.name, result: await audit.fn() })));
  return results.filter(({ result }) => result.status === "error").map(({ name, result }) => `${name}: ${"reason" in result ? result.reason : ""}`);
}

describe("GraphQL over HTTP audits", () => {
  it.each(["rust", "js"] as const)("the gateway with the %s planner passes every MUST", async (planner) => {
    expect(await failedAudits(stacks[planner]!.gateway.url)).toEqual([]);
  });

  it.each(["conversations", "search"])("the %s subgraph passes every MUST", async (name) => {
    const subgraph = stacks.rust!.subgraphs.find((candidate) => candidate.name === name)!;
    expect(await failedAudits(subgraph.url)).toEqual([]);
  });
});
