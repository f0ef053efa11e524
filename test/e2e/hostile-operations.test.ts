/**
 * Hostile operations through the gateway (Rust planner) and against each subgraph directly: each
 * gets a clear 4xx error (OPERATION_LIMIT_EXCEEDED, or RATE_LIMITED with Retry-After) instead of a
 * 500 or a stalled process, and the server still answers a normal query afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import type { RunningStack } from "../../app/stack.js";
import type { TestDatabase } from "../support/database.js";
import { startTestStack } from "../support/stack.js";
import { graphql, postRaw } from "../support/graphql.js";
import { tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let stack: RunningStack;
let token: string;

/** A user budget small enough to reach in a test; the organization and anonymous budgets stay out of the way. */
const USER_POINTS = 15;

beforeAll(async () => {
  ({ db, stack } = await startTestStack({
    SEARCH_INDEXER: "false",
    QUERY_PLANNER: "rust",
    GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0",
    RATE_LIMIT_USER_POINTS: String(USER_POINTS),
    RATE_LIMIT_ORGANIZATION_POINTS: "100000",
    RATE_LIMIT_ANONYMOUS_POINTS: "100000",
    RATE_LIMIT_WINDOW_SECONDS: "600",
  }));
  token = await tokenFor("org-hostile", "mallory");
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await db?.dispose();
});

const post = (url: string, body: unknown, options: { token?: string; accept?: string } = {}) => postRaw(url, body, options);

function fragmentBomb(levels: number, width: number): string {
  const fragments = Array.from({ length: levels }, (_, i) => `fragment F${i} on Query { ${`...F${i + 1} `.repeat(width)}}`);
  return `{ ...F0 } ${fragments.join(" ")} fragment F${levels} on Query { __typename }`;
}

function nestedVariable(levels: number): string {
  // Built as text: JSON.stringify of an object this deep would itself overflow the stack.
  return `{"query":"query($input: SearchInput!) { search(input: $input) { tookMs } }","variables":{"input":${'{"a":'.repeat(levels)}1${"}".repeat(levels)}}}`;
}

const HOSTILE: { name: string; body: (subgraph: string) => unknown; codes?: string[]; limit?: string }[] = [
  { name: "the 40-level fragment bomb, without a token", body: () => ({ query: fragmentBomb(40, 2) }) },
  { name: "the wide fragment bomb (10 × 10)", body: () => ({ query: fragmentBomb(10, 10) }) },
  {
    name: "10,000 aliases of an expensive field",
    body: (subgraph) => ({
      query: `{ ${Array.from({ length: 10_000 }, (_, i) => (subgraph === "search" ? `s${i}: searchProviders { name }` : `a${i}: conversations(first: 1) { totalCount }`)).join(" ")} }`,
    }),
  },
  { name: "1,000 aliases of search", body: () => ({ query: `{ ${Array.from({ length: 1_000 }, (_, i) => `s${i}: search(input: { query: "deadlock" }) { tookMs }`).join(" ")} }` }) },
  // Subgraphs leave the `__typename` fields a gateway adds uncounted (two per selection set):
  // neither they nor an aliased `__typename` flood open a way around the alias limit.
  {
    name: "51 aliases of a real field, each beside two aliased __typename",
    body: (subgraph) => ({
      query: `{ ${Array.from({ length: 51 }, (_, i) => (subgraph === "search" ? `s${i}: searchProviders { name t: __typename u: __typename }` : `a${i}: conversations(first: 1) { totalCount t: __typename u: __typename }`)).join(" ")} }`,
    }),
    limit: "alias",
  },
  { name: "60 aliases of __typename", body: () => ({ query: `{ ${Array.from({ length: 60 }, (_, i) => `t${i}: __typename`).join(" ")} }` }), limit: "alias" },
  { name: "2,000 aliases of __typename", body: () => ({ query: `{ ${Array.from({ length: 2_000 }, (_, i) => `t${i}: __typename`).join(" ")} }` }), limit: "token" },
  { name: "200 nested inline fragments", body: () => ({ query: `{ ${"... on Query { ".repeat(200)}__typename${" }".repeat(200)} }` }) },
  { name: "5,000 nested selections", body: () => ({ query: `{ ${"conversations { ".repeat(5_000)}id${" }".repeat(5_000)} }` }) },
  { name: "5,000 nested braces", body: () => ({ query: `${"{".repeat(5_000)}${"}".repeat(5_000)}` }), codes: ["OPERATION_LIMIT_EXCEEDED", "GRAPHQL_PARSE_FAILED"] },
  { name: "a variable nested 100,000 levels deep", body: () => nestedVariable(100_000) },
];

function targets(): { name: string; url: string }[] {
  return [{ name: "gateway", url: stack.gateway.url }, ...stack.subgraphs.map((subgraph) => ({ name: subgraph.name, url: subgraph.url }))];
}

describe.each(["gateway", "conversations", "search"])("%s", (target) => {
  const url = () => targets().find((candidate) => candidate.name === target)!.url;

  it.each(HOSTILE.map((attack) => [attack.name, attack] as const))("refuses %s with a 400 and keeps serving", async (_name, attack) => {
    const response = await post(url(), attack.body(target));
    expect(response.status).toBe(400);
    const error = response.body?.errors?.[0];
    expect(attack.codes ?? ["OPERATION_LIMIT_EXCEEDED"]).toContain(error?.extensions?.code);
    if (attack.limit) expect(error?.extensions?.limit).toBe(attack.limit);
    expect(error?.message).not.toMatch(/internal|unexpected/i);
    const normal = await post(url(), { query: "{ __typename }" });
    expect(normal.status).toBe(200);
    expect(normal.body?.data).toEqual({ __typename: "Query" });
  });

  it("suggests no field names", async () => {
    // Validation errors are 400 under GraphQL over HTTP's own media type (application/json may answer 200).
    const response = await post(url(), { query: "{ conversatons { id } searc }" }, { accept: "application/graphql-response+json" });
    expect(response.status).toBe(400);
    const messages = (response.body?.errors ?? []).map((error) => error.message).join("\n");
    expect(messages).toMatch(/Cannot query field/);
    expect(messages).not.toMatch(/Did you mean/);
  });
});

describe("rate limits at the gateway", () => {
  it("answers 429 RATE_LIMITED with Retry-After once a user's budget is spent, and other users go on", async () => {
    const spender = await tokenFor("org-hostile", "spender");
    const query = { query: "{ conversations(first: 1) { nodes { id } } }" };
    for (let i = 0; i < USER_POINTS; i++) {
      const response = await post(stack.gateway.url, query, { token: spender });
      expect(response.status).toBe(200);
    }
    const limited = await post(stack.gateway.url, query, { token: spender });
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(limited.body?.errors?.[0]?.extensions).toMatchObject({ code: "RATE_LIMITED", retryAfterSeconds: retryAfter });
    expect(limited.body?.errors?.[0]?.message).toMatch(/rate limit/i);
    const colleague = await graphql(stack.gateway.url, query.query, {}, { token });
    expect(colleague.status).toBe(200);
    expect(colleague.errors).toBeUndefined();
  });
});
