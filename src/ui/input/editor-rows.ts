/**
 * The prompt as the terminal shows it: each line of the buffer wrapped to the editor's width (at
 * the last space that fits, else mid-word, never inside a character as drawn: an accent, a skin
 * tone or a flag stays with its base), as offsets into the text, and the window of rows around the
 * cursor that the editor draws. A long prompt written as one line is as tall on screen as its
 * wrapped rows, so the window counts rows, not lines: a frame taller than the screen leaves stale
 * copies of itself in the terminal's scrollback on every key (live-frame-budget.ts). Up and Down
 * move by these rows too.
 *
 *   const rows = wrapRows(buffer.text, rowWidth(columns));     // [{ start, end, first, last }]
 *   const view = rowWindow(rows, cursorRow(rows, buffer.cursor), 8);
 *   const up = moveByRow(buffer.text, buffer.cursor, rowWidth(columns), -1);   // undefined on the first row
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

/** Columns a row of text leaves: the "› " or "  " before it, and one for a cursor after its last character. */
const ROW_MARGIN = 3;

/** Cells of text per row in a terminal `columns` wide. */
export function rowWidth(columns: number): number {
  return columns - ROW_MARGIN;
}

/** A tab as drawn: a terminal would expand it to its next tab stop, which the row's width cannot know. */
export const TAB_SHOWN = "  ";

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Text as the editor draws it: controls as visible pictures, a tab as TAB_SHOWN. */
export function shownText(text: string): string {
  return terminalSafeLiteral(text).replaceAll("\t", TAB_SHOWN);
}

/** Cells a character (a grapheme cluster) takes as drawn; nothing takes 0. */
function cells(char: string): number {
  return Math.max(1, stringWidth(shownText(char)));
}

/** The characters of `line` as drawn, with their offsets in it. */
function* charactersOf(line: string): Generator<{ char: string; index: number }> {
  for (const { segment, index } of graphemes.segment(line)) yield { char: segment, index };
}

/** Where `text` may not break at a space: inside each occurrence of a `keep` string (a paste chip). */
function keptRanges(text: string, keep: readonly string[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const label of keep) {
    if (label === "") continue;
    for (let at = text.indexOf(label); at !== -1; at = text.indexOf(label, at + label.length)) ranges.push([at, at + label.length]);
  }
  return ranges;
}

/** Every row of `text` at `width` cells per row (at least 1), in order; never broken at a space inside a `keep` string. */
export function wrapRows(text: string, width: number, keep: readonly string[] = []): EditorRow[] {
  const capacity = Math.max(1, width);
  const kept = keptRanges(text, keep);
  const inKept = (position: number) => kept.some(([from, to]) => position > from && position < to);
  const rows: EditorRow[] = [];
  let lineStart = 0;
  for (const line of text.split("\n")) {
    let start = lineStart;
    let used = 0;
    // Where the row would end if it broke at its last space (after the space), or -1.
    let lastBreak = -1;
    let usedAtBreak = 0;
    for (const { char, index } of charactersOf(line)) {
      const offset = lineStart + index;
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
      if (char === " " && !inKept(offset + 1)) {
        lastBreak = offset + 1;
        usedAtBreak = used;
      }
    }
    rows.push({ start, end: lineStart + line.length, first: start === lineStart, last: true });
    lineStart += line.length + 1;
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

/**
 * The cursor one drawn row up (`-1`) or down (`1`), as near the same cell column as a character
 * boundary allows; undefined on the first (last) row, where Up and Down browse the history.
 */
export function moveByRow(text: string, cursor: number, width: number, direction: -1 | 1, keep: readonly string[] = []): number | undefined {
  const rows = wrapRows(text, width, keep);
  const at = cursorRow(rows, cursor);
  const row = rows[at];
  const target = rows[at + direction];
  if (!row || !target) return undefined;
  let column = 0;
  for (const { char } of charactersOf(text.slice(row.start, cursor))) column += cells(char);
  let offset = target.start;
  let used = 0;
  let lastChar = 0;
  for (const { char } of charactersOf(text.slice(target.start, target.end))) {
    const w = cells(char);
    if (used + w > column) break;
    used += w;
    offset += char.length;
    lastChar = char.length;
  }
  // A wrapped row's end is where the next row starts: the cursor stays on this one.
  if (!target.last && offset >= target.end && offset > target.start) offset -= lastChar;
  return offset;
}
