/**
 * The prompt as the terminal shows it: each line of the buffer wrapped to the editor's width (at
 * the last space that fits, else mid-word), as offsets into the text, and the window of rows
 * around the cursor that the editor draws. A long prompt written as one line is as tall on screen
 * as its wrapped rows, so the window counts rows, not lines: a frame taller than the screen
 * leaves stale copies of itself in the terminal's scrollback on every key (live-frame-budget.ts).
 *
 *   const rows = wrapRows(buffer.text, columns - 3);           // [{ start, end, first, last }]
 *   const view = rowWindow(rows, cursorRow(rows, buffer.cursor), 8);
 */
import stringWidth from "string-width";
import { terminalSafeLiteral } from "../terminal-safe-text.ts";

export interface EditorRow {
  /** Offsets into the whole text: the row shows text.slice(start, end). */
  start: number;
  end: number;
  /** The row starts a line of the buffer. */
  first: boolean;
  /** The row ends a line of the buffer (its end is a newline or the end of the text). */
  last: boolean;
}

/** Cells a character takes as drawn (controls are drawn as visible pictures; nothing takes 0). */
function cells(char: string): number {
  return Math.max(1, stringWidth(terminalSafeLiteral(char)));
}

/** Every row of `text` at `width` cells per row (at least 1), in order. */
export function wrapRows(text: string, width: number): EditorRow[] {
  const capacity = Math.max(1, width);
  const rows: EditorRow[] = [];
  let lineStart = 0;
  for (const line of text.split("\n")) {
    let start = lineStart;
    let used = 0;
    // Where the row would end if it broke at its last space (after the space), or -1.
    let lastBreak = -1;
    let usedAtBreak = 0;
    let offset = lineStart;
    for (const char of line) {
      const w = cells(char);
      if (used + w > capacity && offset > start && lastBreak > start) {
        rows.push({ start, end: lastBreak, first: start === lineStart, last: false });
        used -= usedAtBreak;
        start = lastBreak;
        lastBreak = -1;
      }
      if (used + w > capacity && offset > start) {
        rows.push({ start, end: offset, first: start === lineStart, last: false });
        used = 0;
        start = offset;
        lastBreak = -1;
      }
      used += w;
      offset += char.length;
      if (char === " ") {
        lastBreak = offset;
        usedAtBreak = used;
      }
    }
    rows.push({ start, end: offset, first: start === lineStart, last: true });
    lineStart = offset + 1;
  }
  return rows;
}

/** The row the cursor is drawn in: a cursor at a wrapped row's end is at the next row's start. */
export function cursorRow(rows: readonly EditorRow[], cursor: number): number {
  const index = rows.findIndex((row) => cursor >= row.start && (cursor < row.end || (cursor === row.end && row.last)));
  return index === -1 ? Math.max(0, rows.length - 1) : index;
}

/** The rows drawn: at most `max` (at least 1), around the cursor's row; how many are left out above and below. */
export function rowWindow(rows: readonly EditorRow[], cursorIndex: number, max: number): { first: number; shown: number; above: number; below: number } {
  const limit = Math.max(1, max);
  const first = Math.max(0, Math.min(cursorIndex - Math.floor(limit / 2), rows.length - limit));
  const shown = Math.min(limit, rows.length - first);
  return { first, shown, above: first, below: rows.length - first - shown };
}
