/**
 * Graceful drain (issue 19, defect 1) of the search, knowledge-base and external-search
 * subgraphs, each a separate process started as production starts it and stopped with a real
 * SIGTERM while 600 requests are in flight in three states (test/support/drain-under-load.ts).
 * Under load the search subgraph used to answer 31 of 200 and reset the rest. The gateway and the
 * conversations subgraph: graceful-drain-processes.test.ts.
 *
 * The database is held for less than the 30 s a tenant scope waits to start its transaction
 * (lib/database/tenant-scope.ts); held longer, the writes would fail before any drain.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { drainWithThreeStates, type DrainWorkload } from "../support/drain-under-load.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";
import { graphql } from "../support/graphql.js";
import { startSubgraphProcess, type SubgraphProcess } from "../support/server-processes.js";
import { tokenFor } from "../support/tenants.js";

const DRAIN_TIMEOUT_MS = "120000";
const ORGANIZATION = "org-drain";
/** Enough of a kind to page 100 of them: the largest answer each subgraph gives one caller. */
const LISTED = 100;

let dataRoot: string;
let search: SubgraphProcess;

beforeAll(async () => {
  dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), "graceful-drain-subgraphs-"));
  search = await startSubgraphProcess("search", { dataDir: path.join(dataRoot, "search"), nodeEnv: "production", env: { SHUTDOWN_DRAIN_TIMEOUT_MS: DRAIN_TIMEOUT_MS } });
}, 180_000);

afterAll(() => {
  if (search && search.child.exitCode === null && search.child.signalCode === null) search.child.kill("SIGKILL");
  fs.rmSync(dataRoot, { recursive: true, force: true });
});

async function seed(url: string, query: string, variables: (index: number) => Record<string, unknown>) {
  const token = await tokenFor(ORGANIZATION, "reader");
  for (let index = 0; index < LISTED; index += 1) {
    const answer = await graphql(url, query, variables(index), { token });
    expect(answer.errors).toBeUndefined();
  }
}

describe("the search subgraph process on SIGTERM", () => {
  it("answers all 600 requests in flight: waiting on a slow database, mid-write, and streaming to slow readers", async () => {
    const longQuery = (index: number) => `${index} ${"what the drain must not drop ".repeat(34)}`.slice(0, 1_000);
    await seed(search.url, `mutation($input: SaveSearchInput!) { saveSearch(input: $input) { id } }`, (index) => ({ input: { name: `listed ${index}`, query: longQuery(index) } }));
    const workload: DrainWorkload = {
      organizationId: ORGANIZATION,
      streaming: {
        query: `query Listed { savedSearches(first: ${LISTED}) { nodes { id name query } } }`,
        variables: () => ({}),
        check: (data) => expect(data.savedSearches.nodes).toHaveLength(LISTED),
      },
      waiting: {
        query: `query Saved { savedSearches(first: 1) { nodes { id } } }`,
        variables: () => ({}),
        check: (data) => expect(data.savedSearches.nodes).toEqual([]),
      },
      writing: {
        query: `mutation Save($name: String!) { saveSearch(input: { name: $name, query: "drain" }) { name } }`,
        variables: (index) => ({ name: `saved during the drain ${index}` }),
        check: (data, index) => expect(data.saveSearch.name).toBe(`saved during the drain ${index}`),
      },
    };
    await drainWithThreeStates(search, search, workload);
  }, 300_000);
});

describe("the knowledge-base subgraph process on SIGTERM", () => {
  it("answers all 600 requests in flight: waiting on a slow database, mid-write, and streaming to slow readers", async () => {
    const knowledgeBase = await startSubgraphProcess("knowledge-base", {
      dataDir: path.join(dataRoot, "knowledge-base"),
      nodeEnv: "production",
      env: {
        SHUTDOWN_DRAIN_TIMEOUT_MS: DRAIN_TIMEOUT_MS,
        // 200 uploads of one organization at once must all be parsed and reach the database: the
        // parse pool's fair share per organization would refuse most of them OVERLOADED.
        DOCUMENT_PARSE_PER_ORGANIZATION: "2",
        DOCUMENT_PARSE_QUEUE_PER_ORGANIZATION: "1000",
        DOCUMENT_PARSE_QUEUE: "1000",
        // The seed's and the workload's documents wait unindexed (no indexer runs here): past
        // the backlog limit (200) they would be refused OVERLOADED.
        DOCUMENT_BACKLOG_PER_ORGANIZATION: "10000",
      },
    });
    try {
      const text = (label: string) => Buffer.from(`# ${label}\n\nA document uploaded around a drain.\n`).toString("base64");
      await seed(knowledgeBase.url, `mutation($input: UploadDocumentInput!) { uploadDocument(input: $input) { id } }`, (index) => ({ input: { fileName: `${"listed-".repeat(30)}${index}.md`, contentBase64: text(`listed ${index}`), category: "c".repeat(100) } }));
      const workload: DrainWorkload = {
        organizationId: ORGANIZATION,
        streaming: {
          query: `query Listed { documents(first: ${LISTED}) { nodes { id fileName category contentHash mediaType status } } }`,
          variables: () => ({}),
          check: (data) => expect(data.documents.nodes).toHaveLength(LISTED),
        },
        waiting: {
          query: `query Documents { documents(first: 1) { nodes { id } } }`,
          variables: () => ({}),
          check: (data) => expect(data.documents.nodes).toEqual([]),
        },
        writing: {
          query: `mutation Upload($input: UploadDocumentInput!) { uploadDocument(input: $input) { fileName } }`,
          variables: (index) => ({ input: { fileName: `during-the-drain-${index}.md`, contentBase64: text(`during the drain ${index}`) } }),
          check: (data, index) => expect(data.uploadDocument.fileName).toBe(`during-the-drain-${index}.md`),
        },
      };
      await drainWithThreeStates(knowledgeBase, knowledgeBase, workload);
    } finally {
      if (knowledgeBase.child.exitCode === null && knowledgeBase.child.signalCode === null) knowledgeBase.child.kill("SIGKILL");
    }
  }, 300_000);
});

describe("the external-search subgraph process on SIGTERM", () => {
  it("answers all 600 requests in flight: waiting on a slow database, mid-write (the credit reservation), and streaming to slow readers", async () => {
    const serper = await SerperStandIn.start();
    const externalSearch = await startSubgraphProcess("external-search", {
      dataDir: path.join(dataRoot, "external-search"),
      nodeEnv: "production",
      env: {
        SHUTDOWN_DRAIN_TIMEOUT_MS: DRAIN_TIMEOUT_MS,
        SERPER_API_KEY: serper.apiKey,
        SERPER_BASE_URL: serper.baseUrl,
        // 200 calls at once must all be sent, none refused by the bulkhead or a deadline.
        EXTERNAL_MAX_CONCURRENT_CALLS: "1000",
        EXTERNAL_MAX_QUEUED_CALLS: "1000",
        EXTERNAL_MAX_CALLS_PER_ORGANIZATION: "1000",
        EXTERNAL_ATTEMPT_TIMEOUT_MS: DRAIN_TIMEOUT_MS,
        EXTERNAL_CALL_TIMEOUT_MS: DRAIN_TIMEOUT_MS,
      },
    });
    try {
      const webSearch = `query Web($query: String!, $limit: Int!) { webSearch(query: $query, providers: [SERPER], limit: $limit) { results { url title snippet } calls { provider status } } }`;
      const workload: DrainWorkload = {
        organizationId: ORGANIZATION,
        streaming: {
          query: webSearch,
          variables: () => ({ query: "the largest answer", limit: 50 }),
          check: (data) => expect(data.webSearch.results.length).toBeGreaterThan(0),
        },
        waiting: {
          query: `query Credits { credits { spentThisMonth balance } }`,
          variables: () => ({}),
          check: (data) => expect(typeof data.credits.spentThisMonth).toBe("number"),
        },
        writing: {
          query: webSearch,
          variables: (index) => ({ query: `written during the drain ${index}`, limit: 5 }),
          check: (data) => expect(data.webSearch.calls.map((call: { status: string }) => call.status)).toEqual(["OK"]),
        },
      };
      await drainWithThreeStates(externalSearch, externalSearch, workload);
    } finally {
      if (externalSearch.child.exitCode === null && externalSearch.child.signalCode === null) externalSearch.child.kill("SIGKILL");
      await serper.close();
    }
  }, 300_000);
});
