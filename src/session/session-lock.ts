/**
 * One writer per session (ADR 0072). A process that writes a transcript holds
 * `.valarmind/sessions/<id>.lock` (src/state/lock.ts: proper-lockfile, with the holder's pid inside so a lock
 * left by a killed process is taken over at once) from open to close. Another process either
 * waits for it, saying so, up to a bound, or is told the session is busy and forks.
 */
import { join } from "node:path";
import type { WorkspacePaths } from "../config/paths.ts";
import { ensureValarmindDir } from "../config/valarmind-dir.ts";
import { acquireLock, type HeldLock } from "../state/lock.ts";
import { lockStands, readLockOwner } from "../state/lock-owner.ts";
import { describeError, UsageError } from "../errors.ts";
import { envMilliseconds } from "../config/env-milliseconds.ts";

/** What to do when the session is in use. `waitMs: 0` forks at once (the REPL). */
export interface BusySessionPolicy {
  waitMs: number;
  /** Told once when waiting starts. */
  onWait?: (message: string) => void;
  /** Aborting stops the wait (the caller then forks, so the message is still saved). */
  signal?: AbortSignal;
}

export type SessionLockResult = { kind: "held"; lock: HeldLock } | { kind: "busy"; holder: string };

/** A lock not refreshed for this long is abandoned; a dead holder on this host is seen at once anyway. */
const SESSION_LOCK_STALE_MS = 20_000;
/** Headless `--continue`: how long to wait for another process's turn before forking. */
export const DEFAULT_SESSION_WAIT_MS = 120_000;

/** The headless wait bound: VALARMIND_SESSION_WAIT_MS (a whole number of ms), else the default. */
export function sessionWaitMs(env: Record<string, string | undefined>): number {
  return envMilliseconds(env, "VALARMIND_SESSION_WAIT_MS", DEFAULT_SESSION_WAIT_MS, "Set VALARMIND_SESSION_WAIT_MS to 0 or more (e.g. 120000), or unset it for the default of 2 minutes.");
}

function isLocked(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return typeof cause === "object" && cause !== null && "code" in cause && cause.code === "ELOCKED";
}

function describeHolder(file: string): string {
  // A holder between its mkdir and its owner file (two starts at the same moment): a moment more.
  let owner = readLockOwner(`${file}.lock`);
  for (let tries = 0; owner === undefined && tries < 5; tries++) {
    Bun.sleepSync(10);
    owner = readLockOwner(`${file}.lock`);
  }
  return owner ? `pid ${owner.pid}${owner.hostname === "" ? "" : ` on ${owner.hostname}`}` : "pid unknown";
}

function tryLock(file: string, waitMs: number): Promise<HeldLock | undefined> {
  return acquireLock(file, { staleMs: SESSION_LOCK_STALE_MS, waitMs }).catch((error: unknown) => {
    if (isLocked(error)) return undefined;
    throw error;
  });
}

/**
 * Who holds session `id`'s lock, or undefined when nobody does (or the next writer would take it
 * over: `lockStands`), judged without writing anything (a preview must leave the disk as it is).
 */
export function sessionLockHolder(paths: WorkspacePaths, id: string, now = Date.now()): string | undefined {
  const file = join(paths.sessionsDir, id);
  return lockStands(`${file}.lock`, SESSION_LOCK_STALE_MS, now) ? describeHolder(file) : undefined;
}

/** Locks the session `id` (its transcript need not exist yet: a new session is locked before it is created). */
export async function lockSession(paths: WorkspacePaths, id: string, policy: BusySessionPolicy): Promise<SessionLockResult> {
  ensureValarmindDir(paths, paths.sessionsDir);
  // Keyed by id, not by file name, so a lock can be taken before the file (and its start time) exists.
  const file = join(paths.sessionsDir, id);
  const first = await tryLock(file, 0);
  if (first) return { kind: "held", lock: first };
  const holder = describeHolder(file);
  const signal = policy.signal;
  if (policy.waitMs <= 0 || signal?.aborted) return { kind: "busy", holder };
  policy.onWait?.(`session ${id} is in use by another valarmind (${holder}); waiting up to ${Math.round(policy.waitMs / 1000)} s for its turn to end…`);
  // Polled here rather than in acquireLock, so that a signal stops the wait at once and nothing
  // is left running that would keep the process alive.
  const deadline = Date.now() + policy.waitMs;
  while (Date.now() < deadline && !signal?.aborted) {
    await pause(Math.min(POLL_MS, deadline - Date.now()), signal);
    if (signal?.aborted) break;
    const lock = await tryLock(file, 0);
    if (lock) return { kind: "held", lock };
  }
  return { kind: "busy", holder: describeHolder(file) };
}

const POLL_MS = 100;

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Releases a session lock; a failure only leaves a lock the next writer takes over (dead pid). */
export async function releaseSessionLock(lock: HeldLock | undefined): Promise<string | undefined> {
  if (!lock) return undefined;
  try {
    await lock.release();
    return undefined;
  } catch (error) {
    return describeError(error);
  }
}
