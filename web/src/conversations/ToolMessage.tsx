/**
 * A tool call or a tool's result in a conversation: JSON a model exchanged with a tool, which
 * people rarely read and which, shown inline, buries the conversation. It is shown as a closed
 * disclosure ("Tool result: search_docs") holding the JSON formatted as a code block; the linked
 * message of a search is opened, with the query's words marked in it.
 */
import type { QueryLexemes } from "../../../lib/retrieval/english-analyzer";
import { MarkedWords } from "./MarkedWords";

export interface ToolPayload {
  kind: "Tool call" | "Tool result";
  /** The tool's name, when the JSON says it (`tool`, `name` or `function.name`). */
  name: string | null;
  /** The JSON, formatted; the text as written when it is not JSON. */
  code: string;
}

/**
 * A message that is a tool's: every message of the TOOL role, and an assistant's message that is
 * nothing but a JSON object (a call it made). Null for everything else, which is Markdown.
 */
export function toolPayload(role: string, content: string): ToolPayload | null {
  const trimmed = content.trim();
  if (role !== "TOOL" && !(role === "ASSISTANT" && trimmed.startsWith("{") && trimmed.endsWith("}"))) return null;
  const kind = role === "TOOL" ? "Tool result" : "Tool call";
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return role === "TOOL" ? { kind, name: null, code: content } : null;
  }
  return { kind, name: toolName(parsed), code: JSON.stringify(parsed, null, 2) };
}

function toolName(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  const fn = record.function;
  const name = record.tool ?? record.name ?? (typeof fn === "object" && fn !== null ? (fn as Record<string, unknown>).name : undefined);
  return typeof name === "string" && name.trim() ? name.trim().slice(0, 80) : null;
}

export function ToolMessage({ payload, open, terms }: { payload: ToolPayload; open: boolean; terms: QueryLexemes | null }) {
  return (
    <details className="tool-message" open={open || undefined}>
      <summary>
        {payload.kind}
        {payload.name ? <>: <code>{payload.name}</code></> : null}
      </summary>
      <pre tabIndex={0}>
        <code>{terms ? <MarkedWords text={payload.code} terms={terms} /> : payload.code}</code>
      </pre>
    </details>
  );
}
