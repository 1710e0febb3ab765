/**
 * Walks the workspace the way git sees it: `.gitignore` files (root and nested, via the `ignore`
 * package) are honoured, `.git/`, `node_modules/` and `.valarmind/` are always skipped, symlinked
 * directories are not followed (a link could lead outside the workspace). Order is sorted, so
 * output is deterministic.
 */
import { readFile, readdir } from "node:fs/promises";
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

async function loadLayer(rootReal: string, dirRel: string): Promise<IgnoreLayer | undefined> {
  let content: string;
  try {
    content = await readFile(join(rootReal, dirRel, ".gitignore"), "utf8");
  } catch {
    return undefined; // no .gitignore in this directory
  }
  return { base: dirRel, matcher: ignore().add(content) };
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
export async function* walkFiles(rootReal: string, startAbs: string, signal?: AbortSignal): AsyncGenerator<WalkEntry> {
  const startRel = toPosix(relative(rootReal, startAbs));
  const layers: IgnoreLayer[] = [];
  // .gitignore files of the directories above the start apply too.
  const above = startRel === "" ? [] : startRel.split("/");
  for (let i = 0; i < above.length; i++) {
    const layer = await loadLayer(rootReal, above.slice(0, i).join("/"));
    if (layer) layers.push(layer);
  }
  yield* walkDir(rootReal, startRel, layers, signal);
}

async function* walkDir(rootReal: string, dirRel: string, parentLayers: IgnoreLayer[], signal?: AbortSignal): AsyncGenerator<WalkEntry> {
  if (signal?.aborted) return;
  const own = await loadLayer(rootReal, dirRel);
  const layers = own ? [...parentLayers, own] : parentLayers;
  const dirAbs = join(rootReal, dirRel);
  const entries = await readdir(dirAbs, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const rel = dirRel === "" ? entry.name : `${dirRel}/${entry.name}`;
    if (entry.isDirectory()) {
      if ((ALWAYS_SKIPPED as readonly string[]).includes(entry.name) || isIgnored(layers, rel, true)) continue;
      yield* walkDir(rootReal, rel, layers, signal);
    } else if (entry.isFile() || entry.isSymbolicLink()) {
      if (isIgnored(layers, rel, false)) continue;
      yield { abs: join(dirAbs, entry.name), rel, isSymlink: entry.isSymbolicLink() };
    }
  }
}
