/**
 * Waiting for an ioredis connection, bounded. Our Redis clients never queue commands while
 * disconnected (enableOfflineQueue: false: a request must not wait on Redis), so a process that
 * serves as soon as it starts would miss its first shared writes, and count its first budgets
 * alone, unless it waits for the connection first; none may wait for it forever.
 */
import type { Redis } from "ioredis";

/** Whether `redis` is connected now or becomes so within `timeoutMs`. */
export function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      redis.off("ready", onReady);
      resolve(false);
    }, timeoutMs);
    redis.once("ready", onReady);
  });
}
