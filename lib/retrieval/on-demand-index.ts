/**
 * A semantic index built only once semantic search is asked for.
 *
 * With the bundled local model and its measured default alpha of 1, a search without an alpha
 * never calls a semantic provider, yet the conversations indexer used to embed every demo
 * conversation at start: about 20 CPU-minutes on a 2-core machine (issue 38), for nothing, and
 * semantic providers timed out meanwhile. So when the deployment does not use semantic search by
 * default (see {@link semanticInUseAtStart}), the indexers behind the semantic providers wait
 * until the first search that gives semantic results a weight (an alpha below 1) reaches one
 * of those providers. That search, and every one until the queue is first empty, gets the
 * provider SKIPPED with a reason that says the index is being built and how much is left
 * (the existing status for "not called for this search", not a TIMEOUT or an ERROR, and
 * transient, so no page without it is cached).
 */
import type { Logger } from "../logger.js";
import type { ObservableQueue } from "./queue-status.js";
import { SearchProviderSkippedError, type BackgroundIndexer, type ProviderRequest, type SearchProvider } from "./search-provider.js";

/**
 * Whether semantic search is in use from the start: a default alpha below 1 gives semantic
 * providers weight in every search, and a configured embedder other than the bundled local model
 * (OpenAI-compatible, feature hashing) was chosen for them. Otherwise indexing waits for demand.
 */
export function semanticInUseAtStart(embedderKind: string, defaultAlpha: number): boolean {
  return defaultAlpha < 1 || embedderKind !== "local";
}

export type OnDemandState = "WAITING" | "BUILDING" | "READY";

export interface OnDemandIndexOptions {
  /** What it builds, for logs and reasons, e.g. "conversations". */
  name: string;
  indexers: BackgroundIndexer[];
  /** Read until nothing is due or in flight: the index is then built. */
  queues: ObservableQueue[];
  logger: Logger;
  /** How often the queues are read while building (default 2 s). */
  pollMs?: number;
}

export class OnDemandIndex {
  private current: OnDemandState = "WAITING";
  private due: number | null = null;
  private poll: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly options: OnDemandIndexOptions) {}

  get state(): OnDemandState {
    return this.current;
  }

  /** Starts the indexers (once); the index is READY when its queues first have nothing due or in flight. */
  request(reason: string): void {
    if (this.current !== "WAITING" || this.stopped) return;
    this.current = "BUILDING";
    this.options.logger.info(`building the ${this.options.name} semantic index on demand (${reason})`);
    for (const indexer of this.options.indexers) indexer.start();
    const check = async () => {
      this.poll = null;
      if (this.stopped) return;
      try {
        const statuses = await Promise.all(this.options.queues.map((queue) => queue.status()));
        // Built when nothing is due nor in flight (leased jobs are `later` too, as are failed ones
        // waiting out their backoff, which must not keep the index "being built" for ever).
        this.due = statuses.reduce((sum, status) => sum + status.due + Math.max(0, status.later - status.failing), 0);
        if (this.due === 0) {
          this.current = "READY";
          this.options.logger.info(`the ${this.options.name} semantic index is built`);
          return;
        }
      } catch (error) {
        this.options.logger.debug(`reading the ${this.options.name} index queue failed: ${(error as Error).message}`);
      }
      this.poll = setTimeout(() => void check(), this.options.pollMs ?? 2_000);
      this.poll.unref();
    };
    void check();
  }

  /** Stops reading the queues (the indexers are stopped by their owner). */
  stop(): void {
    this.stopped = true;
    if (this.poll) clearTimeout(this.poll);
  }

  /** `provider`, SKIPPED while the index is not built, and starting its build when asked first. */
  gate(provider: SearchProvider): SearchProvider {
    const index = this;
    return Object.assign(Object.create(provider) as SearchProvider, {
      async search(request: ProviderRequest) {
        if (index.state !== "READY") {
          index.request(`a search asked ${provider.name} for semantic results`);
          const left = index.due === null ? "" : `, ${index.due} ${index.options.name} still to embed`;
          throw new SearchProviderSkippedError(`its index is being built (INDEXING${left}): started by the first search that asked for semantic results; it answers once the index is built`, true);
        }
        return provider.search(request);
      },
    });
  }
}
