/**
 * What the model is told when files were undone or redone between two turns (ADR 0081): the
 * conversation still shows what the undone turn wrote, so the next user message carries a note
 * naming the turn and its files. The note becomes part of the message as it is recorded (like
 * `@path` attachments), so the window, the summary and a resumed session carry the same text,
 * and it is told once.
 *
 *   withUndoNote("now add tests", [{ kind: "undo", of_turn: 3, files: ["src/app.ts"] }])
 *   // "now add tests\n\n[valarmind: before this message the user ran /undo: …]"
 */

export interface FileRewind {
  kind: "undo" | "redo";
  of_turn: number;
  files: readonly string[];
}

const MAX_FILES = 20;

/** A path as the model reads it: plain when it is, JSON-quoted when it holds a newline, a backtick or a bracket. */
function showPath(path: string): string {
  return /^[^\p{Cc}`[\]]+$/u.test(path) ? path : JSON.stringify(path);
}

function fileList(files: readonly string[]): string {
  const shown = files.slice(0, MAX_FILES).map(showPath);
  if (files.length > MAX_FILES) shown.push(`and ${files.length - MAX_FILES} more`);
  return shown.join(", ");
}

function sentence(event: FileRewind): string {
  const files = fileList(event.files);
  return event.kind === "undo"
    ? `/undo gave back the files turn ${event.of_turn} changed as they were before it (${files}); what turn ${event.of_turn} wrote to them is no longer on disk.`
    : `/redo wrote the files of turn ${event.of_turn} again as that turn left them (${files}).`;
}

/** How the note starts, for a reader that shows the user's words without it. */
export const UNDO_NOTE_START = "[valarmind: before this message the user changed files outside the conversation.";

/** The note for `events` (oldest first), or "" when there is none. */
export function undoNote(events: readonly FileRewind[]): string {
  if (events.length === 0) return "";
  return `${UNDO_NOTE_START} ${events.map(sentence).join(" ")} Read a file again before relying on what the conversation shows of it.]`;
}

/** `message` with the note after it, when there is one. */
export function withUndoNote(message: string, events: readonly FileRewind[]): string {
  const note = undoNote(events);
  return note === "" ? message : `${message.trimEnd()}\n\n${note}`;
}
