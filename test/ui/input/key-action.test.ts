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

  test("fast typing that ends with Enter is inserted then sent; pasted lines stay lines", () => {
    expect(keyAction("hello\r", none)).toEqual({ type: "insert_submit", text: "hello" });
    expect(keyAction("a\rb\r", none)).toEqual({ type: "insert", text: "a\nb\n" });
  });

  test("key releases (kitty protocol) do nothing", () => {
    expect(keyAction("a", { ...none, eventType: "release" })).toEqual({ type: "ignore" });
  });
});
