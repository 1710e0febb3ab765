/**
 * Opening a session's short-term memory: a new transcript id, or the latest / a named session
 * rebuilt from its transcript (window, summary, working set, touched files).
 */
import type { WorkspacePaths } from "../config/paths.ts";
import type { Settings } from "../config/settings-schema.ts";
import { ShortTermMemory } from "../memory/short-term.ts";
import { latestSession, openSession, type SessionTranscript } from "../session/transcript.ts";
import { UsageError } from "../errors.ts";
import { randomBytes } from "node:crypto";

export type ResumeTarget = { kind: "new" } | { kind: "latest" } | { kind: "id"; id: string };

export interface OpenedMemory {
  sessionId: string;
  /** Undefined for a new session until its first message (no empty transcripts). */
  transcript: SessionTranscript | undefined;
  memory: ShortTermMemory;
  resumed: boolean;
  notices: string[];
}

export function memoryOptions(settings: Settings, countTokens: (text: string) => number) {
  return {
    shortBufferTurns: settings.shortBufferTurns,
    windowBlockTurns: settings.windowBlockTurns,
    workingSetTokens: settings.workingSetTokens,
    overflowPolicy: settings.overflowPolicy,
    countTokens,
  };
}

export function openSessionMemory(
  paths: WorkspacePaths,
  settings: Settings,
  target: ResumeTarget,
  countTokens: (text: string) => number,
): OpenedMemory {
  if (target.kind === "new") {
    return {
      sessionId: randomBytes(4).toString("hex"),
      transcript: undefined,
      memory: new ShortTermMemory(memoryOptions(settings, countTokens)),
      resumed: false,
      notices: [],
    };
  }
  let id: string;
  if (target.kind === "latest") {
    const latest = latestSession(paths);
    if (!latest) {
      throw new UsageError(`no session to continue in ${paths.sessionsDir}`, {
        hint: "Start one with 'valarmind chat' or 'valarmind chat -p MESSAGE' (without --continue).",
      });
    }
    id = latest.id;
  } else {
    id = target.id;
  }
  const { session, read } = openSession(paths, id);
  const notices: string[] = [];
  if (read.tornTail !== undefined) notices.push(`${session.file}: the last line was incomplete (a crash mid-write); it was kept in a note record`);
  let memory = ShortTermMemory.fromRecords(read.records, memoryOptions(settings, countTokens));
  const pending = memory.pending;
  if (pending) {
    notices.push(`turn ${pending.turn} ("${pending.user.slice(0, 60)}") never finished; its message is in the transcript — send it again to retry`);
    // Closed now as a failed turn, so this process and every later resume rebuild the same window
    // (left open, it would be missing from the next request but back in the one after a resume).
    const steps = read.records.reduce((n, r) => ((r.kind === "assistant" || r.kind === "tool_call") && r.turn === pending.turn ? Math.max(n, r.step) : n), 0);
    const closing = session.append([
      { kind: "note", turn: pending.turn, what: "error:interrupted", text: "the process ended before this turn finished" },
      { kind: "turn_end", turn: pending.turn, steps, stop_reason: "error" },
    ]);
    session.sync();
    memory = ShortTermMemory.fromRecords([...read.records, ...closing], memoryOptions(settings, countTokens));
  }
  return { sessionId: session.id, transcript: session, memory, resumed: true, notices };
}
