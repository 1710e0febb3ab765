/**
 * Maps one key press (as ink reports it) to an editor command. Pure, so the bindings are tested
 * without a terminal. Newline: Alt+Enter, Shift+Enter (terminals with the kitty keyboard
 * protocol), Ctrl+J; Enter sends.
 */
import type { Key } from "ink";

export type EditorCommand =
  | { type: "insert"; text: string }
  /** Keys typed faster than one per read, ending with Enter (fast typists, tmux send-keys). */
  | { type: "insert_submit"; text: string }
  | { type: "newline" }
  | { type: "submit" }
  | { type: "backspace" }
  | { type: "delete" }
  | { type: "left" }
  | { type: "right" }
  | { type: "home" }
  | { type: "end" }
  | { type: "up" }
  | { type: "down" }
  | { type: "kill_start" }
  | { type: "kill_end" }
  | { type: "delete_word" }
  | { type: "tab" }
  | { type: "escape" }
  | { type: "interrupt" }
  | { type: "eof" }
  | { type: "ignore" };

const CTRL_BINDINGS: Record<string, EditorCommand> = {
  c: { type: "interrupt" },
  d: { type: "eof" },
  a: { type: "home" },
  e: { type: "end" },
  u: { type: "kill_start" },
  k: { type: "kill_end" },
  w: { type: "delete_word" },
  j: { type: "newline" },
  b: { type: "left" },
  f: { type: "right" },
  p: { type: "up" },
  n: { type: "down" },
};

export function keyAction(input: string, key: Key): EditorCommand {
  if (key.eventType === "release") return { type: "ignore" };
  if (key.return) return key.meta || key.shift ? { type: "newline" } : { type: "submit" };
  // Ctrl+J arrives as a bare line feed on legacy terminals.
  if (input === "\n" && !key.ctrl && !key.meta) return { type: "newline" };
  if (key.escape) return { type: "escape" };
  if (key.tab) return { type: "tab" };
  if (key.backspace) return key.meta || key.ctrl ? { type: "delete_word" } : { type: "backspace" };
  if (key.delete) return { type: "delete" };
  if (key.upArrow) return { type: "up" };
  if (key.downArrow) return { type: "down" };
  if (key.leftArrow) return { type: "left" };
  if (key.rightArrow) return { type: "right" };
  if (key.home) return { type: "home" };
  if (key.end) return { type: "end" };
  if (key.ctrl) return CTRL_BINDINGS[input.toLowerCase()] ?? { type: "ignore" };
  if (key.meta || key.pageUp || key.pageDown || input === "") return { type: "ignore" };
  // Unbracketed multi-line input is a paste: its line breaks stay in the prompt. A single trailing
  // carriage return is Enter pressed after fast typing.
  const lone = /^[^\r\n]+\r$/.exec(input);
  if (lone) return { type: "insert_submit", text: input.slice(0, -1) };
  return { type: "insert", text: input.replace(/\r\n?/g, "\n") };
}
