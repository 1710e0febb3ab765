/**
 * Session transcripts: `.valarmind/sessions/<time>-<id>.jsonl`, append-only, one versioned record
 * per line (see transcript-schema.ts). Per-call artefacts (manifests) live beside it in
 * `.valarmind/sessions/<id>/`.
 *
 * How the agent uses it:
 *   const session = createSession(paths, { model, cwd });        // or openSession(paths, id)
 *   session.append({ kind: "user", turn, text, tokens });         // as things happen (sync write)
 *   session.append({ kind: "turn_end", turn, steps, stop_reason, usage });
 *   session.sync();                                               // fsync once per turn end
 *   const { header, records, tornTail } = readSession(session.file); // on resume
 *
 * A torn last line (a crash mid-write) is tolerated: readers report it as `tornTail`, and
 * `openSession` truncates it and keeps its text in a `note` record, so nothing is lost. Secrets
 * never reach disk: every record is passed through redactSecretsInJson (src/secrets/) before it is
 * written; the records handed back to the caller, and so the live session, are not. The file is
 * created 0600 inside the private `.valarmind/` (ensureValarmindDir).
 */
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, readFileSync, readSync, statSync, truncateSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import { randomBytes } from "node:crypto";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { SessionListing } from "../agent/controller.ts";
import type { WorkspacePaths } from "../config/paths.ts";
import { ensureValarmindDir, PRIVATE_FILE_MODE } from "../config/valarmind-dir.ts";
import { UsageError, ValarmindError } from "../errors.ts";
import { redactSecretsInJson } from "../secrets/redact-secrets.ts";
import {
  TRANSCRIPT_VERSION,
  TranscriptRecordSchema,
  type NewRecord,
  type SessionHeader,
  type TranscriptRecord,
} from "./transcript-schema.ts";
import pkg from "../../package.json" with { type: "json" };

const checkRecord = TypeCompiler.Compile(TranscriptRecordSchema);
const FILE_PATTERN = /^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2})-([a-z0-9]{4,32})\.jsonl$/;

export interface SessionMeta {
  model: string;
  cwd: string;
  /** Defaults to 8 random hex characters. */
  id?: string;
  now?: Date;
}

export interface SessionRef {
  id: string;
  /** The transcript file. */
  file: string;
  /** `.valarmind/sessions/<id>/`: manifests and other per-call files. */
  dir: string;
  /** Start time from the file name (`2026-01-31T12-00-00`). */
  stamp: string;
}

export interface ReadSessionResult {
  header: SessionHeader;
  /** Every record after the header, in file order. */
  records: TranscriptRecord[];
  /** Text of an incomplete last line, if the writer died mid-line. */
  tornTail: string | undefined;
}

function fileStamp(date: Date): string {
  return date.toISOString().slice(0, 19).replaceAll(":", "-");
}

function refFromFile(paths: WorkspacePaths, name: string): SessionRef | undefined {
  const match = FILE_PATTERN.exec(name);
  if (!match?.[1] || !match[2]) return undefined;
  return { id: match[2], stamp: match[1], file: join(paths.sessionsDir, name), dir: join(paths.sessionsDir, match[2]) };
}

/** All sessions of the workspace, oldest first (file names start with the start time). */
export function listSessions(paths: WorkspacePaths): SessionRef[] {
  if (!existsSync(paths.sessionsDir)) return [];
  return readdirSync(paths.sessionsDir)
    .sort()
    .map((name) => refFromFile(paths, name))
    .filter((ref): ref is SessionRef => ref !== undefined);
}

/**
 * The most recently started session. File names carry the start time to the second; sessions
 * started in the same second are told apart by their headers' millisecond start times.
 */
export function latestSession(paths: WorkspacePaths): SessionRef | undefined {
  const all = listSessions(paths);
  const last = all.at(-1);
  if (!last) return undefined;
  const tied = all.filter((ref) => ref.stamp === last.stamp);
  if (tied.length === 1) return last;
  const startedAt = (ref: SessionRef): string => {
    try {
      return readSessionHeader(ref.file)?.started_at ?? "";
    } catch {
      return "";
    }
  };
  return tied.reduce((best, ref) => (startedAt(ref) > startedAt(best) ? ref : best));
}

/** The first line of a transcript, parsed; undefined if it is not a session header. */
function readSessionHeader(file: string): SessionHeader | undefined {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(4096);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const line = buffer.subarray(0, n).toString("utf8").split("\n")[0] ?? "";
    const value: unknown = JSON.parse(line);
    return checkRecord.Check(value) && value.kind === "session" ? value : undefined;
  } finally {
    closeSync(fd);
  }
}

/** Finds a session by id, unique id prefix, or transcript path. */
export function findSession(paths: WorkspacePaths, idOrFile: string): SessionRef {
  const all = listSessions(paths);
  const byFile = all.find((ref) => ref.file === idOrFile || basename(ref.file) === basename(idOrFile));
  if (byFile) return byFile;
  const matches = all.filter((ref) => ref.id.startsWith(idOrFile));
  const only = matches[0];
  if (only && matches.length === 1) return only;
  if (matches.length > 1) {
    throw new UsageError(`session id '${idOrFile}' is ambiguous: ${matches.map((ref) => ref.id).join(", ")}`, {
      hint: "Give more characters of the id (valarmind sessions list shows them).",
    });
  }
  throw new UsageError(`no session '${idOrFile}' in ${paths.sessionsDir}`, {
    hint: "Run 'valarmind sessions list' to see the sessions of this workspace.",
  });
}

function parseLine(file: string, lineNo: number, line: string): TranscriptRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new ValarmindError(`${file}:${lineNo}: not valid JSON (${error instanceof Error ? error.message : String(error)})`, {
      hint: "The transcript is damaged in the middle; move the file aside to start a fresh session.",
    });
  }
  if (typeof value === "object" && value !== null && "v" in value && typeof value.v === "number" && value.v > TRANSCRIPT_VERSION) {
    throw new UsageError(`${file}:${lineNo}: record version ${value.v} is newer than this valarmind understands (${TRANSCRIPT_VERSION})`, {
      hint: "Upgrade valarmind to read this session.",
    });
  }
  if (!checkRecord.Check(value)) {
    const first = checkRecord.Errors(value).First();
    const where = first ? `${first.path || "/"} ${first.message}` : "does not match the transcript schema";
    throw new ValarmindError(`${file}:${lineNo}: invalid transcript record: ${where}`, {
      hint: "The transcript was edited or damaged; move the file aside to start a fresh session.",
    });
  }
  return value;
}

/** Reads and validates a whole transcript. Throws (naming file and line) on damage before the last line. */
export function readSession(file: string): ReadSessionResult {
  const lines = readFileSync(file, "utf8").split("\n");
  // A file that ends with "\n" splits into a trailing "": then the last line is complete.
  const last = lines.pop() ?? "";
  const records: TranscriptRecord[] = [];
  lines.forEach((line, index) => {
    if (line.trim() !== "") records.push(parseLine(file, index + 1, line));
  });
  let tornTail: string | undefined;
  if (last !== "") {
    try {
      records.push(parseLine(file, lines.length + 1, last));
    } catch {
      tornTail = last;
    }
  }
  const [header, ...rest] = records;
  if (header?.kind !== "session") {
    throw new ValarmindError(`${file}: the first record is not a session header`, {
      hint: "Move the file aside; valarmind only reads transcripts it wrote.",
    });
  }
  return { header, records: rest, tornTail };
}

/** Turn count and first user message of a session, for listings. */
export function describeSession(ref: SessionRef): SessionListing {
  const { header, records } = readSession(ref.file);
  let turns = 0;
  let firstMessage = "";
  for (const record of records) {
    if (record.kind !== "user") continue;
    turns = Math.max(turns, record.turn);
    if (firstMessage === "") firstMessage = record.text;
  }
  return { id: header.id, file: ref.file, startedAt: header.started_at, turns, firstMessage };
}

/** An open transcript: appends are synchronous writes (ordered, small); `sync()` makes them durable. */
export class SessionTranscript {
  readonly id: string;
  readonly file: string;
  readonly dir: string;
  readonly header: SessionHeader;
  private fd: number | undefined;

  constructor(ref: SessionRef, header: SessionHeader, fd: number) {
    this.id = ref.id;
    this.file = ref.file;
    this.dir = ref.dir;
    this.header = header;
    this.fd = fd;
  }

  /** Stamps `v` and `ts`, validates, redacts secrets and appends. Returns the records unredacted. */
  append(records: NewRecord | readonly NewRecord[]): TranscriptRecord[] {
    const fd = this.fd;
    if (fd === undefined) throw new ValarmindError(`session ${this.id} is closed; cannot append to ${this.file}`);
    const list: readonly NewRecord[] = Array.isArray(records) ? records : [records as NewRecord];
    const written: TranscriptRecord[] = [];
    let chunk = "";
    for (const input of list) {
      const full = { v: TRANSCRIPT_VERSION, ts: new Date().toISOString(), ...input };
      if (!checkRecord.Check(full)) {
        const first = checkRecord.Errors(full).First();
        throw new ValarmindError(`refusing to append an invalid '${input.kind}' record to ${this.file}: ${first?.path ?? ""} ${first?.message ?? ""}`);
      }
      written.push(full);
      chunk += `${JSON.stringify(redactSecretsInJson(full))}\n`;
    }
    if (chunk !== "") writeSync(fd, chunk);
    return written;
  }

  /** fsync: call at each turn end. */
  sync(): void {
    if (this.fd !== undefined) fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd === undefined) return;
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
  }
}

export function createSession(paths: WorkspacePaths, meta: SessionMeta): SessionTranscript {
  const now = meta.now ?? new Date();
  const id = meta.id ?? randomBytes(4).toString("hex");
  const name = `${fileStamp(now)}-${id}.jsonl`;
  const ref = refFromFile(paths, name);
  if (!ref) throw new UsageError(`invalid session id '${id}': use 4–32 lowercase letters or digits`);
  ensureValarmindDir(paths, paths.sessionsDir);
  if (existsSync(ref.file)) throw new ValarmindError(`session file ${ref.file} already exists; not overwriting it`);
  const header: SessionHeader = {
    v: TRANSCRIPT_VERSION,
    kind: "session",
    ts: now.toISOString(),
    id,
    started_at: now.toISOString(),
    cwd: meta.cwd,
    model: meta.model,
    valarmind: pkg.version,
  };
  const fd = openSync(ref.file, "a", PRIVATE_FILE_MODE);
  writeSync(fd, `${JSON.stringify(redactSecretsInJson(header))}\n`);
  fsyncSync(fd);
  return new SessionTranscript(ref, header, fd);
}

/**
 * Opens an existing session for appending and returns what it holds. A torn last line is cut
 * off the file and kept, verbatim, in a `note` record.
 */
export function openSession(paths: WorkspacePaths, idOrFile: string): { session: SessionTranscript; read: ReadSessionResult } {
  const ref = findSession(paths, idOrFile);
  const read = readSession(ref.file);
  if (read.tornTail !== undefined) {
    truncateSync(ref.file, statSync(ref.file).size - Buffer.byteLength(read.tornTail, "utf8"));
  }
  ensureValarmindDir(paths, paths.sessionsDir);
  const session = new SessionTranscript(ref, read.header, openSync(ref.file, "a", PRIVATE_FILE_MODE));
  if (read.tornTail !== undefined) {
    session.append({ kind: "note", what: "torn_line_recovered", text: read.tornTail });
    session.sync();
  }
  return { session, read };
}
