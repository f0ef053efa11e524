import type { IntrospectionOptions } from "graphql";

/**
 * Every option of graphql-js's `getIntrospectionQuery()` that GraphiQL, Apollo Sandbox, Rover and
 * codegen can ask for (each asks for a subset): a server that answers this answers them all.
 */
export const STANDARD_INTROSPECTION_OPTIONS: IntrospectionOptions = {
  descriptions: true,
  specifiedByUrl: true,
  directiveIsRepeatable: true,
  schemaDescription: true,
  inputValueDeprecation: true,
  oneOf: true,
};

/** A minimal GraphQL-over-HTTP client for tests: real HTTP, no client library in between. */
export interface GraphQLResponse<T = Record<string, any>> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, any> }[];
  extensions?: Record<string, unknown>;
  headers: Headers;
}

export async function graphql<T = Record<string, any>>(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  options: { token?: string | null; headers?: Record<string, string> } = {},
): Promise<GraphQLResponse<T>> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  let body: { data?: T | null; errors?: GraphQLResponse["errors"]; extensions?: Record<string, unknown> };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`Non-JSON response (HTTP ${response.status}): ${text.slice(0, 500)}`);
  }
  return { status: response.status, data: body.data, errors: body.errors, extensions: body.extensions, headers: response.headers };
}

/** The error codes of a response, in order: what tests assert on. */
export function errorCodes(response: GraphQLResponse): string[] {
  return (response.errors ?? []).map((error) => String(error.extensions?.code));
}

/** What came back for a body sent as it is, whatever it was: a hostile-input test reads all of it. */
export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  body: { data?: Record<string, any> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] } | null;
}

/**
 * Posts a body as given (a string is sent byte for byte, so tests can write escapes such as lone
 * surrogates themselves). The generous timeout only keeps a hung server from hanging the suite.
 */
export async function postRaw(url: string, body: unknown, options: { token?: string | null; accept?: string } = {}): Promise<RawResponse> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(options.accept ? { accept: options.accept } : {}),
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  let parsed: RawResponse["body"] = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: response.status, headers: response.headers, text, body: parsed };
}
