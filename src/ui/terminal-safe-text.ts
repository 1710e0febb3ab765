/**
 * Text from outside valarmind — the model's answers and reasoning, tool outputs and arguments,
 * file names, MCP servers, repository config, error messages quoting paths — made safe to write
 * to a terminal. Such text may carry control sequences that set the window title, write the
 * clipboard (OSC 52), move the cursor to forge a prompt, hide or clear text, or bidi controls
 * that make code read differently than it is (Trojan Source). Valarmind's own styling is added
 * after this, so its colours still work.
 *
 * Two forms, both idempotent and leaving ordinary Unicode (accents, CJK, emoji), newlines and tabs
 * alone:
 *
 * - `terminalSafe`: for prose and output. Every ESC-introduced sequence is removed (CSI such as
 *   colours, cursor moves and "clear screen"; OSC, DCS, SOS, PM and APC strings up to BEL or ST;
 *   single-character escapes); the controls left are shown: C0 and DEL as control pictures
 *   (␇ ␈ ␛ ␡ …), a lone CR as ␍, C1 (U+0080–U+009F) and bidi embeddings, overrides and isolates
 *   (U+202A–U+202E, U+2066–U+2069) as `<U+202E>`. CRLF becomes a newline.
 * - `terminalSafeLiteral`: for what the user approves or that names what runs (a command line, a
 *   path, a diff, a setting): nothing is removed, every control is shown (ESC as ␛), so a sequence's
 *   text cannot hide part of a command.
 *
 * `safeStreamChunk` does the same for text that arrives in pieces, holding back a sequence (or a
 * CR) that the next piece may complete.
 */

/**
 * One escape sequence, tried at each ESC: CSI (parameters, intermediates, final byte); a control
 * string (OSC `]`, DCS `P`, SOS `X`, PM `^`, APC `_`) ended by BEL, ST (ESC \) or the 8-bit ST;
 * otherwise ESC, any intermediates and a final byte (ESC 7, ESC c, ESC ( 0, …). A control string
 * without its end loses only its introducer (ESC ]): its text stays visible.
 */
const SEQUENCE =
  /\u001b(?:\[[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]|[\]PX^_][^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)|[\u0020-\u002f]*[\u0030-\u007e])/g;

/** What a terminal may still act on once sequences are gone: controls (but LF and TAB), C1, bidi controls, CRLF. */
const CONTROL = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** A sequence the next piece of a stream may complete (anchored at one ESC, running to the end). */
const INCOMPLETE = /^\u001b(?:\[[\u0030-\u003f]*[\u0020-\u002f]*|[\]PX^_][^\u0007\u001b\u009c]*\u001b?|[\u0020-\u002f]*)$/;

/** Longest tail a stream holds back; a longer unterminated string is shown (its introducer removed). */
const MAX_HELD = 512;

function showControl(char: string): string {
  if (char === "\r\n") return "\n";
  const code = char.charCodeAt(0);
  // Control Pictures: U+2400 + the C0 code, U+2421 for DEL.
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return "\u2421";
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

/** Untrusted prose or output, ready to style and print: escape sequences removed, other controls shown. */
export function terminalSafe(text: string): string {
  return text.replace(SEQUENCE, "").replace(CONTROL, showControl);
}

/** Untrusted text the user decides on (a command, a path, a diff): every control shown, nothing removed. */
/** Every string (and key) of a value made inert by `terminalSafe`, before a renderer adds its own colour. */
export function terminalSafeDeep<T>(value: T): T {
  if (typeof value === "string") return terminalSafe(value) as T;
  if (Array.isArray(value)) return value.map(terminalSafeDeep) as T;
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [terminalSafe(k), terminalSafeDeep(v)])) as T;
  return value;
}

/**
 * terminalSafeDeep for text laid out in rows (a table of manifest items): a line break or tab in
 * a value is shown (␊, ␉), so a value can never start a line of its own that reads as the report's.
 */
export function terminalSafeRowsDeep<T>(value: T): T {
  if (typeof value === "string") return terminalSafe(value).replace(/\n/g, "␊").replace(/\t/g, "␉") as T;
  if (Array.isArray(value)) return value.map(terminalSafeRowsDeep) as T;
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [terminalSafeRowsDeep(k), terminalSafeRowsDeep(v)])) as T;
  return value;
}

export function terminalSafeLiteral(text: string): string {
  return text.replace(CONTROL, showControl);
}

/** Where the held-back tail of `text` starts: an unfinished escape sequence or a final CR. */
function heldStart(text: string): number {
  const last = text.lastIndexOf("\u001b");
  if (last >= 0 && text.length - last <= MAX_HELD) {
    // A control string's ST can be cut after its ESC: then the string starts at the ESC before.
    if (last === text.length - 1 && last > 0) {
      const before = text.lastIndexOf("\u001b", last - 1);
      if (before >= 0 && text.length - before <= MAX_HELD && INCOMPLETE.test(text.slice(before))) return before;
    }
    if (INCOMPLETE.test(text.slice(last))) return last;
  }
  return text.endsWith("\r") ? text.length - 1 : text.length;
}

export interface SafeChunk {
  /** Safe to show now. */
  text: string;
  /** Raw text held back for the next chunk; pass it to the next call, or to `terminalSafe` at the end. */
  held: string;
}

/**
 * One piece of a streamed text: `held` is what the previous piece held back. A sequence split
 * across pieces is removed whole instead of leaving its tail on screen; at the end of the stream,
 * show `terminalSafe(held)`.
 */
export function safeStreamChunk(held: string, chunk: string): SafeChunk {
  const raw = held + chunk;
  const cut = heldStart(raw);
  return { text: terminalSafe(raw.slice(0, cut)), held: raw.slice(cut) };
}

/** A stateful `safeStreamChunk` for a printer: `write` each piece, `end` when the stream stops. */
export interface TerminalSafeStream {
  write(chunk: string): string;
  end(): string;
}

export function terminalSafeStream(): TerminalSafeStream {
  let held = "";
  return {
    write(chunk) {
      const next = safeStreamChunk(held, chunk);
      held = next.held;
      return next.text;
    },
    end() {
      const rest = terminalSafe(held);
      held = "";
      return rest;
    },
  };
}
