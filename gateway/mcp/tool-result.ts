/**
 * A tool call's answer as MCP carries it: `structuredContent` is the operation's `data`, and the
 * text content a short rendering of it (YAML, which agents read as easily as JSON at two thirds
 * of the characters) headed by how to get the next page of anything that has one.
 *
 * Both are bounded, because an agent's context window is: the text at `maxTextCharacters`
 * (25,000 by default), the structured content at `maxStructuredCharacters` of JSON (100,000) by
 * cutting its longest strings first. Tools page long content with their own `first`/`after`
 * arguments, so the way out of a cut answer is always a smaller page, then the next one.
 *
 * GraphQL errors that leave nothing to show become a tool error (`isError: true`) naming each
 * error's code, so the agent can correct its call; they are never protocol errors.
 */
import { stringify } from "yaml";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { GraphQLAnswer, GraphQLErrorShape } from "./graphql-executor.js";

export interface OutputBounds {
  maxTextCharacters: number;
  maxStructuredCharacters: number;
}

export const DEFAULT_OUTPUT_BOUNDS: OutputBounds = { maxTextCharacters: 25_000, maxStructuredCharacters: 100_000 };

/** A string cut to fit is shortened to at least this much (below it, dropping items would be the better cut). */
const SHORTEST_CUT_STRING = 80;

export function toolResult(toolName: string, answer: GraphQLAnswer, bounds: OutputBounds = DEFAULT_OUTPUT_BOUNDS): CallToolResult {
  const data = answer.data ?? null;
  const errors = answer.errors ?? [];
  const nothingToShow = data === null || Object.values(data).every((value) => value === null);
  if (errors.length > 0 && nothingToShow) return toolError(errors);

  const structured = boundStrings(data ?? {}, bounds.maxStructuredCharacters);
  const lines: string[] = [];
  if (nothingToShow) lines.push(`${toolName}: nothing found (null). An id that does not exist and one you may not see give the same answer.`);
  for (const { path, endCursor } of nextPages(data ?? {})) lines.push(`More results at ${path}: call ${toolName} again with after: ${JSON.stringify(endCursor)} (and the same other arguments).`);
  for (const error of errors) lines.push(`Partial answer: ${describeError(error)}${error.path ? ` (at ${error.path.join(".")})` : ""}`);
  if (structured.cut > 0) lines.push(`Structured content: ${structured.cut} long text field(s) were shortened to fit ${bounds.maxStructuredCharacters.toLocaleString("en-US")} characters; ask for a smaller page for the full text.`);

  const head = lines.length > 0 ? `${lines.join("\n")}\n\n` : "";
  const body = stringify(data ?? {}, { lineWidth: 0 });
  let text = head + body;
  if (text.length > bounds.maxTextCharacters) {
    const note = `\n… [cut at ${bounds.maxTextCharacters.toLocaleString("en-US")} of ${text.length.toLocaleString("en-US")} characters: ask for a smaller page (first / limit), then continue with after]`;
    text = text.slice(0, Math.max(0, bounds.maxTextCharacters - note.length)) + note;
  }
  return { content: [{ type: "text", text }], structuredContent: structured.value as Record<string, unknown> };
}

/** A tool error from GraphQL errors: each as `CODE: message`, and the same in structuredContent. */
export function toolError(errors: GraphQLErrorShape[]): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: errors.map(describeError).join("\n") }],
    structuredContent: { errors: errors.map((error) => ({ code: codeOf(error), message: error.message, ...(error.path ? { path: error.path } : {}) })) },
  };
}

function codeOf(error: GraphQLErrorShape): string {
  const code = error.extensions?.code;
  return typeof code === "string" ? code : "INTERNAL_SERVER_ERROR";
}

function describeError(error: GraphQLErrorShape): string {
  return `${codeOf(error)}: ${error.message}`;
}

interface NextPage {
  path: string;
  endCursor: string;
}

/** Every connection in `data` whose `pageInfo` says more follow. */
function nextPages(value: unknown, path: string[] = []): NextPage[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => nextPages(item, [...path, String(index)]));
  if (value === null || typeof value !== "object") return [];
  const record = value as Record<string, unknown>;
  const pageInfo = record.pageInfo as { hasNextPage?: unknown; endCursor?: unknown } | undefined;
  const here = pageInfo?.hasNextPage === true && typeof pageInfo.endCursor === "string" ? [{ path: path.join(".") || "the top level", endCursor: pageInfo.endCursor }] : [];
  return [...here, ...Object.entries(record).flatMap(([key, child]) => (key === "pageInfo" ? [] : nextPages(child, [...path, key])))];
}

/**
 * `value` with its longest strings shortened until its JSON fits `maxCharacters`: a common cap
 * found by bisection, so short fields (ids, names, cursors) stay whole and only long texts give.
 */
export function boundStrings(value: unknown, maxCharacters: number): { value: unknown; cut: number } {
  if (JSON.stringify(value).length <= maxCharacters) return { value, cut: 0 };
  let low = SHORTEST_CUT_STRING;
  let high = longestString(value);
  let best = capStrings(value, low);
  while (low <= high) {
    const cap = Math.floor((low + high) / 2);
    const capped = capStrings(value, cap);
    if (JSON.stringify(capped.value).length <= maxCharacters) {
      best = capped;
      low = cap + 1;
    } else high = cap - 1;
  }
  return best;
}

function longestString(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (Array.isArray(value)) return value.reduce((longest: number, item) => Math.max(longest, longestString(item)), 0);
  if (value && typeof value === "object") return Object.values(value).reduce((longest: number, item) => Math.max(longest, longestString(item)), 0);
  return 0;
}

function capStrings(value: unknown, cap: number): { value: unknown; cut: number } {
  let cut = 0;
  const walk = (node: unknown): unknown => {
    if (typeof node === "string") {
      if (node.length <= cap) return node;
      cut++;
      return `${node.slice(0, cap)}… [${(node.length - cap).toLocaleString("en-US")} more characters]`;
    }
    if (Array.isArray(node)) return node.map(walk);
    if (node && typeof node === "object") return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, walk(child)]));
    return node;
  };
  return { value: walk(value), cut };
}
