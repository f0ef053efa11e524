/**
 * The whole product for one test file, as `npm start` runs it (app/stack.ts), on a database of
 * the file's own: every server on a free port, the test signing secrets, the instant hashing
 * embedder unless the file asks for another, quiet logs. One file boots one stack in its
 * beforeAll and shares it across its tests; files do not share a stack, because each file runs
 * in a worker process of its own (jest.config.js says why).
 */
import { startStack, type RunningStack, type StackOptions } from "../../app/stack.js";
import { loadConfig, type Config } from "../../lib/config.js";
import { silentLogger, type Logger } from "../../lib/logger.js";
import { createTestDatabase, type TestDatabase, type TestDatabaseOptions } from "./database.js";
import { TEST_AUTH } from "./tenants.js";

/** Every server on a port the system picks, so files running side by side never collide. */
export const EPHEMERAL_PORTS = { GATEWAY_PORT: "0", CONVERSATIONS_PORT: "0", SEARCH_PORT: "0", KNOWLEDGE_BASE_PORT: "0", EXTERNAL_SEARCH_PORT: "0" } as const;

export interface TestStack {
  db: TestDatabase;
  config: Config;
  stack: RunningStack;
  /** Stops the servers, then drops the database. */
  stop(): Promise<void>;
}

export async function startTestStack(env: Record<string, string> = {}, options: { logger?: Logger; gateway?: StackOptions["gateway"]; database?: TestDatabaseOptions; answerModel?: StackOptions["answerModel"] } = {}): Promise<TestStack> {
  const db = await createTestDatabase(options.database);
  try {
    const config: Config = { ...loadConfig({ ...EPHEMERAL_PORTS, EMBEDDER: "hashing", ...env }), auth: { ...TEST_AUTH, usingDevSecret: false } };
    const stack = await startStack({ config, database: db.database, logger: options.logger ?? silentLogger, gateway: { runtimeLogLevel: false, ...options.gateway }, ...(options.answerModel ? { answerModel: options.answerModel } : {}) });
    return {
      db,
      config,
      stack,
      async stop() {
        await stack.stop();
        await db.dispose();
      },
    };
  } catch (error) {
    await db.dispose();
    throw error;
  }
}
