/**
 * `npm start`: the whole product in one process on the configured database (the embedded
 * PGlite unless DATABASE_URL is set): migrate, seed the demo organization on first run, start
 * every subgraph and the gateway, and print how to try it.
 */
import { reportDemoIndexing, seedDemoOrganization } from "../app/demo-seed.js";
import { startStack } from "../app/stack.js";
import { loadConfig } from "../lib/config.js";
import { openDatabase } from "../lib/database/connect.js";
import { migrate } from "../lib/database/migrate.js";
import { DEMO_ORGANIZATION, DEMO_TEAMS, DEMO_USERS } from "../lib/demo-data/organization.js";
import { createLogger } from "../lib/logger.js";
import { exitOnSignals, runMain } from "../lib/shutdown.js";
import { closeWorkerPools } from "../lib/workers/pool.js";
import { signToken } from "../lib/tenancy/token.js";
import { WEB_APP_DIRECTORY } from "../gateway/web-app.js";

const EXAMPLE_QUERY = `query RecentConversations {
  conversations(first: 5) {
    totalCount
    nodes { id title messageCount updatedAt }
    pageInfo { hasNextPage endCursor }
  }
}`;

const SEARCH_QUERY = `query Search {
  search(input: { query: "why does the order service deadlock?", alpha: 0.5, limit: 10 }) {
    hits {
      score
      item {
        ... on Conversation { id title updatedAt }
        ... on DocumentChunk { id headingPath page document { fileName category } }
      }
      explanation { provider rank contribution }
    }
    providers { name status tookMs returned error }
    pageInfo { hasNextPage endCursor }
  }
  searchIndexStatus { model pending failing }
}`;

/**
 * How to connect an MCP client (Claude Desktop, Claude Code, Cursor, VS Code, agent frameworks):
 * over Streamable HTTP at /mcp, or over stdio with `npm run mcp`. `--silent` keeps npm's own
 * banner off stdout, which belongs to the protocol.
 */
function connectAnAgent(mcpUrl: string, graphqlUrl: string, token: string): string[] {
  const http = { mcpServers: { "context-search": { type: "http", url: mcpUrl, headers: { Authorization: `Bearer ${token}` } } } };
  const stdio = { mcpServers: { "context-search": { command: "npm", args: ["--prefix", process.cwd(), "run", "--silent", "mcp"], env: { GATEWAY_URL: graphqlUrl, CONTEXT_SEARCH_TOKEN: token } } } };
  // Arrays of strings on one line: the snippet stays short enough to read in a terminal.
  const indent = (value: unknown) =>
    JSON.stringify(value, null, 2)
      .replace(/\[\s+((?:"[^"]*",?\s*)+)\]/g, (_, items: string) => `[${items.trim().split(/,\s+/).join(", ")}]`)
      .replace(/^/gm, "    ");
  return [
    `Connect an agent (MCP, ${mcpUrl}): add to your MCP client's configuration`,
    indent(http),
    "  or, for clients that start local processes (stdio):",
    indent(stdio),
  ];
}

async function warmUp(url: string, token: string, logger: ReturnType<typeof createLogger>): Promise<void> {
  try {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify({ query: EXAMPLE_QUERY }) });
    await response.text();
  } catch (error) {
    logger.warn(`the warm-up request failed (the first request will be slower): ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Where a start's time goes, logged at debug level (LOG_LEVEL=debug) once it is up: the phases of
 * the first-start and restart figures in the README, for whoever wants to know why theirs is slow.
 */
function startPhases() {
  const phases: string[] = [];
  let last = 0;
  return {
    lap(name: string) {
      const now = performance.now();
      phases.push(`${name} ${((now - last) / 1000).toFixed(2)} s`);
      last = now;
    },
    toString: () => phases.join(", "),
  };
}

runMain(async () => {
  const phases = startPhases();
  phases.lap("loading modules");
  const config = loadConfig();
  const logger = createLogger("start", config.logLevel);
  const database = await openDatabase({ ...config.database, logger: logger.child("database") });
  logger.info(`database: ${database.location}`);
  phases.lap("opening the database");

  const migrations = await migrate(database);
  if (migrations.applied.length > 0) logger.info(`applied migrations: ${migrations.applied.join(", ")}`);
  phases.lap("migrations");

  let devToken: string | null = null;
  let seededDocuments = false;
  if (config.demo.seed) {
    const seeded = await seedDemoOrganization(database, { conversations: config.demo.conversations, documents: { logger: logger.child("seed") } });
    seededDocuments = seeded.seeded && seeded.documents > 0;
    if (seeded.seeded) logger.info(`seeded ${DEMO_ORGANIZATION.name}: ${seeded.conversations} conversations, ${seeded.messages} messages, ${seeded.documents} documents`);
    if (!config.production) {
      const user = DEMO_USERS[0];
      // An admin, so that a newcomer can try every mutation, organization-wide ones included.
      devToken = await signToken(
        { userId: user.id, organizationId: DEMO_ORGANIZATION.id, teamIds: DEMO_TEAMS.filter((team) => (team.members as readonly string[]).includes(user.id)).map((team) => team.id), role: "admin", name: user.name, email: user.email },
        config.auth,
        "30d",
      );
    }
  }

  phases.lap("demo seed");
  const stack = await startStack({
    config,
    database,
    logger,
    gateway: {
      ...(devToken ? { graphiqlHeaders: { Authorization: `Bearer ${devToken}` } } : {}),
      webApp: { directory: WEB_APP_DIRECTORY, devToken },
      graphiqlQuery: `${EXAMPLE_QUERY}\n\n${SEARCH_QUERY}\n`,
    },
  });
  exitOnSignals(
    async () => {
      await stack.stop();
      await closeWorkerPools();
      await database.close();
    },
    logger,
    // The gateway drains, then the subgraphs do.
    { drainTimeoutMs: config.shutdown.drainTimeoutMs, sequentialDrains: 2 },
  );

  phases.lap("subgraphs and gateway");
  const url = stack.gateway.url;
  // The first request through a new gateway builds what the runtime makes lazily (its executors
  // for the subgraphs, the stitching of their schemas): over a second of that request on a busy
  // 2-core machine (issue 38). The example the banner prints is sent once here, so that "up"
  // means ready to answer at full speed. Only with the dev token: it needs a user.
  if (devToken) await warmUp(url, devToken, logger);
  phases.lap("warm-up request");
  logger.debug(`start phases: ${phases}`);
  const lines = [
    "",
    // performance.now() counts from the process's start (its timeOrigin), module loading included:
    // the time a user waits after typing `npm start`, less npm's own start.
    `Context search supergraph is up in ${(performance.now() / 1000).toFixed(1)} s`,
    `  web app: ${url.replace(/\/graphql$/, "/")}`,
    `  GraphQL endpoint + GraphiQL: ${url}`,
    `  health: ${url.replace("/graphql", "/healthz")}   readiness: ${url.replace("/graphql", "/readyz")}`,
    `  MCP server for agents (Streamable HTTP, same bearer token): ${url.replace(/\/graphql$/, "/mcp")}`,
    ...stack.subgraphs.map((subgraph) => `  subgraph ${subgraph.name}: ${subgraph.url}`),
  ];
  if (devToken) {
    lines.push(
      "",
      `Dev token for ${DEMO_USERS[0].name} in ${DEMO_ORGANIZATION.name} (an admin, valid 30 days; GraphiQL already sends it):`,
      `  ${devToken}`,
      "",
      "Try it:",
      `  curl -s ${url} \\`,
      `    -H 'content-type: application/json' \\`,
      `    -H 'authorization: Bearer ${devToken}' \\`,
      `    -d '${JSON.stringify({ query: EXAMPLE_QUERY.replace(/\s+/g, " ") })}'`,
      "",
      ...connectAnAgent(url.replace(/\/graphql$/, "/mcp"), url, devToken),
    );
  }
  if (config.auth.usingDevSecret) lines.push("", "JWT_SECRET is not set: using the built-in development secret. Set JWT_SECRET for anything shared.");
  process.stdout.write(`${lines.join("\n")}\n\n`);
  if (seededDocuments) void reportDemoIndexing(database, logger.child("seed"));
});
