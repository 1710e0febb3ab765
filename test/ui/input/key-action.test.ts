import { describe, expect, test } from "bun:test";
import type { Key } from "ink";
import { keyAction } from "../../../src/ui/input/key-action.ts";

const none: Key = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageDown: false,
  pageUp: false,
  home: false,
  end: false,
  return: false,
  escape: false,
  ctrl: false,
  shift: false,
  tab: false,
  backspace: false,
  delete: false,
  meta: false,
  super: false,
  hyper: false,
  capsLock: false,
  numLock: false,
};

describe("keyAction", () => {
  test("word moves: Alt+B / Alt+F, Ctrl+← / →, Alt+← / →; plain arrows move one character", () => {
    expect(keyAction("b", { ...none, meta: true })).toEqual({ type: "word_left" });
    expect(keyAction("f", { ...none, meta: true })).toEqual({ type: "word_right" });
    expect(keyAction("", { ...none, leftArrow: true, ctrl: true })).toEqual({ type: "word_left" });
    expect(keyAction("", { ...none, rightArrow: true, meta: true })).toEqual({ type: "word_right" });
    expect(keyAction("", { ...none, leftArrow: true })).toEqual({ type: "left" });
    expect(keyAction("x", { ...none, meta: true })).toEqual({ type: "ignore" });
  });

  test("Enter sends; Alt+Enter, Shift+Enter and Ctrl+J add a line", () => {
    expect(keyAction("\r", { ...none, return: true })).toEqual({ type: "submit" });
    expect(keyAction("\r", { ...none, return: true, meta: true })).toEqual({ type: "newline" });
    expect(keyAction("\r", { ...none, return: true, shift: true })).toEqual({ type: "newline" });
    expect(keyAction("\n", none)).toEqual({ type: "newline" });
    expect(keyAction("j", { ...none, ctrl: true })).toEqual({ type: "newline" });
  });

  test("Ctrl+C interrupts, Ctrl+D is end of input, other chords edit", () => {
    expect(keyAction("c", { ...none, ctrl: true })).toEqual({ type: "interrupt" });
    expect(keyAction("d", { ...none, ctrl: true })).toEqual({ type: "eof" });
    expect(keyAction("w", { ...none, ctrl: true })).toEqual({ type: "delete_word" });
    expect(keyAction("x", { ...none, ctrl: true })).toEqual({ type: "ignore" });
  });

  test("several keys in one read are split in order; one trailing Enter sends", () => {
    expect(keyAction("hello\r", none)).toEqual({
      type: "sequence",
      commands: [{ type: "insert", text: "hello" }, { type: "submit" }],
    });
    expect(keyAction("\u0015/window\r", none)).toEqual({
      type: "sequence",
      commands: [{ type: "kill_start" }, { type: "insert", text: "/window" }, { type: "submit" }],
    });
  });

  test("unbracketed multi-line input is a paste: line breaks stay, nothing is sent", () => {
    expect(keyAction("a\r\nb\rc", none)).toEqual({
      type: "sequence",
      commands: [
        { type: "insert", text: "a" },
        { type: "newline" },
        { type: "insert", text: "b" },
        { type: "newline" },
        { type: "insert", text: "c" },
      ],
    });
  });

  test("key releases (kitty protocol) do nothing", () => {
    expect(keyAction("a", { ...none, eventType: "release" })).toEqual({ type: "ignore" });
  });
});
