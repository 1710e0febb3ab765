/**
 * Walks the workspace the way git sees it: `.gitignore` files (root and nested, via the `ignore`
 * package) are honoured, `.git/`, `node_modules/` and `.valarmind/` are always skipped, symlinked
 * directories are not followed (a link could lead outside the workspace). Order is sorted, so
 * output is deterministic.
 */
import { constants } from "node:fs";
import { lstat, open, readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";

export const ALWAYS_SKIPPED = [".git", "node_modules", ".valarmind"] as const;

export interface WalkEntry {
  abs: string;
  /** "/"-separated path relative to the workspace root. */
  rel: string;
  isSymlink: boolean;
}

interface IgnoreLayer {
  /** Directory of the .gitignore, relative to the root ("" for the root). */
  base: string;
  matcher: Ignore;
}

const toPosix = (p: string): string => p.split(sep).join("/");

/** A .gitignore over this is not read (git's own limit is 100 MB; real ones are a few KB). */
const IGNORE_FILE_MAX_BYTES = 1024 * 1024;

/**
 * A directory's .gitignore, read only when it is a regular file: a FIFO (or a symlink to one, to
 * /dev/tty, or to a file outside the workspace) shipped by a repository would block the walk or
 * read what is not the repository's. Git itself ignores a symlinked .gitignore since 2.32.
 */
async function loadLayer(rootReal: string, dirRel: string): Promise<IgnoreLayer | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(join(rootReal, dirRel, ".gitignore"), IGNORE_FILE_FLAGS);
    const info = await handle.stat();
    if (!info.isFile() || info.size > IGNORE_FILE_MAX_BYTES) return undefined;
    const content = (await handle.readFile()).toString("utf8");
    return { base: dirRel, matcher: ignore().add(content) };
  } catch {
    return undefined; // no .gitignore in this directory, or not one to read
  } finally {
    await handle?.close();
  }
}

const IGNORE_FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * Whether a .gitignore that ripgrep would open is not a regular file (a FIFO, a symlink, a
 * device): under `target` or in a directory between the root and `target`. ripgrep opens such a
 * file and blocks on a FIFO; the JS walk skips it. `find` lists entries by type without opening
 * them (tens of milliseconds for 20k files, against seconds for the search itself).
 */
export async function unsafeIgnoreFiles(rootReal: string, target: string): Promise<boolean> {
  const rel = toPosix(relative(rootReal, target));
  const above = rel === "" ? [""] : ["", ...rel.split("/").slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join("/"))];
  for (const dir of above) {
    try {
      if (!(await lstat(join(rootReal, dir, ".gitignore"))).isFile()) return true;
    } catch {
      // none there
    }
  }
  const find = Bun.which("find");
  if (!find) return true;
  const proc = Bun.spawn([find, target, "(", "-name", ".git", "-o", "-name", "node_modules", ")", "-prune", "-o", "-name", ".gitignore", "!", "-type", "f", "-print", "-quit"], { cwd: rootReal, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
  const found = (await new Response(proc.stdout).text()).trim();
  await proc.exited;
  return found !== "";
}

function isIgnored(layers: readonly IgnoreLayer[], rel: string, isDir: boolean): boolean {
  for (const layer of layers) {
    const local = layer.base === "" ? rel : rel.slice(layer.base.length + 1);
    if (local === "" || local.startsWith("..")) continue;
    if (layer.matcher.ignores(isDir ? `${local}/` : local)) return true;
  }
  return false;
}

/** Yields the files under `startAbs` (a directory inside `rootReal`) that git would not ignore. */
/** `unreadable`: told the directories under the start that could not be read (skipped, not fatal). */
export async function* walkFiles(rootReal: string, startAbs: string, signal?: AbortSignal, unreadable?: string[]): AsyncGenerator<WalkEntry> {
  const startRel = toPosix(relative(rootReal, startAbs));
  const layers: IgnoreLayer[] = [];
  // .gitignore files of the directories above the start apply too.
  const above = startRel === "" ? [] : startRel.split("/");
  for (let i = 0; i < above.length; i++) {
    const layer = await loadLayer(rootReal, above.slice(0, i).join("/"));
    if (layer) layers.push(layer);
  }
  yield* walkDir(rootReal, startRel, layers, signal, { start: startRel, unreadable });
}

async function* walkDir(rootReal: string, dirRel: string, parentLayers: IgnoreLayer[], signal: AbortSignal | undefined, skips: { start: string; unreadable: string[] | undefined }): AsyncGenerator<WalkEntry> {
  if (signal?.aborted) return;
  const own = await loadLayer(rootReal, dirRel);
  const layers = own ? [...parentLayers, own] : parentLayers;
  const dirAbs = join(rootReal, dirRel);
  let entries;
  try {
    entries = await readdir(dirAbs, { withFileTypes: true });
  } catch (error) {
    // One directory valarmind may not read (a container volume owned by another user) is skipped
    // and told; only the start directory itself fails the walk.
    const code = (error as { code?: unknown }).code;
    if (dirRel === skips.start || !skips.unreadable || (code !== "EACCES" && code !== "EPERM")) throw error;
    skips.unreadable.push(`${dirRel}/`);
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const rel = dirRel === "" ? entry.name : `${dirRel}/${entry.name}`;
    if (entry.isDirectory()) {
      if ((ALWAYS_SKIPPED as readonly string[]).includes(entry.name) || isIgnored(layers, rel, true)) continue;
      yield* walkDir(rootReal, rel, layers, signal, skips);
    } else if (entry.isFile() || entry.isSymbolicLink()) {
      if (isIgnored(layers, rel, false)) continue;
      yield { abs: join(dirAbs, entry.name), rel, isSymlink: entry.isSymbolicLink() };
    }
  }
}
