/**
 * `npm run mcp`: the context-search MCP server over stdio, for agents that start their tools as
 * local processes (Claude Desktop, IDE assistants). It runs the same tools as the gateway's
 * `/mcp`, against a running gateway over HTTP, as the user of CONTEXT_SEARCH_TOKEN:
 *
 *   CONTEXT_SEARCH_TOKEN=<token> GATEWAY_URL=http://127.0.0.1:4000/graphql npm run mcp
 *
 * stdout is the protocol's: everything else this process says goes to stderr.
 */
import { StdioSetupError, serveStdio, stdioSettings } from "../gateway/mcp/stdio.js";
import { ToolDefinitionError } from "../gateway/mcp/tool-catalog.js";
import { besideModule } from "../lib/project-files.js";

const log = (line: string) => void process.stderr.write(`[context-search mcp] ${line}\n`);

try {
  await serveStdio(stdioSettings(process.env, besideModule("../supergraph.graphql", import.meta.url).pathname), log);
  process.exit(0);
} catch (error) {
  // Setup errors say what to fix; anything else is a bug worth its stack.
  const known = error instanceof StdioSetupError || error instanceof ToolDefinitionError;
  log(known ? (error as Error).message : ((error as Error).stack ?? String(error)));
  process.exit(1);
}
