/**
 * What valarmind keeps in memory of one output stream of a shell command: its first and last
 * bytes (a fixed head buffer and a ring for the tail), and its byte and line counts. Every byte
 * is copied out of the chunk it came in, so no chunk — nor a larger buffer it may be a view of —
 * stays referenced: a command printing 1 GB costs the two buffers, not 1 GB (issue 9).
 */

/** One stream as the model sees it: head and tail text, and what lay between them. */
export interface CapturedOutput {
  /** Bytes and lines the command printed on this stream (a last line without newline counts). */
  bytes: number;
  lines: number;
  /** All of it when nothing was dropped (then `tail` is empty); else the first bytes, whole lines where short. */
  head: string;
  tail: string;
  /** Bytes and newlines between head and tail that are not shown. */
  droppedBytes: number;
  droppedLines: number;
}

/**
 * A line longer than this many characters is shown as its first and last half, with a marker:
 * small enough that a cut line fits the default tool-output cap even when costed by bytes.
 */
export const SHELL_LINE_CHARS = 1000;

const NEWLINE = 0x0a;
/** Scratch space for countNewlines, reused: counting allocates nothing. */
const COUNT_PIECE = 64 * 1024;
const countScratch = Buffer.alloc(COUNT_PIECE);

/** `bytes` as a Buffer over the same memory (itself when it is one), for ranged native copies. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Newlines in the first `length` bytes of `chunk`, counted natively without allocating
 * (valarmind runs interpreter-only, ADR 0065, so a byte loop in JS is slow, and a string per chunk
 * for a regex is garbage the collector frees late: +30 MB for 1 GiB of `yes`). Each piece is copied
 * into a scratch buffer padded with zeros and sorted (JavaScriptCore sorts 8-bit arrays natively,
 * by counting), which puts the newlines in one run.
 */
export function countNewlines(chunk: Uint8Array, length: number = chunk.length): number {
  const bytes = asBuffer(chunk);
  let count = 0;
  for (let at = 0; at < length; at += COUNT_PIECE) {
    const copied = bytes.copy(countScratch, 0, at, Math.min(length, at + COUNT_PIECE));
    if (copied < COUNT_PIECE) countScratch.fill(0, copied);
    countScratch.sort();
    const first = countScratch.indexOf(NEWLINE);
    if (first !== -1) count += countScratch.lastIndexOf(NEWLINE) - first + 1;
  }
  return count;
}

/** Bytes at the end of `bytes` that begin a UTF-8 character they do not finish. */
function incompleteTail(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue;
    const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needs > back ? back : 0;
  }
  return 0;
}

/** Continuation bytes at the start of `bytes` (the rest of a character the cut began inside). */
function continuationHead(bytes: Uint8Array): number {
  let n = 0;
  while (n < Math.min(3, bytes.length) && ((bytes[n] ?? 0) & 0xc0) === 0x80) n++;
  return n;
}

const cutMarker = (chars: number): string => `[… ${chars} characters of this line not shown …]`;

/** Shows each line longer than `max` characters as its first and last half around a marker. */
export function cutLongLines(text: string, max: number = SHELL_LINE_CHARS): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return text
    .split("\n")
    .map((line) => (line.length > max ? `${line.slice(0, half)}${cutMarker(line.length - 2 * half)}${line.slice(line.length - half)}` : line))
    .join("\n");
}

export class HeadTailCapture {
  private head: Buffer | undefined;
  private headLength = 0;
  private ring: Buffer | undefined;
  /** Where the next tail byte goes in the ring, and how much of the ring holds data. */
  private ringEnd = 0;
  private ringLength = 0;
  private bytes = 0;
  private newlines = 0;
  private lastByte = NEWLINE;

  constructor(
    private readonly headCap: number,
    private readonly tailCap: number,
  ) {}

  /**
   * Takes the first `length` bytes of `chunk` (all by default). Ranged native copies, no views:
   * per read, even small view objects add up to megabytes of garbage over a 1 GiB output.
   */
  push(chunk: Uint8Array, length: number = chunk.length): void {
    if (length === 0) return;
    const bytes = asBuffer(chunk);
    this.bytes += length;
    this.newlines += countNewlines(bytes, length);
    this.lastByte = bytes[length - 1] ?? NEWLINE;
    let from = 0;
    if (this.headLength < this.headCap) {
      // Buffers are made at the first byte, so a silent stream costs nothing.
      this.head ??= Buffer.alloc(this.headCap);
      from = bytes.copy(this.head, this.headLength, 0, Math.min(length, this.headCap - this.headLength));
      this.headLength += from;
    }
    if (from === length || this.tailCap === 0) return;
    this.ring ??= Buffer.alloc(this.tailCap);
    const start = Math.max(from, length - this.tailCap);
    const first = bytes.copy(this.ring, this.ringEnd, start, Math.min(length, start + this.tailCap - this.ringEnd));
    bytes.copy(this.ring, 0, start + first, length);
    this.ringEnd = (this.ringEnd + length - start) % this.tailCap;
    this.ringLength = Math.min(this.tailCap, this.ringLength + length - start);
  }

  private tailBytes(): Uint8Array {
    const ring = this.ring;
    if (!ring || this.ringLength === 0) return new Uint8Array(0);
    if (this.ringLength < this.tailCap) return ring.subarray(0, this.ringLength);
    return Buffer.concat([ring.subarray(this.ringEnd), ring.subarray(0, this.ringEnd)]);
  }

  result(lineChars: number = SHELL_LINE_CHARS): CapturedOutput {
    const lines = this.newlines + (this.lastByte === NEWLINE ? 0 : 1);
    const headBytes = this.head?.subarray(0, this.headLength) ?? new Uint8Array(0);
    const tailBytes = this.tailBytes();
    const dropped = this.bytes - headBytes.length - tailBytes.length;
    if (dropped === 0) {
      const whole = Buffer.concat([headBytes, tailBytes]).toString("utf8");
      return { bytes: this.bytes, lines, head: cutLongLines(whole, lineChars), tail: "", droppedBytes: 0, droppedLines: 0 };
    }
    // Cut at character boundaries, then keep at most half a long line on each side of the gap.
    const headCut = headBytes.subarray(0, headBytes.length - incompleteTail(headBytes));
    const tailCut = tailBytes.subarray(continuationHead(tailBytes));
    let head = Buffer.from(headCut).toString("utf8");
    let tail = Buffer.from(tailCut).toString("utf8");
    const half = Math.floor(lineChars / 2);
    const openLine = head.length - head.lastIndexOf("\n") - 1;
    if (openLine > half) head = head.slice(0, head.length - openLine + half);
    const tailFirstLine = tail.indexOf("\n") === -1 ? tail.length : tail.indexOf("\n");
    if (tailFirstLine > half) tail = tail.slice(tailFirstLine - half);
    const shownNewlines = countNewlines(Buffer.from(head)) + countNewlines(Buffer.from(tail));
    return {
      bytes: this.bytes,
      lines,
      head: cutLongLines(head, lineChars),
      tail: cutLongLines(tail, lineChars),
      droppedBytes: this.bytes - Buffer.byteLength(head) - Buffer.byteLength(tail),
      droppedLines: this.newlines - shownNewlines,
    };
  }
}
