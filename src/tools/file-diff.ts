/**
 * Unified diffs of a file change (the `diff` package, imported on the first diff so that listing
 * the tools stays cheap), with +/- line counts for summaries. Bounded: the Myers diff gives up after
 * DIFF_TIMEOUT_MS or DIFF_MAX_EDIT_LENGTH edits (a rewrite of every line of a big file took ~50 s,
 * synchronously, before the approval could even be asked), and the change is then shown as the
 * whole file replaced; the diff text is cut head+tail past DIFF_MAX_CHARS.
 */
import type { StructuredPatch } from "diff";

export interface FileDiff {
  text: string;
  added: number;
  removed: number;
}

export const DIFF_TIMEOUT_MS = 300;
export const DIFF_MAX_EDIT_LENGTH = 10_000;
export const DIFF_MAX_CHARS = 256 * 1024;

function linesOf(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** The change as one hunk: every old line removed, every new line added. */
function wholeFilePatch(oldName: string, newName: string, before: string, after: string): StructuredPatch {
  const old = linesOf(before);
  const now = linesOf(after);
  const lines = [...old.map((l) => `-${l}`)];
  if (before !== "" && !before.endsWith("\n")) lines.push("\\ No newline at end of file");
  lines.push(...now.map((l) => `+${l}`));
  if (after !== "" && !after.endsWith("\n")) lines.push("\\ No newline at end of file");
  return {
    oldFileName: oldName,
    newFileName: newName,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [{ oldStart: old.length === 0 ? 0 : 1, oldLines: old.length, newStart: now.length === 0 ? 0 : 1, newLines: now.length, lines }],
  };
}

function bounded(text: string): string {
  if (text.length <= DIFF_MAX_CHARS) return text;
  const head = text.slice(0, DIFF_MAX_CHARS / 2);
  const tail = text.slice(-DIFF_MAX_CHARS / 2);
  const hidden = text.slice(head.length, text.length - tail.length).split("\n").length;
  return `${head}\n… ${hidden} lines of the diff not shown …\n${tail}`;
}

/** A changed line longer than this is shown as a window around what changed in it. */
export const DIFF_LONG_LINE_CHARS = 2000;
const WINDOW_CONTEXT_CHARS = 200;

function elided(count: number): string {
  return `…[${count} chars]…`;
}

/** `line` (without its +/- sign) cut to [from, to) with its ends counted, or whole when short. */
function window(line: string, from: number, to: number): string {
  const start = Math.max(0, from - WINDOW_CONTEXT_CHARS);
  const end = Math.min(line.length, to + WINDOW_CONTEXT_CHARS);
  return `${start > 0 ? elided(start) : ""}${line.slice(start, end)}${end < line.length ? elided(line.length - end) : ""}`;
}

function headAndTail(line: string): string {
  const half = DIFF_LONG_LINE_CHARS / 2;
  return `${line.slice(0, half)}${elided(line.length - 2 * half)}${line.slice(-half)}`;
}

/**
 * Long changed lines (minified code, a one-line JSON) shown around the change: each removed line
 * paired with the added line at the same place in its run shows the span between their common
 * start and end, with some context; an unpaired one its head and tail. Cut whole, the change sat
 * in the middle of a quarter megabyte and the user approved what they could not see.
 */
function clipLongLines(lines: string[]): string[] {
  const out = [...lines];
  let i = 0;
  while (i < out.length) {
    if (!out[i]?.startsWith("-")) {
      i++;
      continue;
    }
    const removedAt = i;
    while (out[i]?.startsWith("-")) i++;
    const addedAt = i;
    while (out[i]?.startsWith("+")) i++;
    const removed = addedAt - removedAt;
    const added = i - addedAt;
    for (let k = 0; k < Math.max(removed, added); k++) {
      const oldLine = k < removed ? (out[removedAt + k] ?? "").slice(1) : undefined;
      const newLine = k < added ? (out[addedAt + k] ?? "").slice(1) : undefined;
      if ((oldLine?.length ?? 0) <= DIFF_LONG_LINE_CHARS && (newLine?.length ?? 0) <= DIFF_LONG_LINE_CHARS) continue;
      if (oldLine !== undefined && newLine !== undefined) {
        let prefix = 0;
        const shortest = Math.min(oldLine.length, newLine.length);
        while (prefix < shortest && oldLine.charCodeAt(prefix) === newLine.charCodeAt(prefix)) prefix++;
        let suffix = 0;
        while (suffix < shortest - prefix && oldLine.charCodeAt(oldLine.length - 1 - suffix) === newLine.charCodeAt(newLine.length - 1 - suffix)) suffix++;
        out[removedAt + k] = `-${window(oldLine, prefix, oldLine.length - suffix)}`;
        out[addedAt + k] = `+${window(newLine, prefix, newLine.length - suffix)}`;
      } else if (oldLine !== undefined) {
        out[removedAt + k] = `-${headAndTail(oldLine)}`;
      } else if (newLine !== undefined) {
        out[addedAt + k] = `+${headAndTail(newLine)}`;
      }
    }
  }
  return out;
}

/** `before` undefined means the file is new (diffed against /dev/null). */
export async function fileDiff(rel: string, before: string | undefined, after: string): Promise<FileDiff> {
  const { FILE_HEADERS_ONLY, formatPatch, structuredPatch } = await import("diff");
  const oldName = before === undefined ? "/dev/null" : `a/${rel}`;
  const newName = `b/${rel}`;
  const patch =
    structuredPatch(oldName, newName, before ?? "", after, undefined, undefined, { context: 3, timeout: DIFF_TIMEOUT_MS, maxEditLength: DIFF_MAX_EDIT_LENGTH }) ??
    wholeFilePatch(oldName, newName, before ?? "", after);
  for (const hunk of patch.hunks) hunk.lines = clipLongLines(hunk.lines);
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added++;
      else if (line.startsWith("-")) removed++;
    }
  }
  return { text: bounded(formatPatch(patch, FILE_HEADERS_ONLY)), added, removed };
}
