/**
 * The inter-process lock around every write of state.json (proper-lockfile: an atomic `mkdir` of
 * `state.json.lock`, refreshed while held). The holder records its pid and hostname inside it
 * (lock-owner.ts): a lock whose holder on this host has died is taken over at once; any other
 * lock only once stale (unrefreshed for `staleMs` by the `now` clock, which tests can move forward).
 * Loaded lazily: reads never lock. The lock directory is made 0700 like the rest of `.valarmind/`.
 */
import { fileSystemFailure } from "./fs-failure.ts";
import nodeFs from "node:fs";
import { PRIVATE_DIR_MODE } from "../config/valarmind-dir.ts";
import { describeError, ValarmindError } from "../errors.ts";
import { trace } from "../trace.ts";
import { takeOverDeadLock, takeOverStaleLock, writeLockOwner } from "./lock-owner.ts";

export interface LockOptions {
  /** A lock not refreshed for this long is considered abandoned (proper-lockfile's minimum is 2000). */
  staleMs?: number;
  /** How long to wait for another process before giving up. */
  waitMs?: number;
  /** The clock staleness is judged by (ms since the epoch): tests move it forward instead of waiting. */
  now?: () => number;
}

export interface HeldLock {
  /** True when another process took the lock over (we stalled past `staleMs`): do not write then. */
  compromised(): boolean;
  release(): Promise<void>;
}

/**
 * node:fs as proper-lockfile uses it, except that the lock directory is created private with its
 * owner file inside (written before proper-lockfile records the directory's mtime, which it later
 * checks to detect a takeover), and is removed with that file.
 */
const privateLockFs = {
  ...nodeFs,
  mkdir: (path: string, callback: (error: NodeJS.ErrnoException | null) => void) =>
    nodeFs.mkdir(path, { mode: PRIVATE_DIR_MODE }, (error) => {
      if (error) return callback(error);
      try {
        writeLockOwner(path);
      } catch (ownerError) {
        return nodeFs.rm(path, { recursive: true, force: true }, () => callback(ownerError as NodeJS.ErrnoException));
      }
      callback(null);
    }),
  rmdir: (path: string, callback: (error: NodeJS.ErrnoException | null) => void) => nodeFs.rm(path, { recursive: true }, callback),
  rmdirSync: (path: string) => nodeFs.rmSync(path, { recursive: true, force: true }),
};

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What proper-lockfile is told: it never judges a lock stale itself (a day; its timers take 32-bit delays). */
const NEVER_STALE_MS = 86_400_000;

export async function acquireLock(target: string, options: LockOptions = {}): Promise<HeldLock> {
  const { default: lockfile } = await import("proper-lockfile");
  const staleMs = options.staleMs ?? 5_000;
  const waitMs = options.waitMs ?? 15_000;
  const now = options.now ?? Date.now;
  const maxTimeout = 50;
  const lockPath = `${target}.lock`;
  let lost: Error | undefined;
  let release: (() => Promise<void>) | undefined;
  const deadline = Date.now() + waitMs;
  try {
    // Our own retry loop (not proper-lockfile's) so that every attempt first checks for a dead holder.
    for (let attempt = 0; release === undefined; attempt++) {
      const dead = takeOverDeadLock(lockPath);
      if (dead) trace(`state lock: took over ${lockPath} from pid ${dead.pid}, which no longer exists`);
      else if (takeOverStaleLock(lockPath, staleMs, now)) trace(`state lock: took over ${lockPath}, not refreshed for over ${staleMs} ms`);
      try {
        release = await lockfile.lock(target, {
          realpath: false,
          fs: privateLockFs,
          lockfilePath: lockPath,
          // Staleness is judged above (takeOverStaleLock, which spares a living holder of this
          // host): proper-lockfile's own check would remove a stopped holder's lock. It still
          // refreshes the lock every staleMs / 2.
          stale: NEVER_STALE_MS,
          update: staleMs / 2,
          retries: 0,
          onCompromised: (error) => {
            lost = error;
          },
        });
      } catch (error) {
        if ((error as { code?: unknown }).code !== "ELOCKED" || Date.now() >= deadline) throw error;
        await delay(Math.min(maxTimeout, 5 * 1.3 ** attempt) * (1 + Math.random()));
      }
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ELOCKED") {
      throw new ValarmindError(`${target} is locked by another valarmind process (lock: ${lockPath})`, {
        hint: `If no valarmind process is running, remove ${lockPath} and retry.`,
        cause: error,
      });
    }
    // A read-only mount, a full disk, no permission: say where and what to check.
    const failure = fileSystemFailure(error, "write", lockPath);
    throw new ValarmindError(`could not lock ${target}: ${describeError(error)}`, {
      ...(failure?.hint !== undefined && { hint: failure.hint }),
      cause: error,
    });
  }
  const held = release;
  return {
    compromised: () => lost !== undefined,
    release: async () => {
      if (lost) return; // the lock now belongs to someone else; releasing would remove theirs
      await held();
    },
  };
}
