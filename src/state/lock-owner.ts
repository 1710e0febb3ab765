/**
 * Who holds the state lock: `owner.json` inside the lock directory records the holder's pid and
 * hostname, so a later writer can tell a lock left by a killed process (a pid on this host that no
 * longer exists) from a live one and take it over at once instead of waiting for it to go stale.
 */
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { PRIVATE_FILE_MODE } from "../config/valarmind-dir.ts";

export const LOCK_OWNER_FILE = "owner.json";

export interface LockOwner {
  pid: number;
  hostname: string;
}

export function writeLockOwner(lockPath: string): void {
  const owner: LockOwner = { pid: process.pid, hostname: hostname() };
  writeFileSync(join(lockPath, LOCK_OWNER_FILE), JSON.stringify(owner), { mode: PRIVATE_FILE_MODE });
}

/** The recorded owner, or undefined when there is none (no lock, or a holder between mkdir and this write). */
export function readLockOwner(lockPath: string): LockOwner | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(join(lockPath, LOCK_OWNER_FILE), "utf8"));
  } catch {
    return undefined; // missing or half-written: judged by age instead, as before owners were recorded
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { pid, hostname: host } = parsed as Record<string, unknown>;
  return typeof pid === "number" && Number.isInteger(pid) && pid > 0 && typeof host === "string" ? { pid, hostname: host } : undefined;
}

/** True only when the owner is on this host and its pid is gone; a pid we may not signal is alive. */
export function isDeadOwner(owner: LockOwner): boolean {
  if (owner.hostname !== hostname() || owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === "ESRCH";
  }
}

/**
 * Removes a lock whose owner is dead. The directory is first renamed to a unique name, so of two
 * writers racing to take it over only one succeeds; if what was moved turns out to belong to
 * someone else (it was replaced in between), it is put back.
 */
export function takeOverDeadLock(lockPath: string): LockOwner | undefined {
  const owner = readLockOwner(lockPath);
  if (!owner || !isDeadOwner(owner)) return undefined;
  const aside = `${lockPath}.dead-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return undefined; // another writer took it over first
  }
  const moved = readLockOwner(aside);
  if (moved?.pid !== owner.pid || moved.hostname !== owner.hostname) {
    try {
      renameSync(aside, lockPath);
    } catch {
      // the live holder's lock is gone; its onCompromised check stops it from writing
    }
    return undefined;
  }
  rmSync(aside, { recursive: true, force: true });
  return owner;
}

/** Milliseconds since the lock at `path` was last refreshed (its directory's mtime); undefined when there is none. */
function lockAgeMs(path: string, now: number): number | undefined {
  try {
    return now - statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * Whether a lock at `lockPath` stands: it exists, its owner is not a dead process of this host, and
 * it was refreshed within `staleMs`. The same judgement the takeovers below act on, without
 * touching anything (for a preview that must leave the disk as it is).
 */
export function lockStands(lockPath: string, staleMs: number, now: number): boolean {
  const age = lockAgeMs(lockPath, now);
  if (age === undefined) return false;
  const owner = readLockOwner(lockPath);
  return !(owner !== undefined && isDeadOwner(owner)) && age <= staleMs;
}

/**
 * Removes a lock not refreshed for `staleMs` by the clock `now` (its holder stalled or is gone),
 * the way proper-lockfile would, but judged here so that the clock can be injected. Moved aside
 * first like a dead lock; put back if what was moved is fresh (replaced in between).
 */
export function takeOverStaleLock(lockPath: string, staleMs: number, now: () => number): boolean {
  const age = lockAgeMs(lockPath, now());
  if (age === undefined || age <= staleMs) return false;
  const aside = `${lockPath}.stale-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return false; // another writer took it over first
  }
  const movedAge = lockAgeMs(aside, now());
  if (movedAge === undefined || movedAge <= staleMs) {
    try {
      renameSync(aside, lockPath);
    } catch {
      // the fresh holder's lock is gone; its onCompromised check stops it from writing
    }
    return false;
  }
  rmSync(aside, { recursive: true, force: true });
  return true;
}
