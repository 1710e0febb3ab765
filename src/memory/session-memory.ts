/**
 * Opening a session's short-term memory: a new transcript id, or the latest / a named session
 * rebuilt from its transcript (window, summary, working set, touched files). A resumed session is
 * locked for this process's lifetime (ADR 0072); when another process holds it past the policy's
 * wait, or its transcript cannot be read, the message goes to a fork instead, and the notices say so.
 * A transcript of an older format is read migrated and continued in a fork in the current format,
 * the old file left as it is (ADR 0078).
 */
import type { WorkspacePaths } from "../config/paths.ts";
import type { Settings } from "../config/settings-schema.ts";
import { ShortTermMemory } from "./short-term.ts";
import { damageNotice, setAsideUnreadable } from "../session/damaged-lines.ts";
import { forkSession } from "../session/session-fork.ts";
import { lockSession, releaseSessionLock, type BusySessionPolicy } from "../session/session-lock.ts";
import { findSession, listSessions, OlderTranscriptError, openSession, readSession, UnreadableTranscriptError, type SessionRef, type SessionTranscript } from "../session/transcript.ts";
import { TRANSCRIPT_MIGRATIONS, type TranscriptMigration } from "../session/transcript-migrations.ts";
import { TRANSCRIPT_VERSION, type TranscriptRecord } from "../session/transcript-schema.ts";
import { describeRenumbering } from "../session/turn-order.ts";
import { pastTurnsOf, type EarlierTurns } from "../session/past-turns.ts";
import type { HeldLock } from "../state/lock.ts";
import { UsageError } from "../errors.ts";
import { randomBytes } from "node:crypto";
import { relative, resolve } from "node:path";
import { runGit } from "../git/safe-git.ts";
import type { NoticeCode } from "../agent/events.ts";

export type ResumeTarget = { kind: "new" } | { kind: "latest" } | { kind: "id"; id: string };

export interface SessionNotice {
  message: string;
  code?: NoticeCode;
}

export interface OpenedMemory {
  sessionId: string;
  /** Undefined for a new session until its first message (no empty transcripts). */
  transcript: SessionTranscript | undefined;
  /** This process's lock on the transcript; undefined for a new session until its first message. */
  lock: HeldLock | undefined;
  memory: ShortTermMemory;
  resumed: boolean;
  notices: SessionNotice[];
  /** The conversation so far, as the transcript read at opening holds it (empty for a new session). */
  earlier: EarlierTurns;
}

export function memoryOptions(settings: Settings, countTokens: (text: string) => number, root?: string) {
  return {
    ...(root !== undefined && { root }),
    shortBufferTurns: settings.shortBufferTurns,
    windowBlockTurns: settings.windowBlockTurns,
    workingSetTokens: settings.workingSetTokens,
    overflowPolicy: settings.overflowPolicy,
    countTokens,
  };
}

export function newSessionId(): string {
  return randomBytes(4).toString("hex");
}

/**
 * Transcripts git tracks: a repository shipped them (valarmind's own .valarmind/.gitignore keeps
 * the sessions it writes out of git). Such a file is a clone's text, not a conversation the user
 * had here: resumed, its forged "user" turns would reach the model as the user's own words.
 */
async function repositorySessionFiles(paths: WorkspacePaths): Promise<Set<string>> {
  // Names come relative to the directory git runs in, the workspace root.
  const listed = await runGit(paths.root, ["ls-files", "-z", "--", relative(paths.root, paths.sessionsDir) || "."]).catch(() => undefined);
  if (!listed || listed.exitCode !== 0) return new Set();
  return new Set(listed.stdout.split("\0").filter((name) => name !== "").map((name) => resolve(paths.root, name)));
}

async function resumeRef(paths: WorkspacePaths, target: Exclude<ResumeTarget, { kind: "new" }>): Promise<SessionRef> {
  const shipped = await repositorySessionFiles(paths);
  const isShipped = (ref: SessionRef) => shipped.has(resolve(ref.file));
  if (target.kind === "id") {
    const ref = findSession(paths, target.id);
    if (isShipped(ref)) {
      throw new UsageError(`session ${ref.id} (${relative(paths.root, ref.file)}) came with the repository: git tracks it, so valarmind did not write it here, and it is not resumed`, {
        hint: `'valarmind sessions show ${ref.id}' shows what it says; start your own with 'valarmind chat'.`,
      });
    }
    return ref;
  }
  const latest = listSessions(paths).filter((ref) => !isShipped(ref)).at(-1);
  if (!latest) {
    throw new UsageError(`no session to continue in ${paths.sessionsDir}${shipped.size > 0 ? " (the ones git tracks came with the repository and are not resumed)" : ""}`, {
      hint: "Start one with 'valarmind chat' or 'valarmind chat -p MESSAGE' (without --continue).",
    });
  }
  return latest;
}

export async function openSessionMemory(
  paths: WorkspacePaths,
  settings: Settings,
  target: ResumeTarget,
  countTokens: (text: string) => number,
  busy: BusySessionPolicy = { waitMs: 0 },
  /** The transcript migration chain; tests give a synthetic one. */
  migrations: readonly TranscriptMigration[] = TRANSCRIPT_MIGRATIONS,
): Promise<OpenedMemory> {
  if (target.kind === "new") {
    return { sessionId: newSessionId(), transcript: undefined, lock: undefined, memory: new ShortTermMemory(memoryOptions(settings, countTokens, paths.root)), resumed: false, notices: [], earlier: { turns: [], total: 0 } };
  }
  const ref = await resumeRef(paths, target);
  const locked = await lockSession(paths, ref.id, busy);
  if (locked.kind === "busy") {
    // Read only: the holder may be mid-write, so nothing in its file is touched.
    const records = readForFork(ref.file, migrations);
    const why = `it was in use by another valarmind (${locked.holder})`;
    const fork = await openFork(paths, settings, countTokens, { id: ref.id, records }, why);
    fork.notices.unshift({
      message: `session ${ref.id} is in use by another valarmind (${locked.holder}); this message goes to a new session ${fork.sessionId} forked from it`,
      code: "session_forked",
    });
    return fork;
  }
  try {
    return resumeLocked(paths, settings, ref, countTokens, locked.lock, migrations);
  } catch (error) {
    if (error instanceof OlderTranscriptError) {
      await releaseSessionLock(locked.lock);
      return continueOlder(paths, settings, countTokens, ref, error);
    }
    if (!(error instanceof UnreadableTranscriptError)) {
      await releaseSessionLock(locked.lock);
      throw error;
    }
    const aside = setAsideUnreadable(ref.file);
    await releaseSessionLock(locked.lock);
    const fork = await openFork(paths, settings, countTokens, { id: ref.id, records: error.records }, `${error.why}; the file was moved to ${aside}`);
    fork.notices.unshift({
      message: `${ref.file}: ${error.why}, so session ${ref.id} cannot be continued; it was moved to ${aside} and this message goes to a new session ${fork.sessionId}`,
      code: "transcript_damaged",
    });
    return fork;
  }
}

/** An older transcript goes on in a fork in the current format: its file is never written to. */
async function continueOlder(
  paths: WorkspacePaths,
  settings: Settings,
  countTokens: (text: string) => number,
  ref: SessionRef,
  older: OlderTranscriptError,
): Promise<OpenedMemory> {
  const { version, records, damaged } = older.read;
  const why = `written in transcript version ${version}, continued in version ${TRANSCRIPT_VERSION}; ${ref.file} is kept unchanged`;
  const fork = await openFork(paths, settings, countTokens, { id: ref.id, records }, why);
  fork.notices.unshift({
    message: `${ref.file} was written by an older valarmind (transcript version ${version}); session ${ref.id} continues as a new session ${fork.sessionId} in the current format (version ${TRANSCRIPT_VERSION}), the old file kept unchanged`,
    code: "session_forked",
  });
  if (damaged.length > 0) fork.notices.push({ message: damageNotice(ref.file, damaged, false), code: "transcript_damaged" });
  return fork;
}

function readForFork(file: string, migrations: readonly TranscriptMigration[]): TranscriptRecord[] {
  try {
    return readSession(file, migrations).records;
  } catch (error) {
    if (error instanceof UnreadableTranscriptError) return error.records;
    throw error;
  }
}

async function openFork(
  paths: WorkspacePaths,
  settings: Settings,
  countTokens: (text: string) => number,
  from: { id: string; records: readonly TranscriptRecord[] },
  why: string,
): Promise<OpenedMemory> {
  const id = newSessionId();
  const forkLock = await lockSession(paths, id, { waitMs: 0 });
  const fork = forkSession(paths, { model: settings.model, cwd: paths.root, id }, from, why);
  return {
    sessionId: id,
    transcript: fork.transcript,
    lock: forkLock.kind === "held" ? forkLock.lock : undefined,
    memory: ShortTermMemory.fromRecords(fork.records, memoryOptions(settings, countTokens, paths.root)),
    resumed: true,
    notices: [],
    earlier: pastTurnsOf(fork.records),
  };
}

function resumeLocked(
  paths: WorkspacePaths,
  settings: Settings,
  ref: SessionRef,
  countTokens: (text: string) => number,
  lock: HeldLock,
  migrations: readonly TranscriptMigration[],
): OpenedMemory {
  const { session, read, newlyDamaged } = openSession(paths, ref, migrations);
  const notices: SessionNotice[] = [];
  if (read.tornTail !== undefined) notices.push({ message: `${session.file}: the last line was incomplete (a crash mid-write); it was kept in a note record` });
  if (newlyDamaged.length > 0) notices.push({ message: damageNotice(session.file, newlyDamaged, true), code: "transcript_damaged" });
  let records = read.records;
  if (read.renumbered.length > 0) {
    const text = `turns written by two processes at once, renumbered when read: ${describeRenumbering(read.renumbered)}`;
    // Told once: the note records that this renumbering was reported (the file itself is unchanged).
    if (!records.some((r) => r.kind === "note" && r.what === "turns_renumbered" && r.text === text)) {
      records = [...records, ...session.append({ kind: "note", what: "turns_renumbered", text })];
      session.sync();
      notices.push({ message: `${session.file}: ${text}; every message is kept` });
    }
  }
  let memory = ShortTermMemory.fromRecords(records, memoryOptions(settings, countTokens, paths.root));
  const pending = memory.pending;
  if (pending) {
    notices.push({ message: `turn ${pending.turn} ("${pending.user.slice(0, 60)}") never finished; its message is in the transcript — send it again to retry` });
    // Closed now as a failed turn, so this process and every later resume rebuild the same window
    // (left open, it would be missing from the next request but back in the one after a resume).
    const steps = records.reduce((n, r) => ((r.kind === "assistant" || r.kind === "tool_call") && r.turn === pending.turn ? Math.max(n, r.step) : n), 0);
    const closing = session.append([
      { kind: "note", turn: pending.turn, what: "error:interrupted", text: "the process ended before this turn finished" },
      { kind: "turn_end", turn: pending.turn, steps, stop_reason: "error" },
    ]);
    session.sync();
    records = [...records, ...closing];
    memory = ShortTermMemory.fromRecords(records, memoryOptions(settings, countTokens, paths.root));
  }
  return { sessionId: session.id, transcript: session, lock, memory, resumed: true, notices, earlier: pastTurnsOf(records) };
}
