/**
 * Where each user's last write ended in the primary's WAL, for read-your-writes
 * (replica-reads.ts): in Redis when REDIS_URL is set, so every instance of every subgraph sees a
 * write made through any other, and in process otherwise. A position lives `ttlMs` (the
 * configured max lag): past it, the replica is either caught up or bypassed for everyone.
 *
 * Positions are stored as 16 hex digits, so that comparing strings compares positions: Redis
 * keeps the larger of two concurrent writes' positions (one Lua step), never the later-arriving
 * smaller one.
 */
import { Redis } from "ioredis";
import { redisReady } from "../cache/redis-ready.js";
import { LRUCache } from "lru-cache";
import { throttledWarning, type Logger } from "../logger.js";
import type { ReadCaller } from "./read-session.js";

/** A WAL position (pg_lsn) as a number: "16/B374D848" is 0x16_B374D848. */
export type WalPosition = bigint;

export function parseWalPosition(text: string): WalPosition {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not a PostgreSQL WAL position (pg_lsn such as 16/B374D848): "${text.slice(0, 40)}"`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

const toHex = (position: WalPosition) => position.toString(16).padStart(16, "0");

export interface WritePositions {
  /** The caller's last write position, or null when none is kept; throws when the store cannot answer. */
  get(caller: ReadCaller): Promise<WalPosition | null>;
  /** Keeps `position` for the caller unless a later one is kept already; throws when the store cannot. */
  record(caller: ReadCaller, position: WalPosition): Promise<void>;
  close(): Promise<void>;
}

/** Organization and user ids may contain ':': the organization's length keeps the key unambiguous. */
const keyOf = (caller: ReadCaller) => `${caller.organizationId.length}:${caller.organizationId}:${caller.userId}`;

/** One process: enough when there is one instance, or when Redis is not configured (say so in the docs). */
export class LocalWritePositions implements WritePositions {
  private readonly positions: LRUCache<string, WalPosition>;

  constructor(ttlMs: number, maxUsers = 100_000) {
    this.positions = new LRUCache({ max: maxUsers, ttl: ttlMs });
  }

  async get(caller: ReadCaller): Promise<WalPosition | null> {
    return this.positions.get(keyOf(caller)) ?? null;
  }

  async record(caller: ReadCaller, position: WalPosition): Promise<void> {
    const key = keyOf(caller);
    const kept = this.positions.get(key);
    this.positions.set(key, kept !== undefined && kept > position ? kept : position);
  }

  async close(): Promise<void> {
    this.positions.clear();
  }
}

/** Keeps the larger position and renews the TTL either way. */
const RECORD_SCRIPT = `
local kept = redis.call('GET', KEYS[1])
if (not kept) or kept < ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`;

/** How long one lookup may take: a read waits for it, and a slow Redis must cost little. */
const REDIS_COMMAND_TIMEOUT_MS = 250;

export class RedisWritePositions implements WritePositions {
  private readonly redis: Redis;
  private readonly warnOutage: (message: string) => void;

  constructor(
    url: string,
    keyPrefix: string,
    private readonly ttlMs: number,
    logger: Logger,
  ) {
    this.warnOutage = throttledWarning(logger);
    this.redis = new Redis(url, {
      keyPrefix: `${keyPrefix}read-your-writes:`,
      // Fail at once while disconnected: the caller then reads from the primary.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: 1_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
    });
    // ioredis emits 'error' on each failed reconnect; unhandled, it would end the process.
    this.redis.on("error", (error) => this.warn(error));
  }

  async get(caller: ReadCaller): Promise<WalPosition | null> {
    const kept = await this.redis.get(keyOf(caller));
    return kept === null ? null : BigInt(`0x${kept}`);
  }

  async record(caller: ReadCaller, position: WalPosition): Promise<void> {
    await this.redis.eval(RECORD_SCRIPT, 1, keyOf(caller), toHex(position), String(this.ttlMs));
  }

  /** Whether Redis answers within `timeoutMs` (tests and start-up wait for it; commands are not queued). */
  async ready(timeoutMs: number): Promise<boolean> {
    return redisReady(this.redis, timeoutMs);
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private warn(error: unknown) {
    this.warnOutage(`Redis for read-your-writes positions unavailable, reads of users with unknown positions go to the primary: ${(error as Error).message}`);
  }
}
