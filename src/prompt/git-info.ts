/**
 * Git facts for the volatile context: branch, upstream distance and changed files, from one
 * `git status --porcelain --branch`. Gathered once per turn (at its start) by the caller; a
 * workspace that is not a git repository (or has no git) simply has no git info. Git runs through
 * src/git/safe-git.ts, which keeps the repository's config from running anything.
 */
import { runGit } from "../git/safe-git.ts";

export interface GitInfo {
  branch: string;
  /** "ahead 1, behind 2", or "" when in sync or without an upstream. */
  upstream: string;
  /** Porcelain lines ("M src/a.ts", "?? notes.md"), at most `limit`. */
  changes: string[];
  /** How many changed paths there are in all. */
  changeCount: number;
}

export function parseGitStatus(output: string, limit = 20): GitInfo | undefined {
  const lines = output.split("\n").filter((line) => line !== "");
  const head = lines[0];
  if (!head?.startsWith("## ")) return undefined;
  const branchPart = head.slice(3);
  const noCommits = /^No commits yet on (.+)$/.exec(branchPart);
  const match = /^([^.\s]+(?:\.[^.\s]+)*?)(?:\.\.\.\S+)?(?: \[(.+)\])?$/.exec(branchPart);
  const branch = noCommits?.[1] ?? match?.[1] ?? branchPart;
  const changes = lines.slice(1).map((line) => line.trim().replace(/\s+/, " "));
  return { branch, upstream: match?.[2] ?? "", changes: changes.slice(0, limit), changeCount: changes.length };
}

export async function readGitInfo(root: string, signal?: AbortSignal): Promise<GitInfo | undefined> {
  try {
    // Submodules are compared by commit only: their dirtiness would take a `git status` inside
    // each one, under a config whose driver names this call has not listed.
    const args = ["status", "--porcelain=v1", "--branch", "--ignore-submodules=dirty"];
    const result = await runGit(root, args, { config: [{ key: "core.quotePath", value: "off" }], ...(signal ? { signal } : {}) });
    return result.exitCode === 0 ? parseGitStatus(result.stdout) : undefined;
  } catch {
    // No git on PATH: the prompt just has no git line.
    return undefined;
  }
}
