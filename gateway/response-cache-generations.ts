/**
 * Each organization's write generation, the part of a cached search answer's key that retires
 * all of that organization's answers at once when it writes. Entity-based invalidation alone
 * misses writes whose result is not the cached entity: a deleted conversation (the payload is
 * `DeleteConversationPayload`) or a new one that a cached search should now include. With the
 * generation in the key, any write in an organization retires all of its cached answers at once
 * (they then expire unread). Only verified callers advance a generation, and only their own
 * organization's (response-cache.ts).
 *
 * - `LocalGenerations`: in this process, advanced by the mutations that pass through this
 *   gateway. Alone, it is right for one gateway only: after a rename through gateway A, gateway
 *   B still holds its own answers under the old generation and serves them for their TTL.
 * - `SharedGenerations`: in Redis (REDIS_URL), advanced by every gateway and read by every
 *   gateway before it looks an answer up, so a write through any of them retires the
 *   organization's answers in all of them. The answers themselves stay in each process.
 *
 * A generation that cannot be read (Redis down, or slower than READ_TIMEOUT_MS) is `null`, and a
 * null generation means "no cache" for that request: neither read nor filled. While Redis is
 * failing the cache is off rather than possibly stale, and requests never wait on it for more
 * than the timeout (after a failure, Redis is not asked again for PAUSE_AFTER_FAILURE_MS).
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { redisReady } from "../lib/cache/redis-ready.js";
import { LRUCache } from "lru-cache";
import { throttledWarning, type Logger } from "../lib/logger.js";

export interface WriteGenerations {
  /** The organization's generation now, or null when it cannot be known (then the cache is not used). */
  current(organization: string): Promise<string | null>;
  /** Retires every answer stored under the organization's current generation; resolves once every gateway would see it. */
  advance(organization: string): Promise<void>;
  /** Whether the store is reachable, waiting at most `timeoutMs` for it (at once in process). */
  ready(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * In-process generations. Bumped whenever the map has to forget an organization for room
 * (`epoch`): forgetting would put it back at generation 0, where answers from before its last
 * write may still be stored, so everyone's answers retire instead (rare: it takes 100,000
 * writing organizations in one TTL).
 */
export class LocalGenerations implements WriteGenerations {
  private epoch = 0;
  /** Generations are never reused (a forgotten organization's next write must not land on an old number). */
  private counter = 0;
  private readonly generations: LRUCache<string, number>;

  constructor(ttlSeconds: number) {
    // Past the response TTL a generation no longer matters: every answer stored under an older
    // one has expired.
    this.generations = new LRUCache<string, number>({
      max: 100_000,
      ttl: Math.max(1, ttlSeconds) * 1000,
      dispose: (_value, _key, reason) => {
        if (reason === "evict") this.epoch += 1;
      },
    });
  }

  /** Synchronous: the in-process cache path never waits for anything. */
  now(organization: string): string {
    return `${this.epoch}.${this.generations.get(organization) ?? 0}`;
  }

  async current(organization: string): Promise<string> {
    return this.now(organization);
  }

  async advance(organization: string): Promise<void> {
    this.counter += 1;
    this.generations.set(organization, this.counter);
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}

/** A generation read may take this long; past it the request goes uncached. */
const READ_TIMEOUT_MS = 100;
/** After a failed read or write, Redis is left alone for this long (the cache is off meanwhile). */
const PAUSE_AFTER_FAILURE_MS = 1_000;
/** Organizations whose advance failed, remembered to be advanced once Redis answers again. */
const MAX_PENDING_ADVANCES = 10_000;

/**
 * Reads `epoch.generation`. The epoch is a random id the first reader after Redis lost its data
 * (a restart without persistence, an eviction) writes: the counter behind the generations then
 * starts again from 1, and without the epoch a new generation could equal an old one under which
 * a gateway still holds answers from before a write.
 */
const READ_SCRIPT = `
local epoch = redis.call('GET', KEYS[1])
if not epoch then
  epoch = ARGV[1]
  redis.call('SET', KEYS[1], epoch)
end
return epoch .. '.' .. (redis.call('GET', KEYS[2]) or '0')
`;

/**
 * Sets the organization's generation to the next value of one counter shared by all of them
 * (never reused, unlike a per-organization INCR whose key expired), with an expiry: past it,
 * every answer stored under an older generation has expired too.
 */
const ADVANCE_SCRIPT = `
local next = redis.call('INCR', KEYS[1])
redis.call('SET', KEYS[2], next, 'PX', ARGV[1])
return next
`;

interface GenerationCommands {
  readGeneration(epochKey: string, generationKey: string, newEpoch: string): Promise<string>;
  advanceGeneration(counterKey: string, generationKey: string, keepMs: number): Promise<number>;
}

export class SharedGenerations implements WriteGenerations {
  private readonly redis: Redis & GenerationCommands;
  private pausedUntil = 0;
  private readonly warnOutage: (message: string) => void;
  private readonly pending = new Set<string>();
  /** How long a generation key outlives its last write: the answers' TTL, plus the longest a request that read the old generation may still be running. */
  private readonly keepMs: number;

  /**
   * `onUnreliable`: called when a read or write fails. Answers this gateway holds may then be
   * stale in ways no generation will show (another gateway's write during the outage whose
   * advance failed too), so the caller drops them all.
   */
  constructor(
    url: string,
    private readonly keyPrefix: string,
    ttlSeconds: number,
    logger: Logger,
    private readonly onUnreliable: () => void,
  ) {
    this.warnOutage = throttledWarning(logger);
    this.keepMs = (2 * Math.max(1, ttlSeconds) + 60) * 1000;
    this.redis = new Redis(url, {
      // Fail at once while disconnected rather than queue: a search must not wait for Redis.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: READ_TIMEOUT_MS,
      connectTimeout: 1_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
    }) as Redis & GenerationCommands;
    this.redis.defineCommand("readGeneration", { numberOfKeys: 2, lua: READ_SCRIPT });
    this.redis.defineCommand("advanceGeneration", { numberOfKeys: 2, lua: ADVANCE_SCRIPT });
    // ioredis emits 'error' on every failed reconnect; unhandled, that would crash the process.
    this.redis.on("error", (error) => this.failed(error));
    this.redis.on("ready", () => void this.advancePending());
  }

  // One hash tag for every key: in a Redis Cluster the scripts' keys must share a slot.
  private key(name: string): string {
    return `${this.keyPrefix}{response-cache}:${name}`;
  }

  async current(organization: string): Promise<string | null> {
    if (performance.now() < this.pausedUntil || this.redis.status !== "ready") return null;
    try {
      return await this.redis.readGeneration(this.key("epoch"), this.key(`generation:${organization}`), randomUUID());
    } catch (error) {
      this.failed(error);
      return null;
    }
  }

  async advance(organization: string): Promise<void> {
    try {
      if (this.redis.status !== "ready") throw new Error(`Redis connection is ${this.redis.status}`);
      await this.redis.advanceGeneration(this.key("counter"), this.key(`generation:${organization}`), this.keepMs);
    } catch (error) {
      // Advanced once Redis is back, so that no gateway serves this organization's answers from before this write.
      if (this.pending.size < MAX_PENDING_ADVANCES) this.pending.add(organization);
      this.failed(error);
    }
  }

  /** Whether the connection is up (tests wait for it before counting hits). */
  async ready(timeoutMs = 2_000): Promise<boolean> {
    return redisReady(this.redis, timeoutMs);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private async advancePending(): Promise<void> {
    for (const organization of [...this.pending]) {
      this.pending.delete(organization);
      await this.advance(organization);
    }
  }

  private failed(error: unknown): void {
    this.pausedUntil = performance.now() + PAUSE_AFTER_FAILURE_MS;
    this.onUnreliable();
    this.warnOutage(`Redis is unavailable: the gateway's response cache is off until it is back (${(error as Error).message})`);
  }
}
