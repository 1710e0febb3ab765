import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

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
 * The workspace root: the nearest ancestor of `start` holding `.valarmind/`, else the nearest
 * holding `.git`, else `start` itself.
 */
export function findWorkspaceRoot(start: string = process.cwd()): string {
  const from = resolve(start);
  for (const marker of [".valarmind", ".git"]) {
    let dir = from;
    for (;;) {
      if (existsSync(join(dir, marker))) return dir;
      const parent = dirname(dir);
      if (parent === dir) break;
      dir = parent;
    }
  }
  return from;
}
