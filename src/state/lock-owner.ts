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
  /**
   * When the holder process started (Linux: clock ticks since boot, /proc/PID/stat field 22): a
   * pid alive under another start time is another process (pid reuse after a container restart).
   */
  started?: number;
}

/** A process's start time in clock ticks since boot (Linux /proc), or undefined elsewhere. */
export function processStart(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const started = Number(fields[19]);
    return Number.isSafeInteger(started) ? started : undefined;
  } catch {
    return undefined;
  }
}

const OWN_START = processStart(process.pid);

export function writeLockOwner(lockPath: string): void {
  const owner: LockOwner = { pid: process.pid, hostname: hostname(), ...(OWN_START !== undefined && { started: OWN_START }) };
  // Whole or not at all: a reader racing this write must not see half a file (and call the holder unknown).
  const temp = join(lockPath, `${LOCK_OWNER_FILE}.tmp`);
  writeFileSync(temp, JSON.stringify(owner), { mode: PRIVATE_FILE_MODE });
  renameSync(temp, join(lockPath, LOCK_OWNER_FILE));
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
  const { pid, hostname: host, started } = parsed as Record<string, unknown>;
  if (!(typeof pid === "number" && Number.isInteger(pid) && pid > 0 && typeof host === "string")) return undefined;
  return { pid, hostname: host, ...(typeof started === "number" && Number.isSafeInteger(started) && { started }) };
}

/**
 * What is known of the owner's process: "dead" when it is of this host and gone (its pid does not
 * exist, or now belongs to a process that started at another time: a restarted container reuses
 * pid 1, this very process included); "alive" when it is of this host and running (a pid we may
 * not signal counts as alive); "unknown" for another host's owner (or a pid that cannot be asked).
 */
function ownerState(owner: LockOwner): "dead" | "alive" | "unknown" {
  if (owner.hostname !== hostname()) return "unknown";
  if (owner.pid === process.pid) return owner.started !== undefined && OWN_START !== undefined && owner.started !== OWN_START ? "dead" : "alive";
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === "ESRCH" ? "dead" : code === "EPERM" ? "alive" : "unknown";
  }
  const started = owner.started === undefined ? undefined : processStart(owner.pid);
  return started !== undefined && started !== owner.started ? "dead" : "alive";
}

/** True only when the owner is on this host and its process is gone: its lock is taken over at once. */
export function isDeadOwner(owner: LockOwner): boolean {
  return ownerState(owner) === "dead";
}

/**
 * True when the owner is a process of this host known to be running (the same process, not a
 * reused pid): its lock is never stale, however long since it was refreshed — a holder stopped
 * (SIGSTOP, a suspended laptop) or a clock jump must not hand its session to another writer.
 */
export function isLiveLocalOwner(owner: LockOwner): boolean {
  return ownerState(owner) === "alive";
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
  if (owner !== undefined && isDeadOwner(owner)) return false;
  return age <= staleMs || (owner !== undefined && isLiveLocalOwner(owner));
}

/**
 * Removes a lock not refreshed for `staleMs` by the clock `now` (its holder stalled or is gone),
 * the way proper-lockfile would, but judged here so that the clock can be injected. Moved aside
 * first like a dead lock; put back if what was moved is fresh (replaced in between).
 */
export function takeOverStaleLock(lockPath: string, staleMs: number, now: () => number): boolean {
  const age = lockAgeMs(lockPath, now());
  if (age === undefined || age <= staleMs) return false;
  const owner = readLockOwner(lockPath);
  if (owner !== undefined && isLiveLocalOwner(owner)) return false;
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
