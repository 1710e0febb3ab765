/**
 * The distributed lock around every change of a shared state: `SET key token NX PX ttl` with a
 * random token, retried with exponential backoff and full jitter; released by a Lua script that
 * deletes the key only while it still holds our token, so a holder whose lock expired can never
 * release the next holder's. A holder that dies (SIGKILL, a lost machine) leaves a key that
 * expires after `ttlMs`; the write itself is guarded by the state's version (compare-and-set),
 * not by the lock alone.
 */
import type { RedisClient } from "bun";
import { ValarmindError } from "../errors.ts";

export interface RedisLockOptions {
  /** The lock expires this long after it was taken if its holder never releases it. */
  ttlMs?: number;
  /** How long to wait for another holder before giving up. */
  waitMs?: number;
}

export const DEFAULT_LOCK_TTL_MS = 10_000;
export const DEFAULT_LOCK_WAIT_MS = 15_000;

const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface HeldRedisLock {
  token: string;
  /** Deletes the lock if it is still ours; false when it had expired (or was taken over). */
  release(): Promise<boolean>;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Backoff for attempt n: exponential from 5 ms, capped at 100 ms, with full jitter. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return random() * Math.min(100, 5 * 2 ** attempt);
}

export async function acquireRedisLock(client: RedisClient, key: string, where: string, options: RedisLockOptions = {}): Promise<HeldRedisLock> {
  const ttlMs = options.ttlMs ?? DEFAULT_LOCK_TTL_MS;
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS;
  const token = crypto.randomUUID();
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    const taken = await client.send("SET", [key, token, "NX", "PX", String(ttlMs)]);
    if (taken === "OK") break;
    if (Date.now() >= deadline) {
      throw new ValarmindError(`timed out after ${Math.round(waitMs / 1000)} s waiting for the state lock ${key} on ${where}; nothing was changed`, {
        hint: `Another valarmind is changing the shared state. Retry; a lock whose holder died expires by itself within ${Math.round(ttlMs / 1000)} s.`,
      });
    }
    await delay(Math.min(backoffMs(attempt), Math.max(1, deadline - Date.now())));
  }
  return {
    token,
    release: async () => (await client.send("EVAL", [RELEASE_SCRIPT, "1", key, token])) === 1,
  };
}
