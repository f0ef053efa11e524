/**
 * The MCP tools: one GraphQL operation per file in gateway/mcp/tools/, the file's name (without
 * `.graphql`) being the tool's name. Adding a tool is adding a file; nothing else changes.
 *
 * A file opens with a comment block, the tool's card for an agent choosing among tools:
 *
 *   # Finds … (what the tool does and when to use it: one or more lines).
 *   #
 *   # @param query What to search for.
 *   # @param limit How many hits (continuation lines carry on the description).
 *   # @destructive          (optional: the tool deletes or overwrites something)
 *   query Search($query: String!, $limit: Int = 10) { … }
 *
 * At start-up every file is parsed and validated against the supergraph's API schema. A file whose
 * operation does not validate (the supergraph lacks a field it uses: a platform team's supergraph
 * with only some of our subgraphs) is left out of the catalog with one warning naming the file and
 * the GraphQL error; a file that is wrong whatever the supergraph (it does not parse, holds no
 * single operation, leaves a variable undescribed) stops the start. A variable needs a
 * description: from its `@param`, or else from the schema's description of the argument or input
 * field it is passed to.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { besideModule } from "../../lib/project-files.js";
import {
  GraphQLError,
  Kind,
  TypeInfo,
  getNamedType,
  isInputObjectType,
  parse,
  validate,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { inputSchemaOf, type ToolInputSchema } from "./input-schema.js";

export interface ToolDefinition {
  /** The MCP tool name: the file's name. */
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  /** The whole file (operation and fragments), sent as it is. */
  document: string;
  operationName: string | null;
  operationType: "query" | "mutation";
  /** Hints for clients that ask before running a tool that changes or deletes something. */
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  /** The parsed operation, for coercing a call's arguments (input-coercion.ts). */
  operation: OperationDefinitionNode;
}

export class ToolDefinitionError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`MCP tool ${file}: ${message}`);
    this.name = "ToolDefinitionError";
  }
}

/** gateway/mcp/tools/, beside this file's source (also when it runs compiled from dist/). */
export const DEFAULT_TOOLS_DIRECTORY = besideModule("./tools/", import.meta.url).pathname;

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** A tool file that this supergraph cannot serve: what the catalog left out, and why. */
export class UnsupportedToolError extends ToolDefinitionError {
  constructor(file: string, message: string) {
    super(file, message);
    this.name = "UnsupportedToolError";
  }
}

export interface ToolCatalog {
  /** The tools this supergraph serves, in name order. */
  tools: ToolDefinition[];
  /** The files left out because their operation does not validate against this supergraph. */
  unsupported: UnsupportedToolError[];
}

/**
 * Every tool in `directory` that validates against `schema`, in name order. Throws
 * ToolDefinitionError naming the first file that is wrong in itself; files that only this
 * supergraph cannot serve are listed in `unsupported` (the caller warns once per file).
 */
export function loadToolCatalog(schema: GraphQLSchema, directory: string = DEFAULT_TOOLS_DIRECTORY): ToolCatalog {
  const files = readdirSync(directory)
    .filter((file) => file.endsWith(".graphql"))
    .sort();
  if (files.length === 0) throw new ToolDefinitionError(directory, "the directory has no .graphql files: each tool is one operation in its own file");
  const catalog: ToolCatalog = { tools: [], unsupported: [] };
  for (const file of files) {
    try {
      catalog.tools.push(toolFromSource(schema, file.replace(/\.graphql$/, ""), readFileSync(path.join(directory, file), "utf8"), path.join(directory, file)));
    } catch (error) {
      if (!(error instanceof UnsupportedToolError)) throw error;
      catalog.unsupported.push(error);
    }
  }
  return catalog;
}

/** One tool from its operation's source; `file` only names it in errors. */
export function toolFromSource(schema: GraphQLSchema, name: string, source: string, file: string = `${name}.graphql`): ToolDefinition {
  if (!TOOL_NAME.test(name)) throw new ToolDefinitionError(file, `"${name}" is not a tool name: use lower-case letters, digits and underscores, starting with a letter`);
  let document: DocumentNode;
  try {
    document = parse(source);
  } catch (error) {
    throw new ToolDefinitionError(file, `does not parse: ${(error as GraphQLError).message}`);
  }
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== 1) throw new ToolDefinitionError(file, `must hold exactly one operation (it holds ${operations.length})`);
  const operation = operations[0]!;
  if (operation.operation === "subscription") throw new ToolDefinitionError(file, "subscriptions cannot be tools: use a query or a mutation");
  // graphql-js 16 validates a mutation against a schema without a Mutation type as valid (its
  // fields have no parent type to be checked against); running it would fail on every call.
  if (!schema.getRootType(operation.operation)) throw new UnsupportedToolError(file, `does not validate against the supergraph: it has no ${operation.operation} type`);
  const errors = validate(schema, document);
  if (errors.length > 0) throw new UnsupportedToolError(file, `does not validate against the supergraph: ${errors.map((error) => error.message).join("; ")}`);

  const header = parseHeader(source, file);
  const variables = operation.variableDefinitions ?? [];
  const declared = new Set(variables.map((definition) => definition.variable.name.value));
  for (const param of header.params.keys()) {
    if (!declared.has(param)) throw new ToolDefinitionError(file, `@param ${param} names no variable of the operation (it has ${[...declared].map((variable) => `$${variable}`).join(", ") || "none"})`);
  }
  const descriptions = new Map(header.params);
  for (const [variable, description] of describedBySchema(schema, document)) if (!descriptions.has(variable)) descriptions.set(variable, description);
  const undescribed = [...declared].filter((variable) => !descriptions.has(variable));
  if (undescribed.length > 0) throw new ToolDefinitionError(file, `describe ${undescribed.map((variable) => `$${variable}`).join(", ")} with a "# @param" line: an agent needs to know what to pass`);

  const readOnly = operation.operation === "query";
  return {
    name,
    description: header.description,
    inputSchema: inputSchemaOf(schema, variables, descriptions),
    document: source,
    operationName: operation.name?.value ?? null,
    operationType: operation.operation,
    annotations: { readOnlyHint: readOnly, destructiveHint: header.destructive, idempotentHint: readOnly, openWorldHint: header.openWorld },
    operation,
  };
}

interface ToolHeader {
  description: string;
  params: Map<string, string>;
  destructive: boolean;
  openWorld: boolean;
}

/** The comment block before the first definition. */
function parseHeader(source: string, file: string): ToolHeader {
  const lines: string[] = [];
  for (const line of source.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed === "") {
      lines.push("");
      continue;
    }
    if (!trimmed.startsWith("#")) break;
    lines.push(trimmed.replace(/^#\s?/, ""));
  }
  const description: string[] = [];
  const params = new Map<string, string>();
  let destructive = false;
  let openWorld = false;
  let current: string | null = null;
  for (const line of lines) {
    const tag = /^@(\w+)\s*(.*)$/.exec(line.trim());
    if (tag) {
      current = null;
      if (tag[1] === "param") {
        const param = /^\$?(\w+)\s+(.+)$/.exec(tag[2]!);
        if (!param) throw new ToolDefinitionError(file, `"@param ${tag[2]}" needs a variable name and a description`);
        if (params.has(param[1]!)) throw new ToolDefinitionError(file, `@param ${param[1]} is described twice`);
        params.set(param[1]!, param[2]!.trim());
        current = param[1]!;
      } else if (tag[1] === "destructive") destructive = true;
      else if (tag[1] === "openWorld") openWorld = true;
      else throw new ToolDefinitionError(file, `unknown tag @${tag[1]} in the header (known: @param, @destructive, @openWorld)`);
      continue;
    }
    if (current && line.trim() !== "") params.set(current, `${params.get(current)} ${line.trim()}`);
    else if (!current) description.push(line);
    else current = null;
  }
  const text = description.join("\n").replace(/\n{3,}/g, "\n\n").trim();
  if (!text) throw new ToolDefinitionError(file, "needs a description: open the file with a comment block that tells an agent what the tool does and when to use it");
  return { description: text, params, destructive, openWorld };
}

/**
 * What the schema says about each variable that is passed straight to an argument or an input
 * field: the fallback description of a variable without `@param`.
 */
function describedBySchema(schema: GraphQLSchema, document: DocumentNode): Map<string, string> {
  const found = new Map<string, string>();
  const typeInfo = new TypeInfo(schema);
  const fieldStack: (string | null)[] = [];
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Argument: {
        enter(node) {
          fieldStack.push(node.value.kind === Kind.VARIABLE ? (typeInfo.getArgument()?.description ?? null) : null);
        },
        leave() {
          fieldStack.pop();
        },
      },
      ObjectField: {
        enter(node) {
          const parent = typeInfo.getParentInputType();
          const named = parent ? getNamedType(parent) : null;
          const field = named && isInputObjectType(named) ? named.getFields()[node.name.value] : undefined;
          fieldStack.push(node.value.kind === Kind.VARIABLE ? (field?.description ?? null) : null);
        },
        leave() {
          fieldStack.pop();
        },
      },
      Variable(node, _key, parent) {
        // Only a variable that is itself the argument's or field's value (not one inside a list).
        if (!parent || Array.isArray(parent) || (parent as { kind?: string }).kind === Kind.VARIABLE_DEFINITION) return;
        const description = fieldStack.at(-1);
        if (description && !found.has(node.name.value)) found.set(node.name.value, description.replace(/\s+/g, " ").trim());
      },
    }),
  );
  return found;
}
