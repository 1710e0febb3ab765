/**
 * `.valarmind/` is valarmind's private directory: transcripts, manifests, the working state and
 * the input history live there. Every writer creates its directories through ensureValarmindDir,
 * which makes them 0700 (tightening an existing `.valarmind/` that others can read) and gives
 * `.valarmind/` a `.gitignore` of `*`, so `git add -A` never commits it, `valarmind init` or not.
 * Files in it are written 0600 (PRIVATE_FILE_MODE).
 */
import { chmodSync, lstatSync, mkdirSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { describeError, errnoCode, ValarmindError } from "../errors.ts";
import type { WorkspacePaths } from "./paths.ts";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** Ignores everything in `.valarmind/`, this file included. */
export const VALARMIND_GITIGNORE = "*\n";

/**
 * mkdir 0700; true when created, false when it already was a directory. A symbolic link in its
 * place (a cloned repository can ship `.valarmind -> /somewhere`) is refused, never followed: the
 * transcripts, manifests and state would be written wherever it points.
 */
function makePrivateDir(dir: string): boolean {
  try {
    mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
    return true;
  } catch (error) {
    if (errnoCode(error) === "EEXIST" && lstatSync(dir).isSymbolicLink()) {
      let target = "";
      try {
        target = ` (to ${readlinkSync(dir)})`;
      } catch {
        // The link's target is only for the message.
      }
      throw new ValarmindError(`${dir} is a symbolic link${target}; valarmind keeps its private files only in a real directory and wrote nothing`, {
        hint: `Remove the link (rm ${JSON.stringify(dir)}) — a cloned repository may have shipped it — and retry; valarmind creates the directory itself.`,
      });
    }
    if (errnoCode(error) === "EEXIST" && statSync(dir).isDirectory()) return false;
    throw new ValarmindError(`cannot create the directory ${dir}: ${describeError(error)}`, {
      hint: "A file may be in the way, or the directory is not writable. Move it aside and retry.",
      cause: error,
    });
  }
}

function tightenIfShared(dir: string): void {
  const mode = statSync(dir).mode;
  if ((mode & 0o077) === 0 || process.platform === "win32") return;
  try {
    chmodSync(dir, PRIVATE_DIR_MODE);
  } catch (error) {
    throw new ValarmindError(`${dir} is readable by other users and could not be made private: ${describeError(error)}`, {
      hint: `Run 'chmod 700 ${dir}' (or ask its owner to), then retry.`,
      cause: error,
    });
  }
}

/** Writes `.valarmind/.gitignore` unless one exists (a user's own is never overwritten). */
function ensureGitignore(dir: string): void {
  try {
    writeFileSync(join(dir, ".gitignore"), VALARMIND_GITIGNORE, { flag: "wx", mode: PRIVATE_FILE_MODE });
  } catch (error) {
    if (errnoCode(error) === "EEXIST") return;
    throw new ValarmindError(`cannot write ${join(dir, ".gitignore")}: ${describeError(error)}`, {
      hint: `Check that ${dir} is writable, then retry.`,
      cause: error,
    });
  }
}

/**
 * Makes `.valarmind/` and every directory from it down to `dir` (default: `.valarmind/` itself)
 * private and present; returns the directories it created, outermost first.
 */
export function ensureValarmindDir(paths: WorkspacePaths, dir: string = paths.dir): string[] {
  const below = relative(paths.dir, dir);
  if (below.startsWith("..") || isAbsolute(below)) {
    throw new ValarmindError(`${dir} is not inside ${paths.dir}; valarmind only creates its private directories there`);
  }
  const created: string[] = [];
  mkdirSync(dirname(paths.dir), { recursive: true });
  if (makePrivateDir(paths.dir)) created.push(paths.dir);
  else tightenIfShared(paths.dir);
  ensureGitignore(paths.dir);
  let current = paths.dir;
  for (const part of below === "" ? [] : below.split(sep)) {
    current = join(current, part);
    if (makePrivateDir(current)) created.push(current);
  }
  return created;
}

/**
 * Refuses a symbolic link anywhere from `.valarmind/` down to `dir` (a session's directory, its
 * `manifests/` or `outputs/`): a folder copied from elsewhere, or planted, can link out of the
 * workspace, and what valarmind writes there (manifests, command output) would land wherever it
 * points, what it reads would be another folder's. Paths above `.valarmind/` are the user's own.
 */
export function refuseLinksBelowValarmind(dir: string): void {
  const parts = dir.split(sep);
  const top = parts.lastIndexOf(".valarmind");
  if (top === -1) return;
  for (let end = top + 1; end <= parts.length; end++) {
    const path = parts.slice(0, end).join(sep) || sep;
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(path);
    } catch {
      return;
    }
    if (!info.isSymbolicLink()) continue;
    let target = "";
    try {
      target = ` (to ${readlinkSync(path)})`;
    } catch {
      // The link's target is only for the message.
    }
    throw new ValarmindError(`${path} is a symbolic link${target}; valarmind keeps its private files only in real directories and neither reads nor writes through it`, {
      hint: `Remove the link (rm ${JSON.stringify(path)}) — a copied folder or a cloned repository may have brought it — and retry.`,
    });
  }
}

/**
 * For writers that know only their own directory (manifests under a session's directory, a model
 * recording): creates it and any missing parents 0700. The `.valarmind/` above it was already
 * made private by ensureValarmindDir when the session started.
 */
export function makePrivateDirs(dir: string): void {
  refuseLinksBelowValarmind(dir);
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (error) {
    throw new ValarmindError(`cannot create the directory ${dir}: ${describeError(error)}`, {
      hint: "A file may be in the way, or the directory is not writable. Move it aside and retry.",
      cause: error,
    });
  }
}
