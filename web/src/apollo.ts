/**
 * The app's Apollo Client: what a frontend team on this supergraph would set up.
 * - `/graphql` on the page's own origin (the gateway serves the app);
 * - the bearer token on every request (session.ts);
 * - automatic persisted queries (PersistedQueryLink): a known operation is sent as its SHA-256
 *   hash, the gateway asks for the document once (PERSISTED_QUERY_NOT_FOUND) and keeps it;
 *   only in a secure context (https, localhost), where browsers offer crypto.subtle;
 * - `@defer` read from multipart/mixed (Defer20220824Handler: the format Hive Gateway sends),
 *   so slow providers' hits arrive in a later part of the same answer;
 * - the normalized cache, with the supergraph's entities keyed by `__typename` and `id`.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from "@apollo/client";
import { SetContextLink } from "@apollo/client/link/context";
import { PersistedQueryLink } from "@apollo/client/link/persisted-queries";
import { Defer20220824Handler } from "@apollo/client/incremental";
import { currentToken } from "./session";

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export function createApolloClient(): ApolloClient {
  const auth = new SetContextLink((previous) => {
    const token = currentToken();
    return { headers: { ...previous.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } };
  });
  const http = new HttpLink({ uri: "/graphql" });
  const links: ApolloLink[] = [auth];
  if (globalThis.isSecureContext && globalThis.crypto?.subtle) links.push(new PersistedQueryLink({ sha256 }));
  links.push(http);
  return new ApolloClient({
    link: ApolloLink.from(links),
    cache: new InMemoryCache({
      typePolicies: {
        // Search results are pages of a query, not entities: never merged across queries.
        SearchResult: { keyFields: false },
        SearchHit: { keyFields: false },
      },
    }),
    incrementalHandler: new Defer20220824Handler(),
  });
}
