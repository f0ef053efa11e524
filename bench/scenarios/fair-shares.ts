/**
 * Issue 41's fifteen attack classes against another organization's search: the benchmark
 * organization searches (one request in flight, the corpus's own queries in turn) while one
 * attacking organization, with 4 clients and a corpus of its own (a copy of the benchmark
 * organization's, so its searches, highlights and facets do real work), runs each class. The
 * machinery and the report are the hostile scenario's (hostile-load.ts); the goal the same:
 * victim p50 ≤ 1.5×, p99 ≤ 2× its baseline while the attack runs.
 *
 *     npm run bench -- --scenario fair-shares --database postgres --sizes 1000 --duration 5
 */
import { randomBytes } from "node:crypto";
import { BENCH_ORGANIZATION_ID, queryPool } from "../corpus.js";
import { graphqlBody } from "../load.js";
import { attackScenario, type Attack, type AttackSetup } from "./hostile-load.js";

const ATTACKER = "attacker-fair-shares";
const VICTIM_SEARCH = `query FairSharesVictim($query: String!) { search(input: { query: $query }) { hits { score item { __typename } } } }`;
const CLIENTS = 4;

export const fairSharesScenario = attackScenario({
  name: "fair-shares",
  // Budgets the victim's closed loop of searches (about 7 points each) never reaches, so every
  // victim request does real work; the attacker gets as much, 100 times a user's default budget
  // (1,200 points a minute): what is measured is how the work is shared, not the rate limit.
  rateLimit: { windowSeconds: 1, organizationPoints: 2_000, userPoints: 2_000, anonymousPoints: 250, redisUrl: null },
  title: "Another organization's search under attack (issue 41's classes)",
  victimQuery: VICTIM_SEARCH,
  async victimBodies(database) {
    const [{ count }] = (await database.prisma.$queryRaw<{ count: number }[]>`SELECT count(*)::int AS count FROM conversations WHERE organization_id = ${BENCH_ORGANIZATION_ID}`) as [{ count: number }];
    return queryPool(count, 20).map((query) => graphqlBody(VICTIM_SEARCH, { query }));
  },
  attackClasses: fairShareClasses,
});

/**
 * The attacker's corpus: every benchmark conversation and message copied into its organization
 * (the triggers index them for keyword search), and 20 conversations of one huge message each
 * for the highlights class. Then the classes, each request prepared here.
 */
async function fairShareClasses(setup: AttackSetup): Promise<Attack[]> {
  const { database, tokenOf } = setup;
  const sql = database.prisma;
  await sql.$executeRaw`INSERT INTO organizations (id, name) VALUES (${ATTACKER}, 'Attacker') ON CONFLICT DO NOTHING`;
  await sql.$executeRaw`INSERT INTO users (organization_id, id) VALUES (${ATTACKER}, 'mallory') ON CONFLICT DO NOTHING`;
  const [{ copied }] = (await sql.$queryRaw<{ copied: number }[]>`SELECT count(*)::int AS copied FROM conversations WHERE organization_id = ${ATTACKER}`) as [{ copied: number }];
  if (copied === 0) {
    await sql.$executeRaw`
      CREATE TEMP TABLE copied_ids AS SELECT id AS old_id, gen_random_uuid() AS new_id FROM conversations WHERE organization_id = ${BENCH_ORGANIZATION_ID}`;
    await sql.$executeRaw`
      INSERT INTO conversations (id, organization_id, user_id, title, created_at, updated_at)
      SELECT m.new_id, ${ATTACKER}, 'mallory', c.title, c.created_at, c.updated_at FROM conversations c JOIN copied_ids m ON m.old_id = c.id`;
    await sql.$executeRaw`
      INSERT INTO messages (id, conversation_id, organization_id, position, role, content, token_count, created_at)
      SELECT gen_random_uuid(), m.new_id, ${ATTACKER}, x.position, x.role, x.content, x.token_count, x.created_at
      FROM messages x JOIN copied_ids m ON m.old_id = x.conversation_id WHERE x.organization_id = ${BENCH_ORGANIZATION_ID}`;
    await sql.$executeRaw`DROP TABLE copied_ids`;
    // Highlights over huge messages: 100,000 characters each, the word everywhere.
    const huge = Array.from({ length: 10_000 }, (_, i) => (i % 7 === 0 ? "hugeword" : "filler")).join(" ").slice(0, 100_000);
    for (let i = 0; i < 20; i += 1) {
      await sql.$executeRaw`
        WITH c AS (INSERT INTO conversations (id, organization_id, user_id, title) VALUES (gen_random_uuid(), ${ATTACKER}, 'mallory', ${`Huge ${i}`}) RETURNING id)
        INSERT INTO messages (id, conversation_id, organization_id, position, role, content, token_count) SELECT gen_random_uuid(), c.id, ${ATTACKER}, 0, 'user', ${huge}, 25000 FROM c`;
    }
    await sql.$executeRaw`DELETE FROM search_index_jobs WHERE organization_id = ${ATTACKER}`;
    // Statistics for the doubled tables now, not from autovacuum in the middle of the baseline
    // (a first run measured its baseline at twice the latency of the one after the attacks).
    await sql.$executeRawUnsafe("VACUUM ANALYZE conversations, messages, keyword_postings, keyword_documents");
  }

  const headers = await tokenOf(ATTACKER);
  const mcpUrl = setup.gatewayUrl.replace(/\/graphql$/, "/mcp");
  const search = (query: string, selection = "tookMs", extra = "") => `search(input: { query: ${JSON.stringify(query)}${extra} }) { ${selection} }`;
  const aliased = (count: number, field: (i: number) => string) => `{ ${Array.from({ length: count }, (_, i) => `a${i}: ${field(i)}`).join(" ")} }`;
  const nestedDefer = (depth: number): string => (depth === 0 ? "" : `... @defer { d${depth}: ${search(`deadlock ${depth}`)} ${nestedDefer(depth - 1)} }`);
  const deepCursor = await cursorAt(setup, headers, "deploy", 1_000);
  const misspelled = "dedlock ordr servise migraton postgers rollbak timout kubernets depoly incidnet";
  const boundary = `----fair-shares-${randomBytes(6).toString("hex")}`;

  const graphqlAttack = (name: string, description: string, query: string, variables?: Record<string, unknown>): Attack => ({
    name,
    description,
    concurrency: CLIENTS,
    maxRequests: 20_000,
    requests: [{ headers, body: graphqlBody(query, variables) }],
  });
  return [
    graphqlAttack("12 nested @defer", "12 nested @defer fragments, each with a search", `{ ${nestedDefer(12)} }`),
    {
      name: "10 × 1.1 MB multipart files",
      description: "uploadDocuments of 10 text files of 1.1 MB each, as a GraphQL multipart request (a new text each time)",
      concurrency: CLIENTS,
      maxRequests: 2_000,
      requests: Array.from({ length: 4 }, (_, variant) => ({ headers: { ...headers, "content-type": `multipart/form-data; boundary=${boundary}`, "apollo-require-preflight": "true" }, body: multipartUpload(boundary, variant) })),
    },
    graphqlAttack("12 aliased answer", "12 aliased answer fields, 10 passages each", aliased(12, (i) => `answer(input: { question: "why did the deadlock ${i} happen", passages: 10 }) { text }`)),
    graphqlAttack("24 aliased searches", "24 aliased searches through the gateway", aliased(24, (i) => search(`deadlock ${i}`))),
    {
      name: "MCP batch of 10 searches",
      description: "POST /mcp with a batch of 10 tools/call search",
      concurrency: CLIENTS,
      maxRequests: 20_000,
      requests: [{ url: mcpUrl, headers: { ...headers, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" }, body: JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "search", arguments: { query: `deadlock ${i}` } } }))) }],
    },
    graphqlAttack("highlights over huge messages", "a search whose hits are 100,000-character messages, 10 highlights each", `{ ${search("hugeword", "hits { highlights(limit: 10) { text } }", ", limit: 20")} }`),
    graphqlAttack("facets paged 1,000 deep", "a search with facets, 100 hits a page, from a cursor 1,000 hits deep", `query($after: String) { search(input: { query: "deploy", limit: 100, after: $after }) { facets { window kinds { kind count } } hits { score } } }`, { after: deepCursor }),
    graphqlAttack("16 aliased completions", "16 aliased searchSuggestions of 20", aliased(16, (i) => `searchSuggestions(prefix: "de${String.fromCharCode(97 + i)}", limit: 20) { text }`)),
    { name: "50 aliases to the search subgraph", description: "50 aliased searches sent straight to the search subgraph", concurrency: CLIENTS, maxRequests: 5_000, requests: [{ url: setup.searchSubgraphUrl, headers, body: graphqlBody(aliased(50, (i) => search(`deadlock ${i}`))) }] },
    graphqlAttack("answer, 1,000-character question", "answer with a question of 1,000 characters", `{ answer(input: { question: ${JSON.stringify(("why does the order service deadlock under load after the deploy " .repeat(20)).slice(0, 1_000))}, passages: 10 }) { text } }`),
    graphqlAttack("typo expansion", "a search of ten misspelled words, typo tolerance on", `{ ${search(misspelled, "hits { score } corrections { word }", ", typoTolerance: true")} }`),
    graphqlAttack("many filters", "a search with every filter and 50 categories, 50 teams and 50 sites", `{ ${search("deadlock", "hits { score }", `, filter: { kinds: [CONVERSATION, DOCUMENT_CHUNK], created: { from: "2020-01-01T00:00:00.000Z" }, categories: ${JSON.stringify(Array.from({ length: 50 }, (_, i) => `category-${i}`))}, teams: ${JSON.stringify(Array.from({ length: 50 }, (_, i) => `team-${i}`))}, sites: ${JSON.stringify(Array.from({ length: 50 }, (_, i) => `site-${i}.example`))} }`)} }`),
    { name: "chunked 15 MB comment", description: "a query that is 15 MB of comment, streamed without a Content-Length", concurrency: 2, maxRequests: 500, requests: [{ chunked: true, headers, body: graphqlBody(`{ __typename } #${"a".repeat(15_000_000)}`) }] },
    {
      name: "MCP resources/read batch",
      description: "POST /mcp with a batch of 10 reads of the schema resource",
      concurrency: CLIENTS,
      maxRequests: 20_000,
      requests: [{ url: mcpUrl, headers: { ...headers, accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-03-26" }, body: JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "resources/read", params: { uri: "schema://supergraph" } }))) }],
    },
    { name: "anonymous /readyz flood", description: "POST /readyz without a token", concurrency: 16, maxRequests: 500_000, requests: [{ url: setup.gatewayUrl.replace(/\/graphql$/, "/readyz"), headers: {}, body: "" }] },
  ];
}

/** A real cursor `depth` hits into the attacker's results for `query`, by paging 100 at a time (or the deepest there is). */
async function cursorAt(setup: AttackSetup, headers: Record<string, string>, query: string, depth: number): Promise<string | null> {
  let after: string | null = null;
  for (let seen = 0; seen < depth; seen += 100) {
    const response = await fetch(setup.gatewayUrl, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: graphqlBody(`query($after: String) { search(input: { query: ${JSON.stringify(query)}, limit: 100, after: $after }) { pageInfo { hasNextPage endCursor } } }`, { after }),
    });
    const body = (await response.json()) as { data?: { search: { pageInfo: { hasNextPage: boolean; endCursor: string | null } } | null } };
    const page = body.data?.search?.pageInfo;
    if (!page?.endCursor) break;
    after = page.endCursor;
    if (!page.hasNextPage) break;
  }
  return after;
}

/** A GraphQL multipart request (operations, map, files) of uploadDocuments with ten 1.1 MB text files. */
function multipartUpload(boundary: string, variant: number): string {
  const files = 10;
  const operations = JSON.stringify({ query: "mutation($files: [Upload!]!) { uploadDocuments(files: $files) { id } }", variables: { files: Array.from({ length: files }, () => null) } });
  const map = JSON.stringify(Object.fromEntries(Array.from({ length: files }, (_, i) => [String(i), [`variables.files.${i}`]])));
  const part = (name: string, value: string, fileName?: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${fileName ? `; filename="${fileName}"\r\nContent-Type: text/plain` : ""}\r\n\r\n${value}\r\n`;
  const text = (i: number) => `File ${variant}-${i} ${randomBytes(8).toString("hex")}\n` + "a few words about the order service deadlock again\n".repeat(22_000);
  return [part("operations", operations), part("map", map), ...Array.from({ length: files }, (_, i) => part(String(i), text(i), `file-${variant}-${i}.txt`)), `--${boundary}--\r\n`].join("");
}
