/**
 * Graceful drain (issue 19, defect 1) where it matters: separate processes started the way
 * production starts them, receiving a real SIGTERM. Hive Gateway's runtime registers its own
 * SIGTERM handler, which only exists in a real process: it disposed the runtime at the signal and
 * every operation still waiting on a subgraph failed (0 of 200 completed) while our drain waited.
 *
 * The gateway (NODE_ENV production, then development) and then the conversations subgraph are
 * each stopped once with 600 requests in flight in three states (test/support/drain-under-load.ts):
 * all 600 get their real answers, late requests a retryable SHUTTING_DOWN, and nothing is reset.
 * The other subgraphs: graceful-drain-subgraph-processes.test.ts.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { drainWithThreeStates, type DrainWorkload } from "../support/drain-under-load.js";
import { graphql } from "../support/graphql.js";
import { startGatewayProcess, startSubgraphProcess, supergraphAt, type ServerProcess, type SubgraphProcess } from "../support/server-processes.js";
import { tokenFor } from "../support/tenants.js";

/** Generous: the drain must end because everything was answered, not by its deadline. */
const DRAIN_TIMEOUT_MS = "120000";
const ORGANIZATION = "org-drain";
/** 8 messages of 100,000 characters: an 800 KB answer. */
const BIG_MESSAGES = Array.from({ length: 8 }, (_, index) => ({ role: "USER", content: `${index} ${"streamed text ".repeat(7_142)}` }));

let dataRoot: string;
let conversations: SubgraphProcess;
const started: ServerProcess[] = [];
let workload: DrainWorkload;

beforeAll(async () => {
  dataRoot = fs.mkdtempSync(path.join(os.tmpdir(), "graceful-drain-processes-"));
  // The gateway's supergraph names four subgraphs; only conversations is called here, and the
  // others are not started (readiness is not asked before the drain).
  conversations = await startSubgraphProcess("conversations", { dataDir: path.join(dataRoot, "conversations"), nodeEnv: "production", env: { SHUTDOWN_DRAIN_TIMEOUT_MS: DRAIN_TIMEOUT_MS } });
  started.push(conversations);
  const created = await graphql(conversations.url, `mutation($input: CreateConversationInput!) { createConversation(input: $input) { id } }`, { input: { title: "Streamed", messages: BIG_MESSAGES } }, { token: await tokenFor(ORGANIZATION, "reader") });
  expect(created.errors).toBeUndefined();
  const bigConversationId = created.data!.createConversation.id as string;
  workload = {
    organizationId: ORGANIZATION,
    streaming: {
      query: `query Big($id: ID!) { conversation(id: $id) { id messages(first: 50) { nodes { content } } } }`,
      variables: () => ({ id: bigConversationId }),
      check: (data) => expect(data.conversation.messages.nodes.map((node: { content: string }) => node.content)).toEqual(BIG_MESSAGES.map((message) => message.content)),
    },
    waiting: {
      query: `query Page($first: Int!) { conversations(first: $first) { nodes { id title } } }`,
      variables: () => ({ first: 3 }),
      check: (data) => expect(Array.isArray(data.conversations.nodes)).toBe(true),
    },
    writing: {
      query: `mutation Create($title: String!) { createConversation(input: { title: $title }) { id title } }`,
      variables: (index) => ({ title: `written during the drain ${index}` }),
      check: (data, index) => expect(data.createConversation.title).toBe(`written during the drain ${index}`),
    },
  };
}, 180_000);

afterAll(() => {
  for (const server of started) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
  fs.rmSync(dataRoot, { recursive: true, force: true });
});

describe.each(["production", "development"] as const)("the gateway process (NODE_ENV=%s) on SIGTERM", (nodeEnv) => {
  it("answers all 600 requests in flight: waiting on a slow subgraph, mid-write, and streaming to slow readers", async () => {
    const unused = "http://127.0.0.1:9/graphql";
    const supergraphPath = supergraphAt({ conversations: conversations.url, search: unused, "knowledge-base": unused, "external-search": unused }, fs.mkdtempSync(path.join(dataRoot, "gateway-")));
    const gateway = await startGatewayProcess({ supergraphPath, nodeEnv, env: { SHUTDOWN_DRAIN_TIMEOUT_MS: DRAIN_TIMEOUT_MS, UPSTREAM_TIMEOUT_MS: DRAIN_TIMEOUT_MS, GATEWAY_RESPONSE_CACHE_TTL_SECONDS: "0" } });
    started.push(gateway);
    await drainWithThreeStates(gateway, conversations, workload);
  }, 240_000);
});

describe("the conversations subgraph process on SIGTERM", () => {
  it("answers all 600 requests in flight: waiting on a slow database, mid-write, and streaming to slow readers", async () => {
    await drainWithThreeStates(conversations, conversations, workload);
  }, 240_000);
});
