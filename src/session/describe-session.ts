/**
 * A session as listings show it (`sessions list`, `/resume`, `sessions prune`): its id, start,
 * turn count and first message — read by streaming the transcript a chunk at a time, parsing only
 * the header and the user records, so a 100 MB transcript costs its longest line, not six times
 * its size. The id is the file's (what `findSession` opens); a header naming another id is
 * reported in `headerId`, never listed under it.
 */
import { closeSync, lstatSync, openSync, readSync } from "node:fs";
import type { SessionListing } from "../agent/front-end-contract.ts";
import { nonRegularFile } from "../config/non-regular-file.ts";
import { ValarmindError } from "../errors.ts";
import { checkParsedRecord, UnreadableTranscriptError } from "./transcript-read.ts";
import type { SessionHeader } from "./transcript-schema.ts";
import type { SessionRef } from "./transcript.ts";

const CHUNK_BYTES = 1024 * 1024;

/**
 * Calls `onLine` with each line of `file` as bytes (1-based numbers, the last one even without
 * "\n"). A line is a view of the read buffer, valid only during the call: lines a caller skips
 * are never decoded, so a long transcript leaves no garbage behind but its longest line.
 */
export function forEachLine(file: string, onLine: (line: Buffer, lineNo: number) => void): void {
  const fd = openSync(file, "r");
  try {
    const chunk = Buffer.alloc(CHUNK_BYTES);
    let pending: Buffer[] = [];
    let lineNo = 0;
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      const data = chunk.subarray(0, n);
      let start = 0;
      for (;;) {
        const newline = data.indexOf(10, start);
        if (newline === -1) {
          // The buffer is read into again: the start of a line that goes on is copied.
          pending.push(Buffer.from(data.subarray(start)));
          break;
        }
        const piece = data.subarray(start, newline);
        const line = pending.length > 0 ? Buffer.concat([...pending, piece]) : piece;
        pending = [];
        onLine(line, ++lineNo);
        start = newline + 1;
      }
    }
    const last = Buffer.concat(pending);
    if (last.length > 0) onLine(last, ++lineNo);
  } finally {
    closeSync(fd);
  }
}

function isBlank(line: Buffer): boolean {
  for (const byte of line) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  return true;
}

/** Every user record holds this, however it is spaced. */
const USER = Buffer.from('"user"');

/** Turn count and first user message of a session, for listings. */
export function describeSession(ref: SessionRef): SessionListing {
  const special = nonRegularFile(lstatSync(ref.file));
  if (special !== undefined) {
    throw new ValarmindError(`${ref.file} is not a transcript (${special}); not read`, {
      hint: "valarmind writes transcripts as plain files in .valarmind/sessions/; remove this one (a cloned repository may have shipped it).",
    });
  }
  let header: SessionHeader | undefined;
  let firstValid = false;
  let highest = 0;
  let firstMessage = "";
  let sawLine = false;
  forEachLine(ref.file, (line, lineNo) => {
    sawLine = true;
    if (isBlank(line)) return;
    // After the header only user records count: other lines are not even decoded.
    if (firstValid && line.indexOf(USER) === -1) return;
    let value: unknown;
    try {
      value = JSON.parse(line.toString("utf8"));
    } catch {
      return;
    }
    const parsed = checkParsedRecord(ref.file, lineNo, value);
    if (!("record" in parsed)) return;
    const record = parsed.record;
    if (!firstValid) {
      firstValid = true;
      if (record.kind === "session") header = record;
      return;
    }
    if (record.kind !== "user") return;
    // As reading the session numbers them (turn-order.ts): a repeated turn goes after the highest.
    highest = record.turn > highest ? record.turn : highest + 1;
    if (firstMessage === "") firstMessage = record.text;
  });
  if (!header) {
    throw new UnreadableTranscriptError(ref.file, sawLine ? "the transcript has no session header (its first line is damaged or missing)" : "the transcript is empty (0 bytes)", []);
  }
  return { id: ref.id, file: ref.file, startedAt: header.started_at, turns: highest, firstMessage, ...(header.id !== ref.id && { headerId: header.id }) };
}
