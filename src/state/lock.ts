/**
 * The inter-process lock around every write of state.json (proper-lockfile: an atomic `mkdir` of
 * `state.json.lock`, refreshed while held, taken over once stale so a killed process cannot block
 * the workspace for long). Loaded lazily: reads never lock. The lock directory is made 0700 like
 * the rest of `.valarmind/`.
 */
import nodeFs from "node:fs";
import { PRIVATE_DIR_MODE } from "../config/valarmind-dir.ts";
import { ValarmindError } from "../errors.ts";

export interface LockOptions {
  /** A lock not refreshed for this long is considered abandoned (proper-lockfile's minimum is 2000). */
  staleMs?: number;
  /** How long to wait for another process before giving up. */
  waitMs?: number;
}

export interface HeldLock {
  /** True when another process took the lock over (we stalled past `staleMs`): do not write then. */
  compromised(): boolean;
  release(): Promise<void>;
}

/** node:fs as proper-lockfile uses it, except that the lock directory is created private. */
const privateLockFs = {
  ...nodeFs,
  mkdir: (path: string, callback: (error: NodeJS.ErrnoException | null) => void) => nodeFs.mkdir(path, { mode: PRIVATE_DIR_MODE }, callback),
};

export async function acquireLock(target: string, options: LockOptions = {}): Promise<HeldLock> {
  const { default: lockfile } = await import("proper-lockfile");
  const staleMs = options.staleMs ?? 5_000;
  const waitMs = options.waitMs ?? 15_000;
  const maxTimeout = 50;
  const lockPath = `${target}.lock`;
  let lost: Error | undefined;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(target, {
      realpath: false,
      fs: privateLockFs,
      lockfilePath: lockPath,
      stale: staleMs,
      retries: { retries: Math.ceil(waitMs / maxTimeout), minTimeout: 5, maxTimeout, factor: 1.3, randomize: true },
      onCompromised: (error) => {
        lost = error;
      },
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ELOCKED") {
      throw new ValarmindError(`${target} is locked by another valarmind process (lock: ${lockPath})`, {
        hint: `If no valarmind process is running, remove ${lockPath} and retry.`,
        cause: error,
      });
    }
    throw new ValarmindError(`could not lock ${target}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return {
    compromised: () => lost !== undefined,
    release: async () => {
      if (lost) return; // the lock now belongs to someone else; releasing would remove theirs
      await release();
    },
  };
}
