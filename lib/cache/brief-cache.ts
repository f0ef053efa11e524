/**
 * A few seconds of memory for per-organization lookups that every search repeats (which
 * external providers an organization stored keys for, its knowledge bases, its collection
 * statistics), with one read per key at a time: when an entry expires under load, every search
 * in flight misses at once, and without this each would send the same statement.
 *
 * Why not lru-cache's own `fetch()`, which also deduplicates concurrent loads:
 * - its load gets the context of whichever caller came first, but some reads here must run on
 *   that caller's own tenant connection, under its statement timeout, and a failure of that
 *   read is the caller's (its timeout, its abort), not everyone's: callers that only joined it
 *   read again (`callerBound`), where fetch hands every waiter the same rejection;
 * - whether a value is kept depends on the value (statistics of a small organization are read
 *   live every time), and fetch stores whatever the load returned (a per-item ttl of 0 means
 *   "forever" to lru-cache);
 * - `delete()` of a key whose fetch is in flight aborts it and, unless told to ignore aborts,
 *   rejects the callers already waiting for it, who asked before the change and may have its answer.
 * So values live in an LRUCache with a TTL, and reads in flight in a Map beside it.
 *
 * `invalidate(key)` (a write of this process changed what the read sees) drops both: a read
 * that started before it is neither kept nor handed to callers that arrive after it; the callers
 * already waiting for it still get its answer, as if they had asked a moment earlier.
 */
import { LRUCache } from "lru-cache";

export interface BriefCacheOptions<V> {
  /** How long a value is kept; 0 keeps none (reads in flight are still shared). */
  ttlMs: number;
  /** Keys kept at most (least recently used go first). Default 10,000. */
  max?: number;
  /** How long this value is kept, when it depends on the value; 0 keeps it not at all. Default `ttlMs`. */
  keepFor?: (value: V) => number;
  /**
   * Each read runs on its caller's own connection (a tenant reader), under that caller's
   * statement timeout and abort: a caller that joined a read which failed reads again (shared
   * again with the other callers retrying) instead of failing with it. Default false: a failed
   * read fails everyone who waited for it, as the database would have failed each of them.
   */
  callerBound?: boolean;
  /** The clock TTLs are measured on (tests move it instead of sleeping). Default `performance`. */
  clock?: { now(): number };
}

export class BriefCache<K extends {}, V extends {}> {
  private readonly values: LRUCache<K, V>;
  /** Reads in flight, one per key; an entry lives only while its read does. */
  private readonly reads = new Map<K, Promise<V>>();
  private readonly keepFor: (value: V) => number;
  private readonly callerBound: boolean;

  constructor(options: BriefCacheOptions<V>) {
    const ttl = Math.max(0, options.ttlMs);
    this.values = new LRUCache<K, V>({
      max: options.max ?? 10_000,
      // Never used with 0: keep() stores nothing then (and a ttl of 0 is "forever" to lru-cache).
      ttl: ttl || 1,
      // lru-cache reuses one reading of the clock for a millisecond of real time: a clock that
      // tests move must be read every time.
      ...(options.clock ? { perf: options.clock, ttlResolution: 0 } : {}),
    });
    this.keepFor = options.keepFor ?? (() => ttl);
    this.callerBound = options.callerBound ?? false;
  }

  /** The kept value, if any: never reads. */
  peek(key: K): V | undefined {
    return this.values.get(key);
  }

  /** The kept value, else the read in flight for `key`, else `read()`, shared with every caller that arrives while it runs. */
  async get(key: K, read: () => Promise<V>): Promise<V> {
    const kept = this.values.get(key);
    if (kept !== undefined) return kept;
    const inFlight = this.reads.get(key);
    if (inFlight) {
      if (!this.callerBound) return inFlight;
      try {
        return await inFlight;
      } catch {
        // That read ran on another caller's connection and failed there (its timeout, its
        // abort): it says nothing about this caller, who reads again. Its entry is gone by now
        // (settled after the `finally` below), so the first retrying caller starts the next read.
        return this.get(key, read);
      }
    }
    const started: Promise<V> = read()
      .then((value) => {
        // Still the key's current read: no invalidate() ran meanwhile.
        if (this.reads.get(key) === started) this.keep(key, value);
        return value;
      })
      .finally(() => {
        if (this.reads.get(key) === started) this.reads.delete(key);
      });
    this.reads.set(key, started);
    return started;
  }

  /** Forgets `key`: the next caller reads again, and a read in flight is neither kept nor shared any more. */
  invalidate(key: K): void {
    this.values.delete(key);
    this.reads.delete(key);
  }

  private keep(key: K, value: V): void {
    const ttl = this.keepFor(value);
    if (ttl > 0) this.values.set(key, value, { ttl });
  }
}
