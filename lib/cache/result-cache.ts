/**
 * Caches answers for a short time (search result pages, 60 s by default; paid external calls): Redis when REDIS_URL is set,
 * shared by every search process; an in-process LRU otherwise. The cache is an optimization
 * only: when Redis is down or slow, searches run uncached, they never fail.
 */
import { Redis } from "ioredis";
import { redisReady } from "./redis-ready.js";
import { LRUCache } from "lru-cache";
import { throttledWarning, type Logger } from "../logger.js";

export interface ResultCache {
  readonly kind: "redis" | "memory" | "off";
  get(key: string): Promise<string | null>;
  /** Never rejects (a failed write is logged and forgotten): callers may leave it unawaited. */
  set(key: string, value: string, ttlSeconds: number): Promise<void>;
  close(): Promise<void>;
}

/** How much an in-process cache may hold: entries, and their values' total length in characters. */
export interface MemoryCacheBounds {
  maxEntries: number;
  maxSize: number;
}

export class MemoryResultCache implements ResultCache {
  readonly kind = "memory" as const;
  private readonly entries: LRUCache<string, string>;

  /** `clock` measures the entries' TTLs (default: `performance`); tests pass one they control. */
  constructor(bounds: MemoryCacheBounds = { maxEntries: 5_000, maxSize: 64 * 1024 * 1024 }, clock?: { now(): number }) {
    this.entries = new LRUCache<string, string>({ max: bounds.maxEntries, maxSize: bounds.maxSize, sizeCalculation: (value) => value.length + 1, ...(clock ? { perf: clock } : {}) });
  }

  async get(key: string): Promise<string | null> {
    return this.entries.get(key) ?? null;
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    this.entries.set(key, value, { ttl: ttlSeconds * 1_000 });
  }

  async close(): Promise<void> {
    this.entries.clear();
  }
}

export class NoResultCache implements ResultCache {
  readonly kind = "off" as const;
  async get(): Promise<null> {
    return null;
  }
  async set(): Promise<void> {}
  async close(): Promise<void> {}
}

/** A cache call may take this long before we give up and search uncached. */
const REDIS_COMMAND_TIMEOUT_MS = 150;

export class RedisResultCache implements ResultCache {
  readonly kind = "redis" as const;
  private readonly redis: Redis;
  private readonly warnOutage: (message: string) => void;

  /** `outage`: what the warning logged while Redis is unavailable says (what this cache is for, and what happens meanwhile). */
  constructor(
    url: string,
    logger: Logger,
    keyPrefix = "context-search:",
    private readonly outage = "Redis result cache unavailable, searching uncached",
  ) {
    this.warnOutage = throttledWarning(logger);
    this.redis = new Redis(url, {
      lazyConnect: false,
      // Fail fast instead of queueing commands while disconnected: a cache miss is cheaper than waiting.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: 1_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
      keyPrefix,
    });
    // ioredis emits 'error' on every failed reconnect; unhandled, that would crash the process.
    this.redis.on("error", (error) => this.warn(error));
  }

  async get(key: string): Promise<string | null> {
    try {
      return await this.redis.get(key);
    } catch (error) {
      this.warn(error);
      return null;
    }
  }

  async set(key: string, value: string, ttlSeconds: number): Promise<void> {
    try {
      await this.redis.set(key, value, "EX", ttlSeconds);
    } catch (error) {
      this.warn(error);
    }
  }

  /**
   * Whether Redis answers within `timeoutMs`. Commands are not queued while disconnected, so a
   * process that serves as soon as it starts misses its first writes unless it waits for this;
   * the cache works either way.
   */
  async connected(timeoutMs: number): Promise<boolean> {
    return redisReady(this.redis, timeoutMs);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private warn(error: unknown) {
    this.warnOutage(`${this.outage}: ${(error as Error).message}`);
  }
}

export function createResultCache(options: { redisUrl: string | null; redisKeyPrefix?: string; ttlSeconds: number; logger: Logger }): ResultCache {
  if (options.ttlSeconds === 0) return new NoResultCache();
  return options.redisUrl ? new RedisResultCache(options.redisUrl, options.logger, options.redisKeyPrefix) : new MemoryResultCache();
}
