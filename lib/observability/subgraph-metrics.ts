/**
 * A subgraph's Prometheus metrics, on a registry of its own (one per server: tests and `npm
 * start` run several in one process, and the global registry would mix them). The server feeds
 * requests and latency; the search pipeline feeds provider outcomes and cache lookups through
 * the small recording methods below; the pool gauge is read only when scraped.
 *
 * Labels never name an organization or a user, and operation names pass through
 * BoundedLabelValues, so the number of series stays bounded.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { BoundedLabelValues } from "./metrics-endpoint.js";

/** From 5 ms to 10 s: a search answers in tens of milliseconds, a provider timeout sits at seconds. */
const LATENCY_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type RequestOutcome = "ok" | "error";
export type CacheLookup = "hit" | "miss";

/** What the database pool reports, when the driver has one (PGlite has a single connection: none). */
export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
}

export class SubgraphMetrics {
  readonly registry = new Registry();
  private readonly operationNames = new BoundedLabelValues();
  private readonly requests: Counter<"operation" | "outcome">;
  private readonly requestDuration: Histogram<"operation">;
  private readonly providerDuration: Histogram<"provider" | "status">;
  private readonly cacheLookups: Counter<"result">;

  constructor(subgraph: string) {
    // Every series says which subgraph it came from, so one Prometheus job can scrape all four.
    this.registry.setDefaultLabels({ subgraph });
    const registers = [this.registry];
    this.requests = new Counter({
      name: "subgraph_graphql_requests_total",
      help: "GraphQL requests this subgraph answered, by operation name and outcome (error: the response carried errors)",
      labelNames: ["operation", "outcome"],
      registers,
    });
    this.requestDuration = new Histogram({
      name: "subgraph_graphql_request_duration_seconds",
      help: "Time from receiving a GraphQL request to sending its response, by operation name",
      labelNames: ["operation"],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    });
    this.providerDuration = new Histogram({
      name: "search_provider_duration_seconds",
      help: "Time one search provider took for one search, by provider and status (OK, TIMEOUT, ERROR, SKIPPED); _count is the calls per status",
      labelNames: ["provider", "status"],
      buckets: LATENCY_BUCKETS_SECONDS,
      registers,
    });
    this.cacheLookups = new Counter({
      name: "search_result_cache_lookups_total",
      help: "Search result cache lookups, by result (hit or miss); the hit ratio is hit / (hit + miss)",
      labelNames: ["result"],
      registers,
    });
  }

  /** One answered GraphQL request. */
  recordRequest(operationName: string | null | undefined, outcome: RequestOutcome, seconds: number): void {
    const operation = this.operationNames.label(operationName);
    this.requests.inc({ operation, outcome });
    this.requestDuration.observe({ operation }, seconds);
  }

  /** One provider's part in one search, once its outcome is known. */
  recordProvider(provider: string, status: string, milliseconds: number): void {
    this.providerDuration.observe({ provider, status }, milliseconds / 1000);
  }

  recordCacheLookup(result: CacheLookup): void {
    this.cacheLookups.inc({ result });
  }

  /** Database pool use, read on each scrape (nothing is sampled in between). */
  observePool(read: () => PoolUse | null): void {
    new Gauge({
      name: "database_pool_connections",
      help: "Database pool connections by state: total open, idle, and callers waiting for one",
      labelNames: ["state"],
      registers: [this.registry],
      collect() {
        const use = read();
        if (!use) return;
        this.set({ state: "total" }, use.total);
        this.set({ state: "idle" }, use.idle);
        this.set({ state: "waiting" }, use.waiting);
      },
    });
  }
}
