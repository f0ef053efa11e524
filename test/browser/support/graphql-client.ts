/**
 * GraphQL calls from a browser test's own process, as a given token: what a test makes happen
 * (searches, knowledge queries) or checks through the API, beside what the page shows.
 */
export interface GraphQLAnswer<Data = Record<string, any>> {
  status: number;
  data?: Data;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

export async function graphql<Data = Record<string, any>>(origin: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<GraphQLAnswer<Data>> {
  const response = await fetch(`${origin}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as Omit<GraphQLAnswer<Data>, "status">;
  return { status: response.status, ...body };
}

/** Calls `attempt` until it returns something other than undefined, or throws after `timeoutMs` with the last `describe()`. */
export async function eventually<T>(attempt: () => Promise<T | undefined>, options: { timeoutMs: number; intervalMs?: number; describe: () => string }): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${options.timeoutMs} ms: ${options.describe()}`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}
