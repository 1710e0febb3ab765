/**
 * Reading a transcript without letting one bad line take the session down (ADR 0072). A line
 * before the last that is not valid JSON or not a valid record is skipped and returned in
 * `damaged` (the writer sets it aside in `<transcript>.damaged.jsonl` and tells the user once);
 * a torn last line is `tornTail` (ADR 0013); turns two processes wrote at once are renumbered
 * (turn-order.ts). Only a file without a session header cannot be read: UnreadableTranscriptError,
 * which still carries the valid records so they can be carried into a fresh session.
 */
import { readFileSync } from "node:fs";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { UsageError, ValarmindError } from "../errors.ts";
import { TRANSCRIPT_VERSION, TranscriptRecordSchema, type SessionHeader, type TranscriptRecord } from "./transcript-schema.ts";
import { orderTurns, type Renumbering } from "./turn-order.ts";

export const checkRecord = TypeCompiler.Compile(TranscriptRecordSchema);

export interface DamagedLine {
  /** 1-based line number in the transcript. */
  line: number;
  /** The line exactly as on disk. */
  text: string;
  /** What is wrong with it. */
  reason: string;
}

export interface ReadSessionResult {
  header: SessionHeader;
  /** Every valid record after the header, in file order (repeated turns renumbered). */
  records: TranscriptRecord[];
  /** Text of an incomplete last line, if the writer died mid-line. */
  tornTail: string | undefined;
  /** Lines before the last that are not valid records; skipped. */
  damaged: DamagedLine[];
  /** Turns written twice (two writers at once), renumbered for this read. */
  renumbered: Renumbering[];
}

/** A transcript with no session header: empty (0 bytes), or its first line damaged. */
export class UnreadableTranscriptError extends ValarmindError {
  constructor(
    readonly file: string,
    readonly why: string,
    /** The valid records after the missing header, renumbered like any read. */
    readonly records: TranscriptRecord[],
  ) {
    super(`${file}: ${why}; valarmind cannot continue this session`, {
      hint: "Start a new session (valarmind chat without --continue); 'valarmind chat --continue' moves the file aside and does so itself.",
    });
    this.name = "UnreadableTranscriptError";
  }
}

type Parsed = { record: TranscriptRecord } | { reason: string };

function parseLine(file: string, lineNo: number, line: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { reason: `not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  if (typeof value === "object" && value !== null && "v" in value && typeof value.v === "number" && value.v > TRANSCRIPT_VERSION) {
    throw new UsageError(`${file}:${lineNo}: record version ${value.v} is newer than this valarmind understands (${TRANSCRIPT_VERSION})`, {
      hint: "Upgrade valarmind to read this session.",
    });
  }
  if (!checkRecord.Check(value)) {
    const first = checkRecord.Errors(value).First();
    return { reason: `invalid transcript record: ${first ? `${first.path || "/"} ${first.message}` : "does not match the transcript schema"}` };
  }
  return { record: value };
}

/** Reads and validates a whole transcript, skipping damaged lines (see the module comment). */
export function readSession(file: string): ReadSessionResult {
  const lines = readFileSync(file, "utf8").split("\n");
  // A file that ends with "\n" splits into a trailing "": then the last line is complete.
  const last = lines.pop() ?? "";
  const valid: TranscriptRecord[] = [];
  const damaged: DamagedLine[] = [];
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    const parsed = parseLine(file, index + 1, line);
    if ("record" in parsed) valid.push(parsed.record);
    else damaged.push({ line: index + 1, text: line, reason: parsed.reason });
  });
  let tornTail: string | undefined;
  if (last !== "") {
    const parsed = parseLine(file, lines.length + 1, last);
    if ("record" in parsed) valid.push(parsed.record);
    else tornTail = last;
  }
  const [header, ...rest] = valid;
  const ordered = orderTurns(header?.kind === "session" ? rest : valid.filter((r) => r.kind !== "session"));
  if (header?.kind !== "session") {
    const why = lines.length === 0 && last === "" ? "the transcript is empty (0 bytes)" : "the transcript has no session header (its first line is damaged or missing)";
    throw new UnreadableTranscriptError(file, why, ordered.records);
  }
  return { header, records: ordered.records, tornTail, damaged, renumbered: ordered.renumbered };
}
