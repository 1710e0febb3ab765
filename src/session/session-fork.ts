/**
 * Forking a session (ADR 0072): when a session is in use by another process, or its transcript
 * cannot be read, the new message goes to a new session that starts from the old one's finished
 * turns, copied record by record, then a `note` (`forked_from`) naming the old id and why. A turn
 * still running in the other process is left out: it is that process's to finish.
 */
import type { WorkspacePaths } from "../config/paths.ts";
import { createSession, type SessionTranscript } from "./transcript.ts";
import type { TranscriptRecord } from "./transcript-schema.ts";

/** The records up to the last finished turn: an unfinished last turn and what follows it are left out. */
export function finishedTurns(records: readonly TranscriptRecord[]): TranscriptRecord[] {
  let openAt: number | undefined;
  let openTurn: number | undefined;
  records.forEach((record, index) => {
    if (record.kind === "user") {
      openAt = index;
      openTurn = record.turn;
    } else if (record.kind === "turn_end" && record.turn === openTurn) {
      openAt = undefined;
      openTurn = undefined;
    }
  });
  return openAt === undefined ? [...records] : records.slice(0, openAt);
}

export interface ForkedSession {
  transcript: SessionTranscript;
  /** What the new transcript holds after its header (the copied records and the note). */
  records: TranscriptRecord[];
}

export function forkSession(
  paths: WorkspacePaths,
  meta: { model: string; cwd: string; id: string },
  from: { id: string; records: readonly TranscriptRecord[] },
  why: string,
): ForkedSession {
  const transcript = createSession(paths, meta);
  const copied = finishedTurns(from.records).filter((record) => record.kind !== "session");
  const records = [
    ...(copied.length > 0 ? transcript.append(copied) : []),
    ...transcript.append({ kind: "note", what: "forked_from", text: `${from.id}: ${why}` }),
  ];
  transcript.sync();
  return { transcript, records };
}
