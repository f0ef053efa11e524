/**
 * The MCP server over the supergraph: the SDK's low-level `Server`, so that each tool's input
 * schema is exactly the JSON Schema derived from its operation (tool-catalog.ts), not one
 * re-expressed in zod.
 *
 * - tools/list: the catalog; tools/call: the tool's operation, run by `execute` as the caller
 *   (see graphql-executor.ts), answered by tool-result.ts;
 * - resources: the supergraph's API schema as SDL (`schema://supergraph`);
 * - prompts: `research_question` (research-prompt.ts).
 *
 * One server serves one caller: the HTTP endpoint makes one per request (stateless), the stdio
 * entry point one for the process. Creating one is cheap: the catalog is loaded once, at start-up.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { getVariableValues } from "graphql";
import type { ApiSchema } from "./api-schema.js";
import type { GraphQLExecutor } from "./graphql-executor.js";
import { RESEARCH_PROMPT, researchPrompt } from "./research-prompt.js";
import type { ToolDefinition } from "./tool-catalog.js";
import { DEFAULT_OUTPUT_BOUNDS, toolError, toolResult, type OutputBounds } from "./tool-result.js";

export interface McpServerOptions {
  tools: ToolDefinition[];
  apiSchema: ApiSchema;
  /** Runs an operation as the caller this server serves. */
  execute: GraphQLExecutor;
  bounds?: OutputBounds;
  /** The version reported to clients in `serverInfo`. */
  version?: string;
}

export const SCHEMA_RESOURCE_URI = "schema://supergraph";

const INSTRUCTIONS = [
  "Context search over one organization's knowledge: its AI-assistant conversations, uploaded documents, knowledge bases, and (when configured) the web and Slack.",
  "Start with `search`; open hits with `get_conversation` / `get_document`; long content comes in pages (pass `after`).",
  "Tools that spend credits (`research`, `discover_search_questions`, web providers in `search`) take `dryRun: true` to show the cost first; `estimate_credits` estimates all of them.",
  "Everything runs as the token's user: nothing outside their organization is visible. The `research_question` prompt shows a full research workflow; `schema://supergraph` is the GraphQL schema behind the tools.",
].join(" ");

export function createMcpServer(options: McpServerOptions): Server {
  const bounds = options.bounds ?? DEFAULT_OUTPUT_BOUNDS;
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  const server = new Server(
    { name: "context-search", title: "Context search supergraph", version: options.version ?? "0.1.0" },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false } }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: options.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: tool.annotations,
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    // An unknown tool is the client's protocol mistake, not a tool's failure: the spec answers it with InvalidParams.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${request.params.name}". Tools: ${[...byName.keys()].join(", ")}.`);
    const args = request.params.arguments ?? {};
    const refusal = checkArguments(options.apiSchema, tool, args);
    if (refusal) return refusal;
    const answer = await options.execute({ query: tool.document, operationName: tool.operationName, variables: args });
    return toolResult(tool.name, answer, bounds);
  });

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: SCHEMA_RESOURCE_URI,
        name: "supergraph-schema",
        title: "Supergraph API schema (GraphQL SDL)",
        description: "The GraphQL schema every tool's operation runs against: types, fields and their descriptions.",
        mimeType: "application/graphql",
      },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    if (request.params.uri !== SCHEMA_RESOURCE_URI) throw new McpError(ErrorCode.InvalidParams, `Unknown resource "${request.params.uri}": the one resource is ${SCHEMA_RESOURCE_URI}.`);
    return { contents: [{ uri: SCHEMA_RESOURCE_URI, mimeType: "application/graphql", text: options.apiSchema.sdl }] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [RESEARCH_PROMPT] }));

  server.setRequestHandler(GetPromptRequestSchema, (request) => {
    if (request.params.name !== RESEARCH_PROMPT.name) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt "${request.params.name}": the one prompt is ${RESEARCH_PROMPT.name}.`);
    try {
      return researchPrompt(request.params.arguments);
    } catch (error) {
      throw new McpError(ErrorCode.InvalidParams, (error as Error).message);
    }
  });

  return server;
}

/**
 * The call's arguments checked against the operation's variables before anything is sent, so
 * an agent gets a BAD_USER_INPUT that names the argument (and, for a name it made up, the ones
 * that exist) rather than whatever the query planner makes of it.
 */
function checkArguments(apiSchema: ApiSchema, tool: ToolDefinition, args: Record<string, unknown>): CallToolResult | null {
  const known = Object.keys(tool.inputSchema.properties);
  const unknown = Object.keys(args).filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    return toolError([{ message: `${tool.name} takes no argument ${unknown.map((name) => `"${name}"`).join(", ")}; its arguments are ${known.join(", ") || "none"}.`, extensions: { code: "BAD_USER_INPUT" } }]);
  }
  const coerced = getVariableValues(apiSchema.schema, tool.operation.variableDefinitions ?? [], args, { maxErrors: 10 });
  if (coerced.errors) return toolError(coerced.errors.map((error) => ({ message: error.message.replace(/^Variable "\$(\w+)"/, 'Argument "$1"'), extensions: { code: "BAD_USER_INPUT" } })));
  return null;
}
