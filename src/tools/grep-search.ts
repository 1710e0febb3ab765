/**
 * The two search back ends of the grep tool: ripgrep (when on PATH) and a JS fallback over the
 * same .gitignore-aware walk. Both yield the same matches in the same order (files sorted by name
 * per directory, lines ascending), so the tool's output does not depend on which one ran.
 */
import { readFile, stat } from "node:fs/promises";
import { relative } from "node:path";
import { describeError } from "../errors.ts";
import { looksBinary } from "./read-file.ts";
import { unsafeIgnoreFiles, walkFiles } from "./file-walk.ts";

export interface GrepQuery {
  pattern: string;
  /** Absolute file or directory inside the root. */
  target: string;
  /** Filter on paths relative to `target` (see `globMatcher`). */
  matchesGlob: (relToTarget: string) => boolean;
  caseInsensitive: boolean;
  literal: boolean;
  /** Told what the search left out, so "No matches" is never said of text it did not look at. */
  skipped?: GrepSkips;
}

export interface GrepSkips {
  /** Files over GREP_MAX_FILE_BYTES (JS back end). */
  large: string[];
  /** Directories or files that could not be read (permission). */
  unreadable: string[];
  /** Lines the pattern backtracked on too long to decide (JS back end): "file:line". */
  undecided: string[];
}

export interface GrepMatch {
  rel: string;
  line: number;
  text: string;
  /** Where the match starts in `text` (UTF-16 units), when known: a long line is shown around it. */
  column?: number;
}

/** A line whose test took longer than this was decided by the engine's backtracking limit, not by the pattern. */
const UNDECIDED_LINE_MS = 100;

/** Files larger than this are skipped by both back ends. */
export const GREP_MAX_FILE_BYTES = 10 * 1024 * 1024;

export class GrepPatternError extends Error {}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function compile(query: GrepQuery): RegExp {
  const source = query.literal ? escapeRegExp(query.pattern) : query.pattern;
  try {
    return new RegExp(source, query.caseInsensitive ? "i" : "");
  } catch (error) {
    throw new GrepPatternError(`invalid regular expression /${query.pattern}/: ${describeError(error)}`);
  }
}

function relToTarget(query: GrepQuery, abs: string): string {
  return relative(query.target, abs).split("\\").join("/");
}

function isDenied(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "EACCES" || code === "EPERM";
}

export async function* searchWithJs(rootReal: string, query: GrepQuery, signal: AbortSignal): AsyncGenerator<GrepMatch> {
  const regex = compile(query);
  const info = await stat(query.target);
  const files = info.isDirectory()
    ? walkFiles(rootReal, query.target, signal, query.skipped?.unreadable)
    : (async function* () {
        yield { abs: query.target, rel: relative(rootReal, query.target).split("\\").join("/"), isSymlink: false };
      })();
  for await (const file of files) {
    if (signal.aborted) return;
    // ripgrep does not follow symlinks during a walk either.
    if (file.isSymlink) continue;
    if (info.isDirectory() && !query.matchesGlob(relToTarget(query, file.abs))) continue;
    let bytes: Buffer;
    try {
      const size = (await stat(file.abs)).size;
      if (size > GREP_MAX_FILE_BYTES) {
        query.skipped?.large.push(file.rel);
        continue;
      }
      bytes = await readFile(file.abs);
    } catch (error) {
      if (!isDenied(error) || !info.isDirectory()) throw error;
      query.skipped?.unreadable.push(file.rel);
      continue;
    }
    if (looksBinary(bytes)) continue;
    const lines = bytes.toString("utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      const text = (lines[i] ?? "").replace(/\r$/, "");
      const started = performance.now();
      const found = regex.exec(text);
      const spent = performance.now() - started;
      if (found) yield { rel: file.rel, line: i + 1, text, column: found.index };
      // The engine gives up on heavy backtracking and answers "no match": such a line is undecided.
      else if (spent > UNDECIDED_LINE_MS) query.skipped?.undecided.push(`${file.rel}:${i + 1}`);
      if (spent > 20) {
        // A slow line held the event loop: let an abort (Esc, Ctrl-C) through before the next.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (signal.aborted) return;
      }
    }
  }
}

function ripgrepArgs(rg: string, query: GrepQuery): string[] {
  // No --max-filesize: ripgrep streams a big file, and skipping it silently answered "No matches".
  const args = [rg, "--json", "--sort", "path", "--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-exclude", "--no-ignore-global"];
  for (const skipped of [".git", "node_modules", ".valarmind"]) args.push("--glob", `!${skipped}`);
  if (query.caseInsensitive) args.push("--ignore-case");
  if (query.literal) args.push("--fixed-strings");
  args.push("--regexp", query.pattern, "--", query.target);
  return args;
}

type RgText = { text?: string; bytes?: string };
type RgEvent = { type: string; data?: { path?: RgText; lines?: RgText; line_number?: number; submatches?: Array<{ start?: number }> } };

/** ripgrep's JSON carries text that is not valid UTF-8 as base64 `bytes`: decoded (lossily) as the JS back end reads it. */
function rgText(value: RgText | undefined): string | undefined {
  if (value?.text !== undefined) return value.text;
  return value?.bytes === undefined ? undefined : Buffer.from(value.bytes, "base64").toString("utf8");
}

function parseRgLine(line: string): RgEvent | undefined {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === "object" && parsed !== null ? (parsed as RgEvent) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `rg --json` and yields its matches; a bad pattern (exit 2) becomes a GrepPatternError. */
export async function* searchWithRipgrep(rootReal: string, rg: string, query: GrepQuery, signal: AbortSignal): AsyncGenerator<GrepMatch> {
  const info = await stat(query.target);
  // A repository's FIFO (or symlinked) .gitignore would block ripgrep: the JS walk skips it.
  if (info.isDirectory() && (await unsafeIgnoreFiles(rootReal, query.target))) return yield* searchWithJs(rootReal, query, signal);
  const proc = Bun.spawn(ripgrepArgs(rg, query), { cwd: rootReal, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const stop = (): void => proc.kill();
  signal.addEventListener("abort", stop, { once: true });
  const stderr = new Response(proc.stderr).text();
  try {
    const decoder = new TextDecoder();
    let buffered = "";
    for await (const chunk of proc.stdout) {
      buffered += decoder.decode(chunk, { stream: true });
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const event = parseRgLine(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf("\n");
        const path = rgText(event?.data?.path);
        const text = rgText(event?.data?.lines);
        const lineNumber = event?.data?.line_number;
        // A line with a NUL is a binary file's: skipped, like the fallback skips binary files.
        if (event?.type !== "match" || path === undefined || text === undefined || lineNumber === undefined || text.includes("\0")) continue;
        if (info.isDirectory() && !query.matchesGlob(relToTarget(query, path))) continue;
        // Submatch offsets are bytes of the line as UTF-8.
        const start = event?.data?.submatches?.[0]?.start;
        const column = start === undefined ? undefined : Buffer.from(text, "utf8").subarray(0, start).toString("utf8").length;
        yield { rel: relative(rootReal, path).split("\\").join("/"), line: lineNumber, text: text.replace(/\r?\n$/, ""), ...(column !== undefined && { column }) };
      }
    }
    const code = await proc.exited;
    if (code === 2 && !signal.aborted) {
      const message = (await stderr).trim();
      if (/regex parse error|error parsing/i.test(message)) throw new GrepPatternError(`invalid regular expression /${query.pattern}/: ${message}`);
      // Exit 2 also covers unreadable files, which do not stop the search; anything else is reported.
      if (!/Permission denied|No such file/i.test(message)) throw new Error(`ripgrep failed: ${message}`);
    }
  } finally {
    signal.removeEventListener("abort", stop);
    if (proc.exitCode === null) proc.kill();
  }
}
