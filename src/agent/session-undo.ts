/**
 * `/undo` and `/redo` in a session (ADR 0081): the files go back (checkpoints/undo.ts), the
 * transcript records it, and memory marks those files stale so the next message says what the
 * window and working set hold of them is no longer what is on disk.
 */
import type { WorkspacePaths } from "../config/paths.ts";
import { NothingToUndoError, recordUndo, undoTurn, type UndoAction, type UndoOutcome } from "../checkpoints/undo.ts";
import type { ShortTermMemory } from "../memory/short-term.ts";
import { readSession, type SessionTranscript } from "../session/transcript.ts";

export interface SessionUndoContext {
  root: string;
  paths: WorkspacePaths;
  sessionId: string;
  /** Undefined before the session's first message: nothing to undo then. */
  transcript: SessionTranscript | undefined;
  memory: ShortTermMemory;
}

export async function undoInSession(ctx: SessionUndoContext, action: UndoAction, force: boolean): Promise<UndoOutcome> {
  const { transcript } = ctx;
  if (!transcript) throw new NothingToUndoError(`nothing to ${action}: this session has no turn yet`);
  const outcome = await undoTurn({ action, root: ctx.root, paths: ctx.paths, sessionId: ctx.sessionId, records: readSession(transcript.file).records, force });
  await recordUndo(outcome, (record) => {
    transcript.append(record);
    transcript.sync();
  });
  ctx.memory.noteRewind({ kind: action, of_turn: outcome.turn, files: outcome.files.map((file) => file.path) });
  return outcome;
}
