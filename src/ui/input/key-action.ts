/**
 * Maps one key press (as ink reports it) to an editor command. Pure, so the bindings are tested
 * without a terminal. Newline: Alt+Enter, Shift+Enter (terminals with the kitty keyboard
 * protocol), Ctrl+J; Enter sends.
 */
import type { Key } from "ink";

export type EditorCommand =
  | { type: "insert"; text: string }
  /** Several keys in one read (fast typing, automation such as tmux send-keys), in order. */
  | { type: "sequence"; commands: EditorCommand[] }
  | { type: "newline" }
  | { type: "submit" }
  | { type: "backspace" }
  | { type: "delete" }
  | { type: "left" }
  | { type: "right" }
  | { type: "word_left" }
  | { type: "word_right" }
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
  // Ctrl+←/→ and Alt+←/→ move by word, as in most terminals' shells.
  if (key.leftArrow) return key.ctrl || key.meta ? { type: "word_left" } : { type: "left" };
  if (key.rightArrow) return key.ctrl || key.meta ? { type: "word_right" } : { type: "right" };
  if (key.home) return { type: "home" };
  if (key.end) return { type: "end" };
  if (key.ctrl) return CTRL_BINDINGS[input.toLowerCase()] ?? { type: "ignore" };
  // Alt+B / Alt+F: readline's word moves.
  if (key.meta && (input === "b" || input === "f")) return { type: input === "b" ? "word_left" : "word_right" };
  if (key.meta || key.pageUp || key.pageDown || input === "") return { type: "ignore" };
  if (input.length > 1 && /[\u0000-\u0008\u000a-\u001f\u007f]/.test(input)) {
    return { type: "sequence", commands: splitKeys(input) };
  }
  return { type: "insert", text: input };
}

/**
 * Splits one read holding several keys. Unbracketed multi-line input is a paste, so its line
 * breaks stay in the prompt; a single carriage return at the end is Enter after fast typing.
 */
function splitKeys(input: string): EditorCommand[] {
  const breaks = (input.match(/\r\n?|\n/g) ?? []).length;
  const sendsAtEnd = breaks === 1 && input.endsWith("\r");
  const commands: EditorCommand[] = [];
  let text = "";
  const flush = () => {
    if (text !== "") commands.push({ type: "insert", text });
    text = "";
  };
  for (let i = 0; i < input.length; i++) {
    const char = input[i] ?? "";
    const code = char.charCodeAt(0);
    if (char === "\r" || char === "\n") {
      if (char === "\r" && input[i + 1] === "\n") i++;
      flush();
      commands.push(sendsAtEnd && i === input.length - 1 ? { type: "submit" } : { type: "newline" });
    } else if (char === "\t") {
      text += char;
    } else if (char === "\u007f" || char === "\b") {
      flush();
      commands.push({ type: "backspace" });
    } else if (code >= 1 && code <= 26) {
      flush();
      commands.push(CTRL_BINDINGS[String.fromCharCode(code + 96)] ?? { type: "ignore" });
    } else if (code >= 32) {
      text += char;
    }
  }
  flush();
  return commands;
}
