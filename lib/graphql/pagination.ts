/**
 * Relay-style cursor pagination helpers. Cursors are opaque to clients (base64url of a small
 * JSON array tagged with its kind), so we can change what they hold without breaking anyone;
 * a cursor of the wrong kind or that does not decode is BAD_USER_INPUT, never a database error.
 */
import { badUserInput } from "./errors.js";

export const MAX_PAGE_SIZE = 100;

export function validatePageSize(first: number | null | undefined, field: string, fallback: number): number {
  const size = first ?? fallback;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    throw badUserInput(field, `must be between 1 and ${MAX_PAGE_SIZE}, got ${size}`);
  }
  return size;
}

export function encodeCursor(kind: string, parts: unknown[]): string {
  return Buffer.from(JSON.stringify([kind, ...parts]), "utf8").toString("base64url");
}

/** Decodes a cursor made by `encodeCursor(kind, …)`; `check` validates the parts and returns them typed. */
export function decodeCursor<T>(cursor: string, kind: string, field: string, check: (parts: unknown[]) => T | null, maxLength = 512): T {
  const invalid = () => badUserInput(field, "is not a valid cursor for this list: pass a cursor this list returned (pageInfo.endCursor or an edge's cursor)");
  if (cursor.length > maxLength || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded[0] !== kind) throw invalid();
  const parts = check(decoded.slice(1));
  if (parts === null) throw invalid();
  return parts;
}

export interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

/** Builds a connection from rows fetched with `take: first + 1` (the extra row only tells whether a next page exists). */
export function toConnection<T>(rows: T[], first: number, hasPrevious: boolean, cursorOf: (row: T) => string) {
  const page = rows.slice(0, first);
  const edges = page.map((node) => ({ cursor: cursorOf(node), node }));
  const pageInfo: PageInfo = {
    hasNextPage: rows.length > first,
    hasPreviousPage: hasPrevious,
    startCursor: edges[0]?.cursor ?? null,
    endCursor: edges.at(-1)?.cursor ?? null,
  };
  return { edges, nodes: page, pageInfo };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === "string" && UUID.test(value);
}

/** Validates an id argument: a UUID, or BAD_USER_INPUT naming the argument. Returns it lower-cased. */
export function requireUuid(value: string, field: string): string {
  if (!UUID.test(value)) throw badUserInput(field, `must be a UUID, got "${value.length > 60 ? `${value.slice(0, 60)}…` : value}"`);
  return value.toLowerCase();
}
