/**
 * Confines a path argument to the workspace: lexically (`..`, absolute paths elsewhere) and
 * physically (the real path of the target, or of its nearest existing ancestor, must stay under
 * the root's real path, so a symlink cannot lead outside).
 */
import { lstatSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { errnoCode } from "../errors.ts";

export class PathEscapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PathEscapeError";
  }
}

export interface ConfinedPath {
  /** Absolute path with symlinks resolved (for a new file: its real parent plus the new name). */
  abs: string;
  /** Path relative to the workspace root, "/"-separated; "." for the root itself. */
  rel: string;
}

/** Directories valarmind never lets a tool write into: git's own data and valarmind's state. */
const WRITE_PROTECTED = [".git", ".valarmind"];

function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

function toRel(root: string, abs: string): string {
  const rel = relative(root, abs);
  return rel === "" ? "." : rel.split(sep).join("/");
}

/** Resolves the real path of `abs`, or of its nearest existing ancestor joined with the rest. */
function physicalPath(abs: string, shown: string): string {
  let existing = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      const stat = lstatSync(existing);
      if (stat.isSymbolicLink()) {
        try {
          return join(realpathSync(existing), ...rest);
        } catch (error) {
          // A target the file system refuses to resolve is not a missing one (the registry says permission denied).
          const code = errnoCode(error);
          if (code === "EACCES" || code === "EPERM") throw error;
          throw new PathEscapeError(`path '${shown}' goes through a symlink whose target does not exist; refusing to follow it`);
        }
      }
      return join(realpathSync(existing), ...rest);
    } catch (error) {
      if (error instanceof PathEscapeError) throw error;
      const code = errnoCode(error);
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      const parent = dirname(existing);
      if (parent === existing) return abs;
      rest.unshift(existing.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      existing = parent;
    }
  }
}

/**
 * `rootReal` must already be a real path (`realpathSync(root)`). `forWrite` also refuses paths
 * inside `.git/` and `.valarmind/`.
 */
export function confinePath(rootReal: string, input: string, options: { forWrite?: boolean } = {}): ConfinedPath {
  if (input.trim() === "") throw new PathEscapeError("path is empty; give a path relative to the workspace root");
  if (input.includes("\0")) throw new PathEscapeError("path contains a NUL byte");
  const lexical = isAbsolute(input) ? resolve(input) : resolve(rootReal, input);
  if (!isInside(rootReal, lexical)) {
    throw new PathEscapeError(
      `path '${input}' is outside the workspace (${rootReal}); only files under the workspace can be used — give a path relative to the workspace root`,
    );
  }
  const abs = physicalPath(lexical, input);
  if (!isInside(rootReal, abs)) {
    throw new PathEscapeError(
      `path '${input}' resolves through a symlink to ${abs}, which is outside the workspace (${rootReal}); refusing to follow it`,
    );
  }
  const rel = toRel(rootReal, abs);
  if (options.forWrite) {
    // At any depth (a submodule's .git, a nested workspace) and in any letter case (.GIT is .git
    // on case-insensitive file systems).
    const protectedPart = rel.split("/").find((part) => WRITE_PROTECTED.includes(part.toLowerCase()));
    if (protectedPart !== undefined) {
      const name = protectedPart.toLowerCase();
      throw new PathEscapeError(
        `path '${input}' is inside ${protectedPart}/, which tools may not write; ${name === ".valarmind" ? "use the memory_* tools to change the working state" : "use git through run_shell instead"}`,
      );
    }
  }
  return { abs, rel };
}
