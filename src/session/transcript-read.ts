/**
 * Reading a transcript without letting one bad line take the session down (ADR 0072). A line
 * before the last that is not valid JSON or not a valid record is skipped and returned in
 * `damaged` (the writer sets it aside in `<transcript>.damaged.jsonl` and tells the user once);
 * a torn last line is `tornTail` (ADR 0013); turns two processes wrote at once are renumbered
 * (turn-order.ts). Only a file without a session header cannot be read: UnreadableTranscriptError,
 * which still carries the valid records so they can be carried into a fresh session. Records of an
 * older version are migrated in memory (transcript-migrations.ts, ADR 0078), never rewritten; a
 * record of a newer version is refused as a usage error naming the file.
 */
import { nonRegularFile } from "../config/non-regular-file.ts";
import { lstatSync, readFileSync } from "node:fs";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { describeError, UsageError, ValarmindError } from "../errors.ts";
import { TRANSCRIPT_VERSION, TranscriptRecordSchema, type SessionHeader, type TranscriptRecord } from "./transcript-schema.ts";
import { migrateRecord, TRANSCRIPT_MIGRATIONS, type TranscriptMigration } from "./transcript-migrations.ts";
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
  /**
   * The format version the file was written in (its header's `v` on disk). Below
   * TRANSCRIPT_VERSION the records were migrated for this read and the file must not be appended to.
   */
  version: number;
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

/** A record as read: `version` is its `v` on disk, before any migration. */
type Parsed = { record: TranscriptRecord; version: number } | { reason: string };

/**
 * One parsed line, migrated to the current version and checked. A newer record is a usage error;
 * what cannot be migrated or fails the schema is a reason (a damaged line).
 */
export function checkParsedRecord(file: string, lineNo: number, value: unknown, migrations: readonly TranscriptMigration[] = TRANSCRIPT_MIGRATIONS): Parsed {
  const migration = migrateRecord(value, migrations);
  if (migration.kind === "newer") {
    throw new UsageError(`${file}:${lineNo}: record version ${migration.version} is newer than this valarmind understands (${TRANSCRIPT_VERSION}); the session was written by a newer valarmind`, {
      hint: "Upgrade valarmind to continue this session, or start a new one ('valarmind chat' without --continue); the file is left untouched.",
    });
  }
  if (migration.kind === "unmigratable") return { reason: migration.reason };
  const candidate = migration.kind === "migrated" ? migration.record : migration.value;
  if (!checkRecord.Check(candidate)) {
    const first = checkRecord.Errors(candidate).First();
    const from = migration.kind === "migrated" ? ` (migrated from version ${migration.from})` : "";
    return { reason: `invalid transcript record${from}: ${first ? `${first.path || "/"} ${first.message}` : "does not match the transcript schema"}` };
  }
  return { record: candidate, version: migration.kind === "migrated" ? migration.from : candidate.v };
}

function parseLine(file: string, lineNo: number, line: string, migrations: readonly TranscriptMigration[]): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { reason: `not valid JSON (${describeError(error)})` };
  }
  return checkParsedRecord(file, lineNo, value, migrations);
}

/**
 * Reads, migrates and validates a whole transcript, skipping damaged lines (see the module
 * comment). Never writes. `migrations` is for tests; valarmind reads with TRANSCRIPT_MIGRATIONS.
 */
export function readSession(file: string, migrations: readonly TranscriptMigration[] = TRANSCRIPT_MIGRATIONS): ReadSessionResult {
  // Named directly (--resume FILE, a path found elsewhere): a FIFO would block, a link be followed.
  const special = nonRegularFile(lstatSync(file));
  if (special !== undefined) {
    throw new ValarmindError(`${file} is not a transcript (${special}); not read`, {
      hint: "valarmind writes transcripts as plain files in .valarmind/sessions/; remove this one (a cloned repository may have shipped it).",
    });
  }
  // A byte-order mark (Notepad, PowerShell 5 saved it) is not part of the first record.
  const lines = readFileSync(file, "utf8").replace(/^\uFEFF/, "").split("\n");
  // A file that ends with "\n" splits into a trailing "": then the last line is complete.
  const last = lines.pop() ?? "";
  const valid: TranscriptRecord[] = [];
  const damaged: DamagedLine[] = [];
  let firstVersion: number | undefined;
  const keep = (parsed: { record: TranscriptRecord; version: number }) => {
    firstVersion ??= parsed.version;
    valid.push(parsed.record);
  };
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    const parsed = parseLine(file, index + 1, line, migrations);
    if ("record" in parsed) keep(parsed);
    else damaged.push({ line: index + 1, text: line, reason: parsed.reason });
  });
  let tornTail: string | undefined;
  if (last !== "") {
    const parsed = parseLine(file, lines.length + 1, last, migrations);
    if ("record" in parsed) keep(parsed);
    else tornTail = last;
  }
  const [header, ...rest] = valid;
  const ordered = orderTurns(header?.kind === "session" ? rest : valid.filter((r) => r.kind !== "session"));
  if (header?.kind !== "session") {
    const why = lines.length === 0 && last === "" ? "the transcript is empty (0 bytes)" : "the transcript has no session header (its first line is damaged or missing)";
    throw new UnreadableTranscriptError(file, why, ordered.records);
  }
  return { header, version: firstVersion ?? TRANSCRIPT_VERSION, records: ordered.records, tornTail, damaged, renumbered: ordered.renumbered };
}
