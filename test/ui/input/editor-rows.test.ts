import { describe, expect, test } from "bun:test";
import stringWidth from "string-width";
import { cursorRow, moveByRow, rowWindow, wrapRows } from "../../../src/ui/input/editor-rows.ts";
import { editorRows } from "../../../src/ui/live-frame-budget.ts";
import { MAX_EDITOR_ROWS } from "../../../src/ui/input/editor-view.tsx";

const shown = (text: string, width: number) => wrapRows(text, width).map((row) => text.slice(row.start, row.end));

describe("wrapRows", () => {
  test("a long line wraps after the last space that fits; the rows together are the text", () => {
    const text = "alpha beta gamma delta epsilon";
    expect(shown(text, 12)).toEqual(["alpha beta ", "gamma delta ", "epsilon"]);
    expect(shown(text, 12).join("")).toBe(text);
  });

  test("a word longer than the row is cut mid-word; no row is wider than the width", () => {
    const text = "x".repeat(25) + " tail";
    expect(shown(text, 10)).toEqual(["x".repeat(10), "x".repeat(10), "xxxxx tail"]);
  });

  test("newlines start rows of their own (first/last mark the buffer's lines); an empty line is one row", () => {
    const rows = wrapRows("one\n\nthree four five", 6);
    expect(rows.map((r) => [r.first, r.last])).toEqual([[true, true], [true, true], [true, false], [false, false], [false, true]]);
    expect(shown("one\n\nthree four five", 6)).toEqual(["one", "", "three ", "four ", "five"]);
  });

  test("wide characters and controls count the cells they are drawn in", () => {
    const text = "界".repeat(9); // 2 cells each
    for (const row of shown(text, 7)) expect(stringWidth(row)).toBeLessThanOrEqual(7);
    expect(shown(text, 7)).toHaveLength(3);
    // An ESC is drawn as one visible picture (␛): one cell, never zero.
    expect(shown("\u001b".repeat(5), 2)).toHaveLength(3);
  });

  test("the empty text is one empty row; a width under 1 is taken as 1", () => {
    expect(wrapRows("", 10)).toEqual([{ start: 0, end: 0, first: true, last: true }]);
    expect(shown("abc", 0)).toEqual(["a", "b", "c"]);
  });
});

describe("cursorRow and rowWindow", () => {
  const text = "alpha beta gamma delta epsilon";
  const rows = wrapRows(text, 12); // [0,11) [11,23) [23,30)

  test("a cursor at a wrapped row's end is at the next row's start; at the text's end, in the last row", () => {
    expect(cursorRow(rows, 0)).toBe(0);
    expect(cursorRow(rows, 10)).toBe(0);
    expect(cursorRow(rows, 11)).toBe(1);
    expect(cursorRow(rows, text.length)).toBe(2);
    const lines = wrapRows("ab\ncd", 10);
    expect(cursorRow(lines, 2)).toBe(0); // the end of "ab", before the newline
    expect(cursorRow(lines, 3)).toBe(1);
  });

  test("the window keeps the cursor's row in view, at most `max` rows, and counts the rest", () => {
    const many = wrapRows(Array.from({ length: 40 }, (_, i) => `w${i}`).join(" "), 8);
    expect(rowWindow(many, 0, 5)).toEqual({ first: 0, shown: 5, above: 0, below: many.length - 5 });
    const end = rowWindow(many, many.length - 1, 5);
    expect(end).toEqual({ first: many.length - 5, shown: 5, above: many.length - 5, below: 0 });
    const middle = rowWindow(many, 10, 5);
    expect(middle.first).toBeLessThanOrEqual(10);
    expect(middle.first + middle.shown).toBeGreaterThan(10);
    expect(rowWindow(many, 3, 0).shown).toBe(1);
    expect(rowWindow(rows, 1, 8)).toEqual({ first: 0, shown: 3, above: 0, below: 0 });
  });
});

describe("moveByRow (Up and Down)", () => {
  test("between lines: the same column where the line is long enough, else its end; undefined at the edges", () => {
    const text = "abcd\nxy\nlonger";
    expect(moveByRow(text, 3, 20, -1)).toBeUndefined();
    expect(moveByRow(text, 3, 20, 1)).toBe(7);
    expect(moveByRow(text, 7, 20, 1)).toBe(10);
    expect(moveByRow(text, 12, 20, 1)).toBeUndefined();
  });

  test("within one long line wrapped to rows: one drawn row, not the whole line", () => {
    const text = "alpha beta gamma delta epsilon"; // rows at 12: [0,11) [11,23) [23,30)
    expect(moveByRow(text, text.length, 12, -1)).toBe(18);
    expect(moveByRow(text, 18, 12, -1)).toBe(7);
    expect(moveByRow(text, 7, 12, -1)).toBeUndefined();
    // Down from the end of a wrapped row's text stays on the row below, before its break.
    expect(moveByRow(text, 10, 12, 1)).toBe(21);
  });

  test("never lands inside a character: an emoji line above, wide characters counted by cells", () => {
    const text = "😀😀😀\nabc";
    const up = moveByRow(text, text.length, 20, -1) ?? -1;
    // Column 3 falls inside the second emoji (cells 2–3): the cursor goes before it, not between its halves.
    expect(up).toBe(2);
    expect(text.slice(0, up)).toBe("😀");
  });
});

describe("editorRows (the input's share of the live frame)", () => {
  test("a tall screen gives the input its full height; a short one what the rest of the frame leaves, less the … lines", () => {
    expect(editorRows(40, 5, false)).toBe(MAX_EDITOR_ROWS);
    // 10 rows, 5 taken by the rest: 10 - 1 - 5 = 4, less 2 for the "… above/below" lines.
    expect(editorRows(10, 5, false)).toBe(2);
    expect(editorRows(6, 5, false)).toBe(1);
  });

  test("beside a streaming block or a diff the input takes half of what is left", () => {
    expect(editorRows(24, 5, true)).toBe(7); // (24 - 1 - 5) / 2 = 9, less 2
    expect(editorRows(14, 5, true)).toBe(2);
  });
});
