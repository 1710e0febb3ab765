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
 * `openSession` truncates it and keeps its text in a `note` record, so nothing is lost; damaged
 * lines in the middle are skipped and set aside (transcript-read.ts, damaged-lines.ts). A transcript
 * of an older format is read migrated (transcript-migrations.ts) but never appended to:
 * `openSession` refuses it with OlderTranscriptError before writing anything (ADR 0078). Secrets
 * never reach disk: every record is passed through redactSecretsInJson (src/secrets/) before it is
 * written; the records handed back to the caller, and so the live session, are not. The file is
 * created 0600 inside the private `.valarmind/` (ensureValarmindDir).
 */
import { nonRegularFile } from "../config/non-regular-file.ts";
import { fileSystemFailure } from "../state/fs-failure.ts";
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readdirSync, readFileSync, readSync, statSync, truncateSync, unlinkSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import { randomBytes } from "node:crypto";
import type { WorkspacePaths } from "../config/paths.ts";
import { ensureValarmindDir, PRIVATE_FILE_MODE } from "../config/valarmind-dir.ts";
import { UsageError, ValarmindError } from "../errors.ts";
import { redactSecretsInJson } from "../secrets/redact-secrets.ts";
import { TRANSCRIPT_VERSION, type NewRecord, type SessionHeader, type TranscriptRecord } from "./transcript-schema.ts";
import { checkParsedRecord, checkRecord, readSession, type ReadSessionResult } from "./transcript-read.ts";
import { TRANSCRIPT_MIGRATIONS, type TranscriptMigration } from "./transcript-migrations.ts";
import pkg from "../../package.json" with { type: "json" };

import { setAsideDamage } from "./damaged-lines.ts";
import type { DamagedLine } from "./transcript-read.ts";

export { readSession, UnreadableTranscriptError, type DamagedLine, type ReadSessionResult } from "./transcript-read.ts";
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

function fileStamp(date: Date): string {
  return date.toISOString().slice(0, 19).replaceAll(":", "-");
}

function refFromFile(paths: WorkspacePaths, name: string): SessionRef | undefined {
  const match = FILE_PATTERN.exec(name);
  if (!match?.[1] || !match[2]) return undefined;
  return { id: match[2], stamp: match[1], file: join(paths.sessionsDir, name), dir: join(paths.sessionsDir, match[2]) };
}

/**
 * All sessions of the workspace, oldest first (file names start with the start time). Only
 * regular files count: a clone can ship a FIFO (every reader would block) or a symlink (another
 * file shown, and appended to, as this workspace's session) named like a transcript.
 */
/** Entries named like transcripts that are not regular files (skipped by listSessions), with what they are. */
export function strayTranscripts(paths: WorkspacePaths): Array<{ file: string; what: string }> {
  if (!existsSync(paths.sessionsDir)) return [];
  return readdirSync(paths.sessionsDir, { withFileTypes: true })
    .filter((entry) => !entry.isFile() && refFromFile(paths, entry.name) !== undefined)
    .map((entry) => ({ file: join(paths.sessionsDir, entry.name), what: nonRegularFile(entry) ?? "not a regular file" }));
}

export function listSessions(paths: WorkspacePaths): SessionRef[] {
  if (!existsSync(paths.sessionsDir)) return [];
  const refs = readdirSync(paths.sessionsDir, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name)
    .sort()
    .map((name) => refFromFile(paths, name))
    .filter((ref): ref is SessionRef => ref !== undefined);
  return inStartOrder(refs);
}

/**
 * File names carry the start time to the second; sessions started in the same second are put in
 * the order of their headers' millisecond start times (only theirs are read). A header that
 * cannot be read sorts first among its second, by file name.
 */
function inStartOrder(refs: SessionRef[]): SessionRef[] {
  const out: SessionRef[] = [];
  for (let i = 0; i < refs.length; ) {
    let j = i + 1;
    while (j < refs.length && refs[j]?.stamp === refs[i]?.stamp) j++;
    const second = refs.slice(i, j);
    if (second.length > 1) {
      const started = new Map(second.map((ref) => [ref, startedAt(ref)]));
      const key = (ref: SessionRef): string => started.get(ref) ?? "";
      second.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    }
    out.push(...second);
    i = j;
  }
  return out;
}

function startedAt(ref: SessionRef): string {
  try {
    return readSessionHeader(ref.file)?.started_at ?? "";
  } catch {
    return "";
  }
}

/** The most recently started session (to the millisecond: see `listSessions`). */
export function latestSession(paths: WorkspacePaths): SessionRef | undefined {
  return listSessions(paths).at(-1);
}

/** The first line of a transcript, parsed and migrated; undefined if it is not a session header. */
function readSessionHeader(file: string): SessionHeader | undefined {
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(4096);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    // A byte-order mark (an editor that saved the file) is not part of the header.
    const line = (buffer.subarray(0, n).toString("utf8").split("\n")[0] ?? "").replace(/^\uFEFF/, "");
    const parsed = checkParsedRecord(file, 1, JSON.parse(line));
    return "record" in parsed && parsed.record.kind === "session" ? parsed.record : undefined;
  } finally {
    closeSync(fd);
  }
}

/** An id as an error quotes it: on one line (a newline in it would forge a line of its own), at most 80 characters. */
function shownId(id: string): string {
  const escaped = JSON.stringify(id).slice(1, -1);
  return escaped.length > 80 ? `${escaped.slice(0, 79)}…` : escaped;
}

/** Finds a session by id, unique id prefix, or transcript path. */
export function findSession(paths: WorkspacePaths, idOrFile: string): SessionRef {
  // Every id starts with "": an empty id (a script's unset $ID) opened the only session.
  if (idOrFile.trim() === "") {
    throw new UsageError("a session id is needed, and an empty one was given", { hint: "Run 'valarmind sessions list' to see the ids of this workspace's sessions." });
  }
  const all = listSessions(paths);
  const byFile = all.find((ref) => ref.file === idOrFile || basename(ref.file) === basename(idOrFile));
  if (byFile) return byFile;
  const matches = all.filter((ref) => ref.id.startsWith(idOrFile));
  const only = matches[0];
  if (only && matches.length === 1) return only;
  if (matches.length > 1) {
    throw new UsageError(`session id '${shownId(idOrFile)}' is ambiguous: ${matches.map((ref) => ref.id).join(", ")}`, {
      hint: "Give more characters of the id (valarmind sessions list shows them).",
    });
  }
  throw new UsageError(`no session '${shownId(idOrFile)}' in ${paths.sessionsDir}`, {
    hint: "Run 'valarmind sessions list' to see the sessions of this workspace.",
  });
}

export { describeSession } from "./describe-session.ts";

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
    if (chunk !== "") appendWhole(fd, chunk, this.file);
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

/**
 * Appends `text` whole or not at all: a short write (a full disk) is continued, and a failure
 * cuts the file back to where it was, so no torn record is left for the next append to glue onto.
 */
function appendWhole(fd: number, text: string, file: string): void {
  const bytes = Buffer.from(text, "utf8");
  const before = fstatSync(fd).size;
  try {
    let done = 0;
    while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
  } catch (error) {
    try {
      ftruncateSync(fd, before);
    } catch {
      // The next reader repairs a torn last line (and keeps its text as a note).
    }
    throw fileSystemFailure(error, "write", file) ?? error;
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
  let fd: number | undefined;
  try {
    fd = openSync(ref.file, "a", PRIVATE_FILE_MODE);
    appendWhole(fd, `${JSON.stringify(redactSecretsInJson(header))}\n`, ref.file);
    fsyncSync(fd);
  } catch (error) {
    // A transcript without its header could never be continued: none is left behind.
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(ref.file);
    } catch {
      // Nothing was created.
    }
    throw error instanceof ValarmindError ? error : (fileSystemFailure(error, "write", ref.file) ?? error);
  }
  return new SessionTranscript(ref, header, fd);
}

/**
 * A transcript written in an older format: it can be read (migrated in memory, `read`) but not
 * appended to, since one file would then mix two formats. The caller continues it in a new
 * session in the current format and leaves this file as it is (ADR 0078).
 */
export class OlderTranscriptError extends ValarmindError {
  constructor(
    readonly file: string,
    readonly read: ReadSessionResult,
  ) {
    super(`${file} was written by an older valarmind (transcript version ${read.version}; this one writes ${TRANSCRIPT_VERSION}); it is read migrated but never appended to`, {
      hint: "Continue it with 'valarmind chat --resume ID': the conversation goes on in a new session in the current format, and this file is kept unchanged.",
    });
    this.name = "OlderTranscriptError";
  }
}

/**
 * Opens an existing session for appending and returns what it holds; call it holding the
 * session's lock (session-lock.ts), since it may change the file. A torn last line is cut off
 * the file and kept, verbatim, in a `note` record; damaged lines in the middle are skipped and
 * kept verbatim in `<transcript>.damaged.jsonl` (`newlyDamaged`: those not set aside before).
 * A transcript of an older format throws OlderTranscriptError before anything is written.
 */
export function openSession(
  paths: WorkspacePaths,
  idOrRef: string | SessionRef,
  migrations: readonly TranscriptMigration[] = TRANSCRIPT_MIGRATIONS,
): { session: SessionTranscript; read: ReadSessionResult; newlyDamaged: DamagedLine[] } {
  const ref = typeof idOrRef === "string" ? findSession(paths, idOrRef) : idOrRef;
  const read = readSession(ref.file, migrations);
  if (read.version < TRANSCRIPT_VERSION) throw new OlderTranscriptError(ref.file, read);
  const bytes = readFileSync(ref.file);
  // Cut by bytes, just after the last newline: the torn line's text was decoded, and a character
  // cut mid-sequence decodes to a longer U+FFFD, which once cut into the record before it.
  if (read.tornTail !== undefined) truncateSync(ref.file, bytes.lastIndexOf(0x0a) + 1);
  ensureValarmindDir(paths, paths.sessionsDir);
  const newlyDamaged = setAsideDamage(ref.file, read.damaged);
  const fd = openSync(ref.file, "a", PRIVATE_FILE_MODE);
  // A complete last line without its newline (an editor, a crash that cut only the newline): the
  // next record must not be glued to it.
  if (read.tornTail === undefined && bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a) writeSync(fd, "\n");
  const session = new SessionTranscript(ref, read.header, fd);
  if (read.tornTail !== undefined) {
    session.append({ kind: "note", what: "torn_line_recovered", text: read.tornTail });
    session.sync();
  }
  return { session, read, newlyDamaged };
}
