/**
 * Standard input for `chat -p` (ADR 0077): `-p -` takes the message from it; `-p MESSAGE` with a
 * pipe or a redirected file appends what it holds. A terminal, /dev/null or a closed stdin is never
 * read, and a pipe that sends nothing is waited on for VALARMIND_STDIN_WAIT_MS only, so a process
 * started with an open, unused stdin (Node's spawn default) never hangs. Input is bounded: over
 * PIPED_INPUT_CAP_BYTES, or binary, the run stops with a usage error before anything is written.
 */
import { fstatSync } from "node:fs";
import { UsageError } from "../errors.ts";
import { envMilliseconds } from "../config/env-milliseconds.ts";

/** At most this much is taken from standard input (1 MiB; the prompt budget cuts far less anyway). */
export const PIPED_INPUT_CAP_BYTES = 1024 * 1024;
export const DEFAULT_STDIN_WAIT_MS = 2000;

/** What standard input is: nothing to read (a terminal, /dev/null, closed), a pipe or socket, or a file. */
export type StdinKind = "none" | "pipe" | "file";

export function stdinKind(fd = 0): StdinKind {
  try {
    const stat = fstatSync(fd);
    if (stat.isFIFO() || stat.isSocket()) return "pipe";
    if (stat.isFile()) return "file";
    return "none"; // a terminal, /dev/null or another device
  } catch {
    return "none"; // closed
  }
}

/** How long a pipe may stay silent before `chat -p MESSAGE` goes on without it: VALARMIND_STDIN_WAIT_MS, else 2 s. */
export function stdinWaitMs(env: Record<string, string | undefined>): number {
  return envMilliseconds(env, "VALARMIND_STDIN_WAIT_MS", DEFAULT_STDIN_WAIT_MS, "Set VALARMIND_STDIN_WAIT_MS to 0 or more (e.g. 30000 for a slow command in the pipe), or unset it for the default of 2 seconds.");
}

export type StdinRead =
  | { kind: "text"; text: string }
  /** The pipe sent nothing within the wait; it was left unread. */
  | { kind: "silent"; waitedMs: number };

function tooLarge(what: string): UsageError {
  return new UsageError(`${what} is larger than the ${PIPED_INPUT_CAP_BYTES} bytes (1 MiB) chat -p takes from standard input`, {
    hint: "Pipe only the part that matters (e.g. `tail -c 200000 build.log | valarmind chat -p ...`), or save it in the workspace and name the file in the message so the agent reads what it needs.",
  });
}

function decode(bytes: Uint8Array, what: string): string {
  const nul = bytes.indexOf(0);
  if (nul !== -1) {
    throw new UsageError(`${what} looks binary (a NUL byte at offset ${nul}); chat -p takes text only`, {
      hint: "Pipe text. UTF-16 text also has NUL bytes: convert it first (e.g. `iconv -f UTF-16 -t UTF-8`).",
    });
  }
  // Invalid UTF-8 becomes U+FFFD (a Latin-1 log stays readable); a UTF-8 byte-order mark is dropped.
  return new TextDecoder().decode(bytes);
}

/**
 * Reads standard input to its end, at most PIPED_INPUT_CAP_BYTES. With `firstByteWaitMs`, a pipe
 * that sends nothing for that long is left unread ("silent"); once a byte has come, the rest is
 * read however long it takes. `what` names the input in errors ("-p -: standard input").
 */
export async function readStdin(what: string, options: { firstByteWaitMs?: number } = {}): Promise<StdinRead> {
  // `< somedir` opens fine and fails on the first read, with a stack trace from deep in the runtime.
  if (stdinIsDirectory()) throw new UsageError(`${what}: standard input is a directory, not text`, { hint: "Redirect a file (< notes.txt) or pipe text in (cat notes.txt | …)." });
  const reader = Bun.stdin.stream().getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    if (options.firstByteWaitMs !== undefined) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const silence = new Promise<"silent">((resolve) => {
        timer = setTimeout(() => resolve("silent"), options.firstByteWaitMs);
      });
      const first = await Promise.race([reader.read(), silence]);
      clearTimeout(timer);
      if (first === "silent") {
        await reader.cancel();
        return { kind: "silent", waitedMs: options.firstByteWaitMs };
      }
      if (first.done) return { kind: "text", text: "" };
      chunks.push(first.value);
      size += first.value.byteLength;
    }
    while (size <= PIPED_INPUT_CAP_BYTES) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
    if (size > PIPED_INPUT_CAP_BYTES) {
      await reader.cancel();
      throw tooLarge(what);
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { kind: "text", text: decode(bytes, what) };
}

function stdinIsDirectory(): boolean {
  try {
    return fstatSync(0).isDirectory();
  } catch {
    return false;
  }
}
