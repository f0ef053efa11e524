/**
 * `GET /metrics`, as the gateway and every subgraph serve it: who may scrape, and label values
 * that stay few whatever clients send.
 *
 * Metrics name operations and show traffic volumes, so a scrape is allowed only from loopback (a
 * Prometheus or agent on the same host), with a token that verifies, or everywhere when the
 * deployment says so (METRICS_PUBLIC=true, for a private network where Prometheus scrapes by
 * address). Behind a reverse proxy on the same host every request looks like loopback: keep
 * `/metrics` off the proxy's routes there.
 */
import type http from "node:http";
import type { Registry } from "prom-client";
import { verifyBearerToken, type TokenSettings } from "../tenancy/token.js";

export const METRICS_PATH = "/metrics";

export interface MetricsAccess {
  /** Anyone may scrape (METRICS_PUBLIC=true). */
  public: boolean;
  /** How a scraper's bearer token is verified, exactly as a GraphQL caller's is. */
  auth: TokenSettings;
}

export type ScrapeDecision = { allowed: true } | { allowed: false; status: 401 | 403; code: "UNAUTHENTICATED" | "FORBIDDEN"; message: string };

/**
 * Whether this scrape may read the metrics. A token that does not verify is refused even from
 * loopback: whoever sent it meant to authenticate and should learn that it failed.
 */
export async function decideScrape(remoteAddress: string | undefined, authorization: string | undefined, access: MetricsAccess): Promise<ScrapeDecision> {
  if (authorization) {
    try {
      await verifyBearerToken(authorization, access.auth);
      return { allowed: true };
    } catch {
      return { allowed: false, status: 401, code: "UNAUTHENTICATED", message: "The bearer token does not verify: send a valid token, or scrape from this host" };
    }
  }
  if (access.public || isLoopback(remoteAddress)) return { allowed: true };
  return {
    allowed: false,
    status: 403,
    code: "FORBIDDEN",
    message: "Metrics are served without a token only to this host: send `Authorization: Bearer <token>`, or set METRICS_PUBLIC=true where the network is private",
  };
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
  return v4.startsWith("127.") || address === "::1";
}

/** Answers a `GET /metrics` with the registry's text exposition, or the refusal. */
export async function serveMetrics(registry: Registry, request: http.IncomingMessage, response: http.ServerResponse, access: MetricsAccess): Promise<void> {
  if (request.method !== "GET" && request.method !== "HEAD") {
    response.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" });
    return void response.end("Use GET /metrics\n");
  }
  const decision = await decideScrape(request.socket.remoteAddress, request.headers.authorization, access);
  if (!decision.allowed) {
    response.writeHead(decision.status, {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      ...(decision.status === 401 ? { "www-authenticate": "Bearer" } : {}),
    });
    return void response.end(JSON.stringify({ errors: [{ message: decision.message, extensions: { code: decision.code } }] }));
  }
  const body = await registry.metrics();
  response.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store" });
  response.end(request.method === "HEAD" ? undefined : body);
}

/**
 * Label values from what clients choose (operation names, error codes) kept to a bounded set:
 * each cut to `maxLength` characters, the first `maxDistinct` distinct values kept as they are
 * and every later one reported as "other", so a client that invents names cannot grow the
 * series count (and Prometheus' memory) without limit.
 */
export class BoundedLabelValues {
  private readonly seen = new Set<string>();

  constructor(
    private readonly maxDistinct = 200,
    private readonly maxLength = 64,
    private readonly missing = "Anonymous",
  ) {}

  label(value: string | null | undefined): string {
    if (!value) return this.missing;
    const cut = value.slice(0, this.maxLength);
    if (this.seen.has(cut)) return cut;
    if (this.seen.size >= this.maxDistinct) return "other";
    this.seen.add(cut);
    return cut;
  }
}
