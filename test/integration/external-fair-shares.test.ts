/**
 * Fair shares of a vendor's bulkhead, with the external-search runtime as the configuration
 * builds it: one organization's 20 calls to a Serper stand-in that never answers hold only its
 * own share (EXTERNAL_MAX_CALLS_PER_ORGANIZATION, 4 by default) of the provider's 20 slots, its
 * other calls are skipped at once, and another organization's call still goes out and succeeds.
 * Before the shares, the 20 hanging calls held every slot and the other organization's call
 * waited for one until its deadline (or, with the queue full, was skipped). Counted, not timed.
 */
import { afterAll, beforeAll, expect, it } from "@jest/globals";
import { loadConfig } from "../../lib/config.js";
import type { ProviderOutcome } from "../../lib/external-apis/policies.js";
import { silentLogger } from "../../lib/logger.js";
import { createExternalSearchRuntime, type ExternalSearchRuntime } from "../../subgraphs/external-search/runtime.js";
import { SerperClient } from "../../subgraphs/external-search/providers/serper.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { SerperStandIn } from "../support/external/serper-stand-in.js";

const config = loadConfig({});
let db: TestDatabase;
let runtime: ExternalSearchRuntime;
let hanging: SerperStandIn;
let answering: SerperStandIn;
let stuck: Promise<ProviderOutcome<unknown>>[] = [];

beforeAll(async () => {
  // The runtime only holds the database for credentials and the ledger, which these calls never read.
  db = await createTestDatabase({ migrate: false });
  runtime = createExternalSearchRuntime({ database: db.database, config, logger: silentLogger });
  hanging = await SerperStandIn.start();
  hanging.fault = "hang";
  answering = await SerperStandIn.start();
});

afterAll(async () => {
  // Ends the hung requests: their calls fail now instead of at their deadline.
  await hanging?.close();
  await Promise.all(stuck);
  await answering?.close();
  await runtime?.close();
  await db?.dispose();
});

it("keeps one organization's hanging calls to its own share, and another organization's call goes out", async () => {
  const { maxConcurrentCalls: concurrency, maxCallsPerOrganization: share } = config.externalSearch;
  expect([concurrency, share]).toEqual([20, 4]);
  const search = (standIn: SerperStandIn) => (signal: AbortSignal) => new SerperClient({ baseUrl: standIn.baseUrl }).search("espresso", { apiKey: standIn.apiKey }, { signal, limit: 5 });

  // Each call takes its slot (or is skipped) before settle() first awaits, so all 20 are placed now.
  stuck = Array.from({ length: 20 }, () => runtime.policies.settle("serper", "org-noisy", search(hanging)));
  const skipped = (await Promise.all(stuck.slice(share))).map((outcome) => outcome.status === "SKIPPED" && outcome.reason);
  expect(skipped).toEqual(Array(16).fill("serper skipped for organization org-noisy: its share of 4 calls is already in flight or waiting"));
  while (hanging.requests.length < share) await new Promise((resolve) => setTimeout(resolve, 10));

  const quiet = await runtime.policies.settle("serper", "org-quiet", search(answering));
  expect(quiet.status).toBe("OK");
  expect(answering.requests).toHaveLength(1);
  // The noisy organization's share was all that reached the vendor.
  expect(hanging.requests).toHaveLength(share);
  expect(runtime.policies.bulkheadState("serper").executionSlots).toBe(concurrency - share);
});
