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

/** `before` undefined means the file is new (diffed against /dev/null). */
export async function fileDiff(rel: string, before: string | undefined, after: string): Promise<FileDiff> {
  const { FILE_HEADERS_ONLY, formatPatch, structuredPatch } = await import("diff");
  const oldName = before === undefined ? "/dev/null" : `a/${rel}`;
  const newName = `b/${rel}`;
  const patch =
    structuredPatch(oldName, newName, before ?? "", after, undefined, undefined, { context: 3, timeout: DIFF_TIMEOUT_MS, maxEditLength: DIFF_MAX_EDIT_LENGTH }) ??
    wholeFilePatch(oldName, newName, before ?? "", after);
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
