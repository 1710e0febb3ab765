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

/** Calls `onLine` with each line of `file` (1-based numbers, the last one even without "\n"), holding one line at a time. */
export function forEachLine(file: string, onLine: (line: string, lineNo: number) => void): void {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(CHUNK_BYTES);
    const decoder = new TextDecoder("utf-8");
    let carry = "";
    let lineNo = 0;
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      const text = carry + decoder.decode(buffer.subarray(0, n), { stream: n > 0 });
      const lines = text.split("\n");
      carry = lines.pop() ?? "";
      for (const line of lines) onLine(line, ++lineNo);
      if (n === 0) break;
    }
    if (carry !== "") onLine(carry, ++lineNo);
  } finally {
    closeSync(fd);
  }
}

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
  let any = false;
  forEachLine(ref.file, (line, lineNo) => {
    any = true;
    if (line.trim() === "") return;
    // After the header only user records count; any of them holds the string "user".
    if (firstValid && !line.includes('"user"')) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
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
    throw new UnreadableTranscriptError(ref.file, any ? "the transcript has no session header (its first line is damaged or missing)" : "the transcript is empty (0 bytes)", []);
  }
  return { id: ref.id, file: ref.file, startedAt: header.started_at, turns: highest, firstMessage, ...(header.id !== ref.id && { headerId: header.id }) };
}
