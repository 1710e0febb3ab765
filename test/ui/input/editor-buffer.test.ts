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

  test("word moves skip the spaces, then the word, like readline", () => {
    const b = { text: "one two  three", cursor: 9 };
    expect(edit.moveWordLeft(b).cursor).toBe(4);
    expect(edit.moveWordLeft({ ...b, cursor: 4 }).cursor).toBe(0);
    expect(edit.moveWordLeft({ ...b, cursor: 0 }).cursor).toBe(0);
    expect(edit.moveWordRight({ ...b, cursor: 3 }).cursor).toBe(7);
    expect(edit.moveWordRight({ ...b, cursor: 7 }).cursor).toBe(14);
    expect(edit.moveWordRight({ ...b, cursor: 14 }).cursor).toBe(14);
  });

  test("line kills and word delete", () => {
    const b = { text: "one two three", cursor: 8 };
    expect(edit.killToLineStart(b)).toEqual({ text: "three", cursor: 0 });
    expect(edit.killToLineEnd(b)).toEqual({ text: "one two ", cursor: 8 });
    expect(edit.deleteWordBackward(b)).toEqual({ text: "one three", cursor: 4 });
  });
});
