/**
 * `valarmind sessions prune`: what old sessions leave on disk, and removing it when the user says
 * so. A session is its transcript (`.valarmind/sessions/<time>-<id>.jsonl`, with a
 * `.damaged.jsonl` side file when lines were set aside), its per-call files
 * (`.valarmind/sessions/<id>/`: manifests, shell output spools) and its undo checkpoints
 * (`.valarmind/checkpoints/<id>/`). Manifests and checkpoints grow with every request and every
 * edit; nothing else removes them.
 *
 * A session is old when nothing of it changed for `olderThanDays` days. Never removed: a session
 * in use (its lock is held: a REPL, a running `chat -p`), and a session a kept session was forked
 * from (the fork's undo reads the parent's checkpoints). Files left by a session whose transcript
 * is gone are removed by the same rule. Nothing follows a symlink: a link in place of a session's
 * directory is removed as a link, never what it points to.
 *
 *   const plan = planPrune(paths, { olderThanDays: 30 });   // read-only
 *   const done = await prune(paths, plan);                    // removes, session by session, under its lock
 */
import { existsSync, lstatSync, readdirSync, rmSync, type Stats } from "node:fs";
import { join } from "node:path";
import { checkpointsDir } from "../checkpoints/checkpoint-store.ts";
import { undoHistory } from "../checkpoints/undo-history.ts";
import type { WorkspacePaths } from "../config/paths.ts";
import { describeError } from "../errors.ts";
import { damagedSideFile } from "./damaged-lines.ts";
import { lockSession, releaseSessionLock, sessionLockHolder } from "./session-lock.ts";
import { describeSession, listSessions, readSession, type SessionRef } from "./transcript.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
const SESSION_ID = /^[a-z0-9]{4,32}$/;

export interface PruneCandidate {
  id: string;
  /** The transcript, when the session still has one. */
  transcript?: string;
  /** Everything removed with it, existing paths only. */
  paths: string[];
  bytes: number;
  /** Last change to any of its files. */
  lastUsed: Date;
  turns: number;
  firstMessage: string;
}

export interface PrunePlan {
  olderThanDays: number;
  remove: PruneCandidate[];
  /** Sessions kept because they changed within `olderThanDays`. */
  recent: number;
  /** Old sessions kept because a kept session was forked from them. */
  forkParents: string[];
}

export interface PruneResult {
  removed: PruneCandidate[];
  /** Sessions not removed after all, and why (in use now, a file that could not be removed). */
  skipped: Array<{ id: string; why: string }>;
}

interface Footprint {
  bytes: number;
  newest: number;
}

/** Size and newest mtime of a path and, for a real directory, everything under it; links are not followed. */
function footprint(path: string): Footprint {
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch {
    return { bytes: 0, newest: 0 };
  }
  const own = { bytes: stats.isFile() ? stats.size : 0, newest: stats.mtimeMs };
  if (!stats.isDirectory()) return own;
  let names: string[] = [];
  try {
    names = readdirSync(path);
  } catch {
    return own;
  }
  return names.reduce((acc, name) => {
    const child = footprint(join(path, name));
    return { bytes: acc.bytes + child.bytes, newest: Math.max(acc.newest, child.newest) };
  }, own);
}

function existing(paths: string[]): string[] {
  return paths.filter((path) => {
    try {
      lstatSync(path);
      return true;
    } catch {
      return false;
    }
  });
}

function sessionIdsIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => SESSION_ID.test(name));
}

function candidateOf(id: string, ref: SessionRef | undefined, paths: WorkspacePaths, describe: boolean): PruneCandidate {
  const files = existing([...(ref ? [ref.file, damagedSideFile(ref.file)] : []), join(paths.sessionsDir, id), join(checkpointsDir(paths), id)]);
  const sizes = files.map(footprint);
  let turns = 0;
  let firstMessage = "";
  if (ref && describe) {
    try {
      ({ turns, firstMessage } = describeSession(ref));
    } catch (error) {
      firstMessage = `(unreadable: ${describeError(error)})`;
    }
  }
  return {
    id,
    ...(ref && { transcript: ref.file }),
    paths: files,
    bytes: sizes.reduce((n, s) => n + s.bytes, 0),
    lastUsed: new Date(Math.max(0, ...sizes.map((s) => s.newest))),
    turns,
    firstMessage,
  };
}

/** What pruning sessions unused for `olderThanDays` days would remove. Reads only. */
export function planPrune(paths: WorkspacePaths, options: { olderThanDays: number; now?: Date; describe?: boolean }): PrunePlan {
  const cutoff = (options.now ?? new Date()).getTime() - options.olderThanDays * DAY_MS;
  const refs = new Map(listSessions(paths).map((ref) => [ref.id, ref]));
  const ids = new Set([...refs.keys(), ...sessionIdsIn(paths.sessionsDir), ...sessionIdsIn(checkpointsDir(paths))]);
  const old: PruneCandidate[] = [];
  const kept: string[] = [];
  for (const id of [...ids].sort()) {
    const candidate = candidateOf(id, refs.get(id), paths, options.describe !== false);
    if (candidate.paths.length === 0) continue;
    if (candidate.lastUsed.getTime() <= cutoff) old.push(candidate);
    else kept.push(id);
  }
  // A kept fork still undoes its copied turns from the sessions it came from.
  const parents = new Set<string>();
  // Only an old session can be a parent worth keeping: with none, no kept transcript is read.
  for (const id of old.length > 0 ? kept : []) {
    const ref = refs.get(id);
    if (!ref) continue;
    try {
      for (const parent of undoHistory(readSession(ref.file).records).forkedFrom) parents.add(parent.id);
    } catch {
      // An unreadable transcript names no parent; `sessions show` reports it.
    }
  }
  return {
    olderThanDays: options.olderThanDays,
    remove: old.filter((c) => !parents.has(c.id)).sort((a, b) => a.lastUsed.getTime() - b.lastUsed.getTime()),
    recent: kept.length,
    forkParents: old.filter((c) => parents.has(c.id)).map((c) => c.id),
  };
}

/**
 * Which of `ids` are in use now, with who holds them, so a preview can say what `--yes` would
 * keep. Read-only (`sessionLockHolder`); `prune` itself decides under each session's lock.
 */
export function sessionsInUse(paths: WorkspacePaths, ids: readonly string[]): Map<string, string> {
  const busy = new Map<string, string>();
  for (const id of ids) {
    const holder = sessionLockHolder(paths, id);
    if (holder !== undefined) busy.set(id, holder);
  }
  return busy;
}

/** Removes the plan's sessions, each under its session lock (one in use now is skipped). */
export async function prune(paths: WorkspacePaths, plan: PrunePlan): Promise<PruneResult> {
  const result: PruneResult = { removed: [], skipped: [] };
  for (const candidate of plan.remove) {
    const lock = await lockSession(paths, candidate.id, { waitMs: 0 });
    if (lock.kind === "busy") {
      result.skipped.push({ id: candidate.id, why: `in use by another valarmind (${lock.holder})` });
      continue;
    }
    try {
      // Used since the plan was made (resumed between the listing and this lock): kept, with its new turn.
      const newest = Math.max(0, ...candidate.paths.map((path) => footprint(path).newest));
      if (Math.floor(newest) > candidate.lastUsed.getTime()) {
        result.skipped.push({ id: candidate.id, why: "used since this prune was planned" });
        continue;
      }
      const failed: string[] = [];
      for (const path of candidate.paths) {
        try {
          // rmSync removes a symlink itself, never its target; a real directory recursively, links inside as links.
          rmSync(path, { recursive: true, force: true });
        } catch (error) {
          failed.push(`${path}: ${describeError(error)}`);
        }
      }
      if (failed.length > 0) result.skipped.push({ id: candidate.id, why: `could not remove ${failed.join("; ")}` });
      else result.removed.push(candidate);
    } finally {
      await releaseSessionLock(lock.lock);
    }
  }
  return result;
}

/** "3.2 MB", "812 KB", "96 B". */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} B`;
}
