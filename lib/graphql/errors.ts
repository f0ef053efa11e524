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

/**
 * Work refused because the server is busy with other work of its kind: the caller should retry
 * shortly, after `retryAfterSeconds` when given (then also `retryable: true`, and the gateway's
 * `Retry-After` when it is all the answer holds).
 */
export function overloaded(message: string, retryAfterSeconds?: number): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "OVERLOADED", ...(retryAfterSeconds !== undefined ? { retryable: true, retryAfterSeconds } : {}) } });
}

export function notFound(what: string, id: string): GraphQLError {
  return new GraphQLError(`${what} ${id} was not found`, { extensions: { code: "NOT_FOUND", id } });
}

/** The same Idempotency-Key again, for another request (lib/database/idempotency.ts). */
export function idempotencyKeyReused(key: string, operation: string): GraphQLError {
  return new GraphQLError(
    `Idempotency-Key "${key}" was already used for a different ${operation} request (another caller or other arguments): send a new key for a new request, or exactly the first request's arguments to get its answer again.`,
    { extensions: { code: "IDEMPOTENCY_KEY_REUSED", idempotencyKey: key, operation } },
  );
}

/** A retry with an Idempotency-Key whose first request created something that has been deleted since. */
export function createdThenDeleted(what: string, id: string): GraphQLError {
  return new GraphQLError(`${what} ${id}, which the first request with this Idempotency-Key created, has been deleted since: send a new key to create another`, {
    extensions: { code: "NOT_FOUND", id },
  });
}

/** A write whose caller stopped waiting (the gateway's deadline passed) is rolled back, not committed unseen. */
export function requestAbandoned(): GraphQLError {
  return new GraphQLError("The caller stopped waiting for this write (its deadline passed), so it was rolled back: send it again, with the same Idempotency-Key if it had one.", {
    extensions: { code: "REQUEST_ABANDONED" },
  });
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
  "IDEMPOTENCY_KEY_REUSED",
  "REQUEST_ABANDONED",
]);

/**
 * A dependency (the database) is unavailable for now: nothing the caller sent is wrong, and the
 * same request may succeed after `retryAfterSeconds`. The message names no host, driver or SQLSTATE.
 */
export function serviceUnavailable(message: string, retryAfterSeconds: number): GraphQLError {
  return new GraphQLError(message, { extensions: { code: "SERVICE_UNAVAILABLE", retryable: true, retryAfterSeconds } });
}

type AnswerShape = { data?: Record<string, unknown> | null; errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> };

/** Every error of the answer is of one kind (`each`), and no root field has a value. */
function isWholeAnswer(result: AnswerShape, each: (extensions: Record<string, unknown> | undefined) => boolean): boolean {
  if (!result.errors || result.errors.length === 0) return false;
  if (!result.errors.every((error) => each(error.extensions))) return false;
  return result.data == null || Object.values(result.data).every((value) => value === null);
}

/** The answer is only OVERLOADED errors that say when to retry (a backlog limit), and no root field has a value. */
export function isWholeAnswerOverloaded(result: AnswerShape): boolean {
  return isWholeAnswer(result, (extensions) => extensions?.code === "OVERLOADED" && typeof extensions.retryAfterSeconds === "number");
}

/**
 * Whether an answer says nothing but "unavailable, try again": every error SERVICE_UNAVAILABLE
 * and no root field with a value. Such an answer is HTTP 503 with Retry-After; an answer with
 * some data stays 200 and carries the code at the fields it could not fill.
 */
export function isWholeAnswerUnavailable(result: AnswerShape): boolean {
  return isWholeAnswer(result, (extensions) => extensions?.code === "SERVICE_UNAVAILABLE");
}
