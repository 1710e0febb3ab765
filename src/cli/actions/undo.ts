/**
 * `valarmind undo` / `valarmind redo` (ADR 0081): in the latest session of the workspace, or the
 * one named with --session, give back the files of the last turn that changed files, or write
 * again what the last undo gave back. The session is locked like any writer (ADR 0072): one a REPL
 * or a headless turn holds is refused, pointing to /undo there. The result goes to the transcript.
 */
import { terminalSafeLiteral } from "../../ui/terminal-safe-text.ts";
import { realpathSync } from "node:fs";
import { findWorkspaceRoot, workspacePaths } from "../../config/paths.ts";
import { ValarmindError } from "../../errors.ts";
import { NothingToUndoError, recordUndo, undoReport, undoTurn, type UndoAction } from "../../checkpoints/undo.ts";
import { lockSession, releaseSessionLock } from "../../session/session-lock.ts";
import { findSession, latestSession, OlderTranscriptError, openSession } from "../../session/transcript.ts";

export interface UndoCommandOptions {
  session?: string;
  force: boolean;
}

export async function runUndo(action: UndoAction, options: UndoCommandOptions): Promise<number> {
  const root = realpathSync(findWorkspaceRoot());
  const paths = workspacePaths(root);
  const ref = options.session !== undefined ? findSession(paths, options.session) : latestSession(paths);
  if (!ref) {
    throw new NothingToUndoError(`nothing to ${action}: this workspace has no session yet (${paths.sessionsDir})`, {
      hint: `${action === "undo" ? "Undo" : "Redo"} works on what valarmind's turns changed; start one with 'valarmind chat'.`,
    });
  }
  const locked = await lockSession(paths, ref.id, { waitMs: 0 });
  if (locked.kind === "busy") {
    throw new ValarmindError(`session ${ref.id} is in use by another valarmind (${locked.holder}); nothing was changed`, {
      hint: `Type /${action} in that session, or run 'valarmind ${action}' again when it has ended.`,
    });
  }
  try {
    let opened: ReturnType<typeof openSession>;
    try {
      opened = openSession(paths, ref);
    } catch (error) {
      if (!(error instanceof OlderTranscriptError)) throw error;
      throw new ValarmindError(`${ref.file} was written by an older valarmind, so no ${action} can be recorded in it; nothing was changed`, {
        hint: `Continue it first ('valarmind chat --resume ${ref.id}' goes on in a new session), then run /${action} there.`,
      });
    }
    const { session, read } = opened;
    try {
      const outcome = await undoTurn({ action, root, paths, sessionId: ref.id, records: read.records, force: options.force });
      await recordUndo(outcome, (record) => {
        session.append(record);
        session.sync();
      });
      const report = undoReport(outcome, ref.id);
      // The paths and commands are the model's: shown literally, every control visible.
      process.stdout.write(terminalSafeLiteral(`${report.title}:\n${report.lines.map((line) => `  ${line}\n`).join("")}`));
      for (const note of outcome.notes) process.stderr.write(`valarmind: ${terminalSafeLiteral(note)}\n`);
      return 0;
    } finally {
      session.close();
    }
  } finally {
    await releaseSessionLock(locked.lock);
  }
}
