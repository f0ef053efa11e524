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
import type { ObservableQueue, QueueStatus } from "../retrieval/queue-status.js";
import { workerPoolStats, type WorkerPoolStats } from "../workers/pool.js";
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

/** The metrics that reports this process's worker pools, if one does (see reportWorkerPools). */
let workerPoolsReporter: SubgraphMetrics | null = null;

export class SubgraphMetrics {
  readonly registry = new Registry();
  private readonly operationNames = new BoundedLabelValues();
  private readonly requests: Counter<"operation" | "outcome">;
  private readonly requestDuration: Histogram<"operation">;
  private readonly providerDuration: Histogram<"provider" | "status">;
  private readonly cacheLookups: Counter<"result">;
  private workerPoolsRegistered = false;

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

  /**
   * Depth and lag of the background queues, read from the database on each scrape: one bounded
   * statement per queue (lib/retrieval/queue-status.ts), shared by every gauge of that scrape
   * and by a scrape that overlaps it. A queue whose read fails or times out is left out of that
   * scrape (absent rather than stale) and counts in indexing_queue_collect_errors_total; the
   * scrape itself still answers.
   */
  observeQueues(queues: readonly ObservableQueue[]): void {
    if (queues.length === 0) return;
    const registers = [this.registry];
    const pending = new Map<string, Promise<QueueStatus | null>>();
    const failures = new Map<string, number>(queues.map(({ queue }) => [queue, 0]));
    const successes = new Map<string, number>();
    // The read in progress is reused by every metric of this scrape and by an overlapping scrape.
    const read = (queue: ObservableQueue): Promise<QueueStatus | null> => {
      let reading = pending.get(queue.queue);
      if (!reading) {
        reading = queue
          .status()
          .then((status) => {
            successes.set(queue.queue, Date.now() / 1000);
            return status;
          })
          .catch(() => {
            failures.set(queue.queue, (failures.get(queue.queue) ?? 0) + 1);
            return null;
          })
          .finally(() => pending.delete(queue.queue));
        pending.set(queue.queue, reading);
      }
      return reading;
    };
    const readAll = () => Promise.all(queues.map(async (queue) => [queue.queue, await read(queue)] as const));
    // These two wait for the same reads as the gauges, so a failure of this scrape counts in it.
    new Counter({
      name: "indexing_queue_collect_errors_total",
      help: "Scrapes whose read of a queue's status failed or timed out (its depth and lag gauges were left out of that scrape)",
      labelNames: ["queue"],
      registers,
      async collect() {
        await readAll();
        this.reset();
        for (const [queue, count] of failures) this.inc({ queue }, count);
      },
    });
    new Gauge({
      name: "indexing_queue_last_collect_success_timestamp_seconds",
      help: "When a queue's status was last read successfully (Unix time, seconds)",
      labelNames: ["queue"],
      registers,
      async collect() {
        await readAll();
        for (const [queue, at] of successes) this.set({ queue }, at);
      },
    });
    const gauge = (name: string, help: string, labelNames: string[], fill: (gauge: Gauge<string>, queue: string, status: QueueStatus) => void) =>
      new Gauge({
        name,
        help,
        labelNames: ["queue", ...labelNames],
        registers,
        async collect() {
          const statuses = await readAll();
          this.reset();
          for (const [queue, status] of statuses) if (status) fill(this, queue, status);
        },
      });
    gauge("indexing_queue_waiting_jobs", "Jobs waiting in a queue: when=due (due now, waiting for a worker) or later (run_after in the future: leased by a worker, or waiting out a retry's backoff)", ["when"], (g, queue, status) => {
      g.set({ queue, when: "due" }, status.due);
      g.set({ queue, when: "later" }, status.later);
    });
    gauge("indexing_queue_failing_jobs", "Jobs whose last attempt failed and that are still queued (retried with backoff)", [], (g, queue, status) => g.set({ queue }, status.failing));
    gauge("indexing_queue_lag_seconds", "Age of the oldest job due now since it was enqueued, in seconds (0 when none is due)", [], (g, queue, status) => g.set({ queue }, status.oldestDueAgeSeconds));

    const counted = queues.filter((queue) => queue.counters !== null);
    if (counted.length === 0) return;
    new Gauge({
      name: "indexing_queue_in_flight_jobs",
      help: "Jobs this process's worker holds now (claimed and not yet finished); sum over processes for the whole queue",
      labelNames: ["queue"],
      registers,
      collect() {
        for (const queue of counted) this.set({ queue: queue.queue }, queue.counters!.inFlight);
      },
    });
    // A counter read from the worker's own monotonic counts at scrape time: they only grow in
    // this process, so resetting and re-adding keeps the series a true counter.
    new Counter({
      name: "indexing_jobs_total",
      help: "Jobs this process's worker finished, by outcome: indexed (done), failed (one failed attempt; retried or given up) or lease_lost (another worker took the job over when this one's lease ran out)",
      labelNames: ["queue", "outcome"],
      registers,
      collect() {
        this.reset();
        for (const queue of counted) for (const [outcome, count] of Object.entries(queue.counters!.finished)) this.inc({ queue: queue.queue, outcome }, count);
      },
    });
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
  /**
   * Where requests' reads went when the database has a replica (lib/database/replica-reads.ts),
   * by reason, counted since start; read on scrape. A rising `not_replayed` or `lagging` says the
   * replica falls behind; `replica_down` and `fallback` that it fails.
   */
  observeReplicaRoutes(read: () => Record<string, number>): void {
    new Gauge({
      name: "database_replica_routes",
      help: "Requests' read routing since start: to the replica, or to the primary and why (not_replayed, replica_down, lagging, positions_unavailable, writing, no_caller), and reads that failed on the replica and ran again on the primary (fallback)",
      labelNames: ["route"],
      registers: [this.registry],
      collect() {
        for (const [route, count] of Object.entries(read())) this.set({ route }, count);
      },
    });
  }

  /**
   * This process's worker pools (lib/workers/pool.ts), read on scrape. Pools belong to the
   * process, not to a subgraph, so one subgraph server per process reports them: the first to
   * ask (in `npm start`, where every subgraph shares one process, the first started), until the
   * returned release is called when it stops. Returns whether this one reports them.
   */
  reportWorkerPools(): { reporting: boolean; release(): void } {
    if (workerPoolsReporter && workerPoolsReporter !== this) return { reporting: false, release: () => undefined };
    workerPoolsReporter = this;
    if (!this.workerPoolsRegistered) {
      this.workerPoolsRegistered = true;
      const registers = [this.registry];
      const labelNames = ["pool"] as const;
      // Empty while another server reports them (this one released them when it stopped).
      const owner = this;
      const current = () => (workerPoolsReporter === owner ? workerPoolStats() : []);
      const counter = (name: string, help: string, value: (stats: WorkerPoolStats) => number) =>
        new Counter({
          name,
          help,
          labelNames,
          registers,
          collect() {
            this.reset();
            for (const stats of current()) this.inc({ pool: stats.pool }, value(stats));
          },
        });
      const gauge = (name: string, help: string, value: (stats: WorkerPoolStats) => number) =>
        new Gauge({
          name,
          help,
          labelNames,
          registers,
          collect() {
            this.reset();
            for (const stats of current()) this.set({ pool: stats.pool }, value(stats));
          },
        });
      counter("worker_pool_tasks_total", "Tasks handed to a worker pool since the process started, refused ones included", (stats) => stats.tasks);
      counter(
        "worker_pool_thread_failures_without_task_total",
        "Worker threads that failed with no task running and were replaced (one that ran out of memory as it was being stopped, say); each is also logged, at most once a minute per pool",
        (stats) => stats.threadFailuresWithoutTask,
      );
      gauge("worker_pool_queued_tasks", "Tasks waiting for a worker thread now", (stats) => stats.queued);
      gauge("worker_pool_threads", "Worker threads running now (a pool starts its threads on its first tasks)", (stats) => stats.threads);
    }
    return {
      reporting: true,
      release: () => {
        if (workerPoolsReporter === this) workerPoolsReporter = null;
      },
    };
  }
}
