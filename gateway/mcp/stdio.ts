/**
 * The MCP server over stdio, for agents that start their tools as local processes (`npm run mcp`):
 * the same tools as `/mcp`, run over HTTP against a running gateway with the caller's token, so
 * the gateway applies every rule exactly as for any client. stdout carries the protocol and
 * nothing else; whatever this process has to say goes to stderr.
 *
 * The tools are validated against the gateway's own schema, read by introspection with the
 * token; a gateway with introspection off (production) is read from `schemaFile` instead.
 */
import { readFileSync } from "node:fs";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { buildClientSchema, getIntrospectionQuery, printSchema, type IntrospectionQuery } from "graphql";
import { apiSchemaOf, type ApiSchema } from "./api-schema.js";
import { graphqlExecutor } from "./graphql-executor.js";
import { createMcpServer } from "./mcp-server.js";
import { DEFAULT_TOOLS_DIRECTORY, loadToolCatalog } from "./tool-catalog.js";

export interface StdioSettings {
  /** The gateway's GraphQL endpoint. */
  graphqlUrl: string;
  /** The caller's bearer token (without `Bearer `). */
  token: string;
  /** A supergraph or API schema SDL to fall back on when the gateway refuses introspection. */
  schemaFile: string;
  toolsDirectory: string;
}

export class StdioSetupError extends Error {
  override name = "StdioSetupError";
}

export const DEFAULT_GATEWAY_URL = "http://127.0.0.1:4000/graphql";

/** The settings from the environment `npm run mcp` runs in, or StdioSetupError saying which variable is wrong. */
export function stdioSettings(env: Record<string, string | undefined>, defaultSchemaFile: string): StdioSettings {
  const token = env.CONTEXT_SEARCH_TOKEN?.trim().replace(/^Bearer\s+/i, "");
  if (!token) {
    throw new StdioSetupError(
      "CONTEXT_SEARCH_TOKEN is not set: the MCP server acts as the user of a bearer token. Set it to a token of the gateway (`npm start` prints a dev token; `npm run token` signs one), e.g. CONTEXT_SEARCH_TOKEN=eyJ… npm run mcp",
    );
  }
  const graphqlUrl = env.GATEWAY_URL?.trim() || DEFAULT_GATEWAY_URL;
  try {
    const url = new URL(graphqlUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new StdioSetupError(`GATEWAY_URL must be the gateway's GraphQL endpoint, an http(s) URL such as ${DEFAULT_GATEWAY_URL} (got "${graphqlUrl}").`);
  }
  return { graphqlUrl, token, schemaFile: env.MCP_SCHEMA_FILE?.trim() || defaultSchemaFile, toolsDirectory: DEFAULT_TOOLS_DIRECTORY };
}

/** Serves MCP on this process's stdin/stdout until stdin closes. */
export async function serveStdio(settings: StdioSettings, log: (line: string) => void): Promise<void> {
  const authorization = `Bearer ${settings.token}`;
  const execute = graphqlExecutor(settings.graphqlUrl, authorization, (request) => fetch(request));
  const apiSchema = await gatewaySchema(settings, authorization, log);
  const { tools, unsupported } = loadToolCatalog(apiSchema.schema, settings.toolsDirectory);
  for (const problem of unsupported) log(`${problem.message}; the tool is left out`);
  const server = createMcpServer({ tools, apiSchema, execute });
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(new StdioServerTransport());
  // The SDK's transport does not end when its client closes stdin; this process should.
  process.stdin.once("end", () => void server.close());
  log(`context-search MCP server on stdio: ${tools.length} tools against ${settings.graphqlUrl}`);
  await closed;
}

async function gatewaySchema(settings: StdioSettings, authorization: string, log: (line: string) => void): Promise<ApiSchema> {
  let response: Response;
  try {
    response = await fetch(settings.graphqlUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json", authorization },
      body: JSON.stringify({ query: getIntrospectionQuery({ descriptions: true }) }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new StdioSetupError(`Cannot reach the gateway at ${settings.graphqlUrl} (${(error as Error).message}): start it (npm start) or set GATEWAY_URL.`);
  }
  const body = (await response.json().catch(() => null)) as { data?: IntrospectionQuery; errors?: { message: string; extensions?: { code?: string } }[] } | null;
  if (response.status === 401 || body?.errors?.some((error) => error.extensions?.code === "UNAUTHENTICATED")) {
    throw new StdioSetupError(`The gateway at ${settings.graphqlUrl} refused CONTEXT_SEARCH_TOKEN: ${body?.errors?.[0]?.message ?? `HTTP ${response.status}`}`);
  }
  if (body?.data?.__schema) return apiSchemaOf(printSchema(buildClientSchema(body.data)));
  log(`the gateway does not answer introspection (${body?.errors?.[0]?.message ?? `HTTP ${response.status}`}); validating the tools against ${settings.schemaFile}`);
  try {
    return apiSchemaOf(readFileSync(settings.schemaFile, "utf8"));
  } catch (error) {
    throw new StdioSetupError(`Cannot read the schema from ${settings.schemaFile} (${(error as Error).message}): set MCP_SCHEMA_FILE to the gateway's supergraph.`);
  }
}
