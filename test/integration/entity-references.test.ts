/**
 * `_entities` under malformed references, against each subgraph directly (no gateway in front,
 * as an attacker who reaches a subgraph would call it): a reference the subgraph cannot read is
 * the caller's mistake (BAD_USER_INPUT on that reference alone), never an internal error, never
 * a stack in the log, and never a reason to drop the valid references of the same batch.
 */
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import { startSubgraph, type RunningSubgraph } from "../../lib/graphql/subgraph-server.js";
import { conversationsSubgraph } from "../../subgraphs/conversations/index.js";
import { ConversationStore } from "../../subgraphs/conversations/conversation-store.js";
import { FeatureHashingEmbedder } from "../../lib/retrieval/embeddings/hashing-embedder.js";
import { searchSubgraph } from "../../subgraphs/search/index.js";
import { NoResultCache } from "../../lib/cache/result-cache.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { errorCodes, graphql } from "../support/graphql.js";
import { recordingLogger } from "../support/recording-logger.js";
import { TEST_AUTH, tokenFor } from "../support/tenants.js";

let db: TestDatabase;
let conversations: RunningSubgraph;
let search: RunningSubgraph;
const conversationsLog = recordingLogger();
const searchLog = recordingLogger();
let token: string;
let ids: string[];

const ENTITIES = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Conversation { id title } } }`;
const entities = (subgraph: RunningSubgraph, representations: unknown[], withToken = true) =>
  graphql(subgraph.url, ENTITIES, { r: representations }, { token: withToken ? token : null });

beforeAll(async () => {
  db = await createTestDatabase();
  conversations = await startSubgraph(conversationsSubgraph(db.database), { host: "127.0.0.1", port: 0, auth: TEST_AUTH, production: false, logger: conversationsLog });
  const config = loadConfig({ SEARCH_INDEXER: "false" });
  search = await startSubgraph(await searchSubgraph({ database: db.database, config, logger: searchLog, embedder: new FeatureHashingEmbedder(), cache: new NoResultCache() }), {
    host: "127.0.0.1",
    port: 0,
    auth: TEST_AUTH,
    production: false,
    logger: searchLog,
  });
  token = await tokenFor("org-refs", "rita");
  const store = new ConversationStore(db.database.prisma);
  const tenant = { organizationId: "org-refs", userId: "rita", teamIds: [], role: "member" as const, userName: null, userEmail: null };
  ids = [];
  for (const title of ["First", "Second"]) ids.push((await store.create(tenant, title, [])).id);
});

afterAll(async () => {
  await search?.stop();
  await conversations?.stop();
  await db?.dispose();
});

const conversation = (id: unknown) => ({ __typename: "Conversation", id });

describe("conversations subgraph _entities", () => {
  it.each([
    ["no __typename", { id: "x" }],
    ["an unknown __typename", { __typename: "Spaceship", id: "x" }],
    ["a type that is not an entity", { __typename: "ConversationConnection", id: "x" }],
    ["a numeric id", conversation(123)],
    ["no id", { __typename: "Conversation" }],
    ["an object as id", conversation({ $gt: "" })],
    ["a string instead of an object", "Conversation:x"],
  ])("answers %s with BAD_USER_INPUT on that reference only, with or without a token, and logs nothing", async (_name, bad) => {
    for (const withToken of [true, false]) {
      conversationsLog.lines.length = 0;
      const response = await entities(conversations, [conversation(ids[0]), bad, conversation(ids[1])], withToken);
      const codes = errorCodes(response);
      expect(codes).not.toContain("INTERNAL_SERVER_ERROR");
      expect(codes).toContain("BAD_USER_INPUT");
      const badError = response.errors!.find((error) => error.extensions?.code === "BAD_USER_INPUT")!;
      expect(badError.path).toEqual(["_entities", 1]);
      expect(badError.extensions?.field).toBe("representations[1]" + (typeof bad === "object" && "__typename" in bad && bad.__typename === "Conversation" ? ".id" : ""));
      if (withToken) {
        expect(response.errors).toHaveLength(1);
        expect(response.data!._entities).toEqual([{ id: ids[0], title: "First" }, null, { id: ids[1], title: "Second" }]);
      } else {
        // Without a token the valid references are refused too, but as UNAUTHENTICATED: the caller's mistake.
        expect(new Set(codes)).toEqual(new Set(["BAD_USER_INPUT", "UNAUTHENTICATED"]));
      }
      expect(conversationsLog.lines).toEqual([]);
    }
  });

  it("resolves an upper-case UUID to its row, and a UUID or string id that names no conversation to null", async () => {
    const response = await entities(conversations, [conversation(ids[0]!.toUpperCase()), conversation("00000000-0000-4000-8000-000000000000"), conversation("x"), conversation("")]);
    expect(response.errors).toBeUndefined();
    expect(response.data!._entities).toEqual([{ id: ids[0], title: "First" }, null, null, null]);
  });

  it("still loads a batch of valid references with one SQL statement", async () => {
    db.database.statements.reset();
    const response = await entities(conversations, [conversation(ids[0]), conversation(123), conversation(ids[1])]);
    expect(response.data!._entities).toEqual([{ id: ids[0], title: "First" }, null, { id: ids[1], title: "Second" }]);
    expect(db.database.statements.count).toBe(1);
  });
});

describe("search subgraph _entities", () => {
  const REFS = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Conversation { id } } }`;

  it.each([
    ["no __typename", { id: "x" }],
    ["an unknown __typename", { __typename: "Spaceship", id: "x" }],
    ["a type that is not an entity", { __typename: "SearchResult" }],
    ["a string instead of an object", "x"],
  ])("answers %s with BAD_USER_INPUT on that reference only and logs nothing", async (_name, bad) => {
    searchLog.lines.length = 0;
    const response = await graphql(search.url, REFS, { r: [conversation(ids[0]), bad] }, { token });
    expect(errorCodes(response)).toEqual(["BAD_USER_INPUT"]);
    expect(response.errors![0]!.path).toEqual(["_entities", 1]);
    expect(response.data!._entities).toEqual([{ id: ids[0] }, null]);
    expect(searchLog.lines).toEqual([]);
  });
});
