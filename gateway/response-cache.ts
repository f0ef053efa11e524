/**
 * Whole-response caching of `search` at the gateway (Hive Gateway's `responseCaching`, i.e.
 * @envelop/response-cache). The search subgraph caches fused results too, but a hit there
 * still costs two subgraph round trips (the cached search, then `_entities` for the page's
 * titles), each with its own HTTP, parsing and execution: ~9 ms at the gateway's p50 on these
 * machines against ~0.6 ms inside the service. A hit here answers without leaving the gateway.
 *
 * What is cached, and for whom:
 * - Only operations that select `Query.search` (every other coordinate has TTL 0), and only
 *   answers without errors and without a degraded provider (when the client selected
 *   `providers { status }`; a client that did not select it may see a degraded page again
 *   until the TTL passes, which is why the TTL is short).
 * - Per verified token: the session key is a hash of the Authorization header, and only
 *   tokens that verified (signature, issuer, audience) and have not expired use the cache.
 *   An expired or forged token never reaches a cached answer; it goes through to the
 *   subgraphs, which refuse it. Two users, two organizations or two team sets never share
 *   an entry.
 * - Any mutation through the gateway retires every cached answer of the caller's
 *   organization (see OrganizationGenerations), so a frontend that refetches after a rename,
 *   an append or a delete sees the change at once (a new conversation also waits for the
 *   search subgraph's own cached page to expire). Writes that bypass the gateway show up
 *   within the TTL.
 *
 * The store is an in-process LRU (@graphql-mesh/cache-inmemory-lru), one per gateway
 * instance: a shared store would need the generations shared too.
 */
import { createHash } from "node:crypto";
import type { GatewayConfig, GatewayPlugin } from "@graphql-hive/gateway-runtime";
import { getOperationAST } from "graphql";
import InMemoryLRUCache from "@graphql-mesh/cache-inmemory-lru";
import { decodeJwt } from "jose";
import { LRUCache } from "lru-cache";
import { bearerToken, verifyBearerToken, type TokenSettings } from "../lib/tenancy/token.js";

export interface ResponseCacheOptions {
  /** How long a search answer is served from the gateway; 0 turns the cache off. */
  ttlSeconds: number;
  /** To tell a valid token from an expired or forged one. */
  auth: TokenSettings;
}

/** Answers kept per gateway instance; a page of 20 hits is ~5 KB, so this bounds it near 50 MB. */
const RESPONSE_CACHE_MAX_ENTRIES = 10_000;

type ResponseCaching = NonNullable<GatewayConfig<Record<string, unknown>>["responseCaching"]>;

export interface SearchResponseCache {
  /** Hive Gateway's `responseCaching` option. */
  responseCaching: ResponseCaching;
  /** Where answers are kept: the gateway's `cache` option. */
  store: InMemoryLRUCache;
  /** The plugin that retires an organization's cached answers after each of its mutations. */
  plugin: GatewayPlugin;
}

export function searchResponseCache({ ttlSeconds, auth }: ResponseCacheOptions): SearchResponseCache {
  const tokens = new VerifiedTokens(auth);
  const generations = new OrganizationGenerations();
  const responseCaching = {
    // Only requests whose token verified (and has not expired since) use the cache at all; a
    // token's first request goes through uncached while it is verified. Requests with no
    // session would otherwise share one cache key among themselves.
    enabled: (request: Request) => tokens.isVerified(request.headers.get("authorization")),
    // The organization's write generation is part of the key: see OrganizationGenerations.
    // `enabled` admitted only verified tokens, so their organization is already known.
    session: (request: Request) => {
      const authorization = request.headers.get("authorization") ?? "";
      const token = createHash("sha256").update(authorization).digest("base64url");
      return `${token}:${generations.current(tokens.organizationOf(authorization))}`;
    },
    ttl: 0,
    ttlPerSchemaCoordinate: { "Query.search": ttlSeconds * 1000 },
    // Entity-based eviction is off: the generations below retire more (deletes, new
    // conversations) at less cost (no per-entity keys, no scan of the store on each mutation).
    invalidateViaMutation: false,
    // `extensions.responseCache.hit` tells clients (and benchmarks) where an answer came from.
    includeExtensionMetadata: true,
    shouldCacheResult: ({ result }) => !result.errors?.length && !hasDegradedSearch(result.data),
  } as ResponseCaching;

  const plugin: GatewayPlugin = {
    onExecute({ args }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation !== "mutation") return;
      const request = (args.contextValue as { request?: Request }).request;
      const organization = organizationClaim(request?.headers.get("authorization") ?? "");
      return {
        // After the mutation is done: a search that built its key before this point is stored
        // under the old generation, where no later request looks.
        onExecuteDone() {
          generations.advance(organization);
        },
      };
    },
  };
  return { responseCaching, plugin, store: new InMemoryLRUCache({ max: RESPONSE_CACHE_MAX_ENTRIES }) };
}

/**
 * Each organization's write generation, advanced by every mutation that passes through this
 * gateway. Entity-based invalidation alone misses writes whose result is not the cached entity:
 * a deleted conversation (the payload is `DeleteConversationPayload`) or a new one that a cached
 * search should now include. With the generation in the key, any write in an organization
 * retires all of its cached answers at once (they then expire unread).
 */
class OrganizationGenerations {
  private readonly generations = new LRUCache<string, number>({ max: 100_000 });

  current(organization: string | null): number {
    return organization === null ? 0 : (this.generations.get(organization) ?? 0);
  }

  advance(organization: string | null): void {
    // A mutation without a readable organization claim retires everyone's answers.
    if (organization === null) this.generations.clear();
    else this.generations.set(organization, this.current(organization) + 1);
  }
}

/**
 * The token's `org` claim, read without verifying: only used to pick which cached answers to
 * retire, where a forged claim can at worst cause cache misses. Serving from the cache is
 * gated by VerifiedTokens.
 */
function organizationClaim(authorization: string): string | null {
  const token = bearerToken(authorization);
  if (!token) return null;
  try {
    const { org } = decodeJwt(token);
    return typeof org === "string" ? org : null;
  } catch {
    return null;
  }
}

/**
 * Tokens this gateway has verified, until they expire. `enabled` must answer synchronously,
 * and verifying is asynchronous: an unknown token is verified in the background and answers
 * "no" until then.
 */
class VerifiedTokens {
  private readonly verified = new LRUCache<string, { expiresAt: number; organizationId: string }>({ max: 50_000 });
  private readonly pending = new Set<string>();

  constructor(private readonly auth: TokenSettings) {}

  isVerified(authorization: string | null): boolean {
    if (!authorization) return false;
    const known = this.verified.get(authorization);
    if (known !== undefined) {
      if (Date.now() < known.expiresAt) return true;
      this.verified.delete(authorization);
      return false;
    }
    if (!this.pending.has(authorization)) {
      this.pending.add(authorization);
      verifyBearerToken(authorization, this.auth)
        .then((tenant) => {
          const { exp } = decodeJwt(bearerToken(authorization)!);
          // A token without `exp` stays valid; recheck it every few minutes anyway.
          const expiresAt = typeof exp === "number" ? exp * 1000 : Date.now() + 300_000;
          this.verified.set(authorization, { expiresAt, organizationId: tenant.organizationId });
        })
        .catch(() => undefined)
        .finally(() => this.pending.delete(authorization));
    }
    return false;
  }

  /** The verified organization of a token isVerified accepted. */
  organizationOf(authorization: string): string | null {
    return this.verified.get(authorization)?.organizationId ?? null;
  }
}

/** A search answer in which some provider failed or timed out, when the client selected statuses. */
function hasDegradedSearch(data: unknown): boolean {
  if (!data || typeof data !== "object") return false;
  return Object.values(data as Record<string, unknown>).some((value) => {
    const providers = (value as { providers?: unknown } | null)?.providers;
    return Array.isArray(providers) && providers.some((provider) => typeof provider?.status === "string" && provider.status !== "OK" && provider.status !== "SKIPPED");
  });
}
