import { existsSync, realpathSync, statSync } from "node:fs";
import { homeDir } from "./home-dir.ts";
import { dirname, join, resolve } from "node:path";
import { UsageError } from "../errors.ts";

/** Every path valarmind reads or writes inside a workspace, derived from its root. */
export interface WorkspacePaths {
  root: string;
  dir: string; // .valarmind/
  memoryDir: string;
  stateJson: string;
  stateToon: string;
  schemasDir: string;
  stateSchema: string;
  sessionsDir: string;
  cacheDir: string;
  configFile: string; // .valarmind/config.json
  instructions: string; // VALARMIND.md
  localInstructions: string; // VALARMIND.local.md
  historyFile: string; // .valarmind/history.jsonl (REPL input history)
}

export function workspacePaths(root: string): WorkspacePaths {
  const dir = join(root, ".valarmind");
  const memoryDir = join(dir, "memory");
  const schemasDir = join(memoryDir, "schemas");
  return {
    root,
    dir,
    memoryDir,
    stateJson: join(memoryDir, "state.json"),
    stateToon: join(memoryDir, "state.toon"),
    schemasDir,
    stateSchema: join(schemasDir, "state.schema.json"),
    sessionsDir: join(dir, "sessions"),
    cacheDir: join(dir, "cache"),
    configFile: join(dir, "config.json"),
    instructions: join(root, "VALARMIND.md"),
    localInstructions: join(root, "VALARMIND.local.md"),
    historyFile: join(dir, "history.jsonl"),
  };
}

/**
 * What `valarmind init` writes and nothing else does: a `.valarmind/` holding it was set up on
 * purpose, so it may claim the directories below it (ADR 0070).
 */
export const INIT_MARKER = join(".valarmind", "memory", "schemas", "state.schema.json");

function realOrResolved(path: string): string {
  try {
    return realpathSync(resolve(path));
  } catch {
    return resolve(path);
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The workspace root (ADR 0070). Walking up from `start`, the first directory that is a git work
 * tree (holds `.git`, a directory or a worktree's file) or was set up by `valarmind init` wins, so
 * a `.valarmind/` left in an ancestor never takes over a repository below it. A `.valarmind/`
 * that `init` did not create (a chat run there) claims only its own directory. $HOME and / are
 * never a workspace unless `init` ran there: a start there without one is an error.
 */
export function findWorkspaceRoot(start: string = process.cwd(), options: { home?: string } = {}): string {
  const from = realOrResolved(start);
  const knownHome = options.home ?? homeDir();
  const home = knownHome === undefined ? undefined : realOrResolved(knownHome);
  // $HOME and / are never a workspace unless `valarmind init` ran there.
  const isGuardedDir = (dir: string): boolean => dir === dirname(dir) || dir === home;
  let dir = from;
  for (;;) {
    const initialised = existsSync(join(dir, INIT_MARKER));
    if (initialised) return dir;
    if (!isGuardedDir(dir) && existsSync(join(dir, ".git"))) return dir;
    if (dir === from && !isGuardedDir(dir) && isDir(join(dir, ".valarmind"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  if (isGuardedDir(from)) {
    throw new UsageError(`${from} is ${from === dirname(from) ? "the file system root" : "your home directory"}, which is not a valarmind workspace`, {
      hint: `cd into a project (a git repository or a folder of its own), or run 'valarmind init' in ${from} if you really mean to work there.`,
    });
  }
  return from;
}
