/**
 * The error vocabulary every subgraph shares. Each error carries a machine-readable
 * `extensions.code` (the codes Apollo clients already switch on) and, for bad input, the
 * argument path in `extensions.field`, so a client can point at the field to fix.
 */
import { GraphQLError } from "graphql";

export function badUserInput(field: string, message: string): GraphQLError {
  return new GraphQLError(`${field}: ${message}`, { extensions: { code: "BAD_USER_INPUT", field } });
}

export function unauthenticated(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "UNAUTHENTICATED", http: { status: 401 } } });
}

export function forbidden(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "FORBIDDEN" } });
}

/** Work refused because the server is busy with other work of its kind: the caller should retry shortly. */
export function overloaded(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "OVERLOADED" } });
}

export function notFound(what: string, id: string): GraphQLError {
  return new GraphQLError(`${what} ${id} was not found`, { extensions: { code: "NOT_FOUND", id } });
}

/** Codes that describe the caller's request: expected, so never logged as server errors. */
export const CLIENT_ERROR_CODES = new Set([
  "BAD_USER_INPUT",
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "NOT_FOUND",
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_REQUEST",
  "PERSISTED_QUERY_NOT_FOUND",
  "OPERATION_RESOLUTION_FAILURE",
]);
