/**
 * Puts the terminal back the way the REPL found it: raw mode off, bracketed paste off, cursor
 * shown. Ink does this on a normal unmount; this covers crashes, signals and process exit too.
 */
export interface TerminalStreams {
  stdin: NodeJS.ReadStream | NodeJS.ReadableStream;
  stdout: NodeJS.WriteStream | NodeJS.WritableStream;
}

const SHOW_CURSOR = "\u001b[?25h";
const BRACKETED_PASTE_OFF = "\u001b[?2004l";

function isTty(stream: unknown): boolean {
  return typeof stream === "object" && stream !== null && (stream as { isTTY?: unknown }).isTTY === true;
}

export function restoreTerminal({ stdin, stdout }: TerminalStreams): void {
  const raw = stdin as { setRawMode?: (mode: boolean) => unknown; isRaw?: boolean };
  if (isTty(stdin) && typeof raw.setRawMode === "function") {
    try {
      raw.setRawMode(false);
    } catch {
      // The terminal is already gone (hang-up): there is no mode left to restore.
    }
  }
  const out = stdout as { writable?: boolean; write: (text: string) => unknown };
  if (isTty(stdout) && out.writable !== false) out.write(BRACKETED_PASTE_OFF + SHOW_CURSOR);
}
