import { describe, expect, test } from "bun:test";
import * as edit from "../../../src/ui/input/editor-buffer.ts";

describe("editor buffer", () => {
  test("insert and delete around the cursor", () => {
    let b = edit.insertText(edit.emptyBuffer, "helo");
    b = edit.moveLeft(b);
    b = edit.insertText(b, "l");
    expect(b).toEqual({ text: "hello", cursor: 4 });
    expect(edit.deleteBackward(b)).toEqual({ text: "helo", cursor: 3 });
    expect(edit.deleteForward(b)).toEqual({ text: "hell", cursor: 4 });
  });

  test("surrogate pairs move and delete as one character", () => {
    const b = edit.bufferOf("a😀");
    expect(edit.deleteBackward(b)).toEqual({ text: "a", cursor: 1 });
    expect(edit.moveLeft(b).cursor).toBe(1);
  });

  test("up and down keep the column and report the edges", () => {
    const b = { text: "abcd\nxy\nlonger", cursor: 3 };
    expect(edit.moveUp(b)).toBeUndefined();
    const down = edit.moveDown(b);
    expect(down).toEqual({ text: b.text, cursor: 7 });
    expect(edit.moveDown(down ?? b)?.cursor).toBe(10);
    expect(edit.moveDown({ text: b.text, cursor: 12 })).toBeUndefined();
  });

  test("line kills and word delete", () => {
    const b = { text: "one two three", cursor: 8 };
    expect(edit.killToLineStart(b)).toEqual({ text: "three", cursor: 0 });
    expect(edit.killToLineEnd(b)).toEqual({ text: "one two ", cursor: 8 });
    expect(edit.deleteWordBackward(b)).toEqual({ text: "one three", cursor: 4 });
  });
});
