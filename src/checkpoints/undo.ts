/**
 * Undo and redo of a turn's file changes (ADR 0081), shared by `/undo` in the REPL and
 * `valarmind undo`. Undo gives every file the last not-undone turn changed its state before that
 * turn (a created file is removed, a deleted one recreated); redo writes the turn's result again.
 * All or nothing: every file is checked first, and when one was changed since by someone else
 * (its content is not what the turn left) nothing is written unless `force`. Writes go through
 * the same confinement as the tools' (no symlink followed, nothing in .git/ or .valarmind/); a
 * write that fails halfway puts back the files already written. The caller records the result in
 * the transcript (`recordUndo`), which puts the files back when that write fails.
 */
import type { WorkspacePaths } from "../config/paths.ts";
import { describeError, ValarmindError } from "../errors.ts";
import type { NewRecord, TranscriptRecord } from "../session/transcript-schema.ts";
import { ConfinedWriteError, removeConfined, writeConfined } from "../tools/confined-file.ts";
import { sameState, type Checkpoint, type FileState } from "./checkpoint-schema.ts";
import { CheckpointStore, readCurrentFile, type CurrentFile } from "./checkpoint-store.ts";
import { undoHistory } from "./undo-history.ts";

export type UndoAction = "undo" | "redo";

export interface UndoRequest {
  action: UndoAction;
  /** The real workspace root. */
  root: string;
  paths: WorkspacePaths;
  sessionId: string;
  /** The session's transcript records, as read now. */
  records: readonly TranscriptRecord[];
  /** Overwrite files changed since the turn. */
  force: boolean;
}

export interface FileChange {
  path: string;
  /** What happened to it, for the user: "restored", "removed (turn 3 created it)", … */
  did: string;
}

export interface UndoOutcome {
  action: UndoAction;
  turn: number;
  files: FileChange[];
  /** Things undo could not take back: shell commands that may have written files. */
  notes: string[];
  /** For the transcript. */
  record: NewRecord;
  /** Gives the files their content from before this undo (or redo) back: when recording it failed. Returns what could not be. */
  putBack: () => Promise<string[]>;
}

/** Nothing to undo or redo: not a failure of valarmind, but the command did nothing (exit 1). */
export class NothingToUndoError extends ValarmindError {}

const quote = (command: string): string => {
  const first = command.split("\n")[0] ?? "";
  return `\`${first.length > 80 ? `${first.slice(0, 77)}...` : first}${command.includes("\n") ? " …" : ""}\``;
};

/** A session's checkpoints, and the last turn they may answer for (a parent's: the turns the fork copied). */
interface ScopedStore {
  store: CheckpointStore;
  throughTurn: number;
}

/**
 * The turn's checkpoint from this session, or from the session it was forked from, for the turns
 * the fork copied from it only: the parent's later turns are not this session's.
 */
async function checkpointOf(stores: readonly ScopedStore[], turn: number): Promise<{ store: CheckpointStore; checkpoint: Checkpoint } | undefined> {
  for (const { store, throughTurn } of stores) {
    if (turn > throughTurn) continue;
    const checkpoint = await store.read(turn);
    if (checkpoint) return { store, checkpoint };
  }
  return undefined;
}

interface Target {
  turn: number;
  store: CheckpointStore;
  checkpoint: Checkpoint;
  notes: string[];
}

async function undoTarget(request: UndoRequest, stores: readonly ScopedStore[]): Promise<Target> {
  const history = undoHistory(request.records);
  const notes: string[] = [];
  for (const turn of [...history.turns].reverse()) {
    if (history.undone.has(turn)) continue;
    const found = await checkpointOf(stores, turn);
    if (!found) continue;
    const commands = found.checkpoint.commands.map(quote).join(", ");
    if (found.checkpoint.files.length > 0) {
      if (commands !== "") notes.unshift(`turn ${turn} also ran shell commands that may have changed files; those changes are not undone: ${commands}`);
      return { turn, ...found, notes };
    }
    if (commands !== "") notes.unshift(`turn ${turn} ran shell commands that may have changed files; they are not undone: ${commands}`);
  }
  const why = history.undone.size > 0 ? "every turn that changed files with valarmind's file tools is undone already" : "no turn of it changed files with valarmind's file tools";
  throw new NothingToUndoError(`nothing to undo in session ${request.sessionId}: ${why}`, {
    hint: notes.length > 0 ? notes.join("; ") : "Another session? 'valarmind sessions list' shows them; 'valarmind undo --session ID' undoes in one.",
  });
}

async function redoTarget(request: UndoRequest, stores: readonly ScopedStore[]): Promise<Target> {
  const turn = undoHistory(request.records).redoStack.at(-1);
  if (turn === undefined) {
    throw new NothingToUndoError(`nothing to redo in session ${request.sessionId}: no undo since its last turn`, {
      hint: "Redo gives back what the last undo took back, until a new message is sent.",
    });
  }
  const found = await checkpointOf(stores, turn);
  if (!found) throw new ValarmindError(`the checkpoint of turn ${turn} is gone (${stores[0]?.store.file(turn) ?? ""}); it cannot be redone; nothing was changed`);
  const commands = found.checkpoint.commands.map(quote).join(", ");
  return { turn, ...found, notes: commands === "" ? [] : [`turn ${turn}'s shell commands are not run again: ${commands}`] };
}

interface Step {
  path: string;
  current: Exclude<CurrentFile, { kind: "unusable" }>;
  to: FileState;
  bytes: Buffer | undefined;
  did: string;
}

function describeStep(action: UndoAction, turn: number, from: FileState | undefined, to: FileState): string {
  if (action === "undo") return !to.exists ? `removed (turn ${turn} created it)` : from?.exists === false ? `recreated (turn ${turn} deleted it)` : "restored";
  return !to.exists ? "removed again" : from?.exists === false ? "created again" : "rewritten";
}

/** Puts `to` (with `bytes`) where `current` is, through the confinement. */
async function put(root: string, path: string, current: Step["current"], to: FileState, bytes: Buffer | undefined): Promise<void> {
  if (sameState(current.state, to)) return;
  if (!to.exists || bytes === undefined) {
    if (current.kind === "file") await removeConfined(root, path, current.bytes);
    return;
  }
  if (current.kind === "missing") await writeConfined(root, path, { before: undefined, after: bytes, approvedLinks: 1, mode: to.mode });
  else await writeConfined(root, path, { before: current.bytes, after: bytes, approvedLinks: 1 });
}

export async function undoTurn(request: UndoRequest): Promise<UndoOutcome> {
  const { action, root } = request;
  const history = undoHistory(request.records);
  const stores: ScopedStore[] = [
    { store: new CheckpointStore(request.paths, request.sessionId), throughTurn: Number.POSITIVE_INFINITY },
    ...history.forkedFrom.map((parent) => ({ store: new CheckpointStore(request.paths, parent.id), throughTurn: parent.throughTurn })),
  ];
  const target = action === "undo" ? await undoTarget(request, stores) : await redoTarget(request, stores);
  const { turn } = target;
  const verb = `${action} turn ${turn}`;

  const unrecorded = action === "redo" ? target.checkpoint.files.filter((file) => file.after === undefined).map((file) => file.path) : [];
  if (unrecorded.length > 0) {
    throw new ValarmindError(`cannot ${verb}: what it left in ${unrecorded.join(", ")} was never recorded (valarmind stopped during the write); nothing was changed`, {
      hint: "Make that change again by hand, or ask for it in a new message.",
    });
  }
  const steps: Step[] = [];
  const changed: string[] = [];
  const blocked: Array<{ problem: string; hint?: string }> = [];
  for (const file of target.checkpoint.files) {
    const from = action === "undo" ? file.after : file.before;
    const to = action === "undo" ? file.before : file.after;
    if (to === undefined) continue;
    const current = await readCurrentFile(root, file.path);
    if (current.kind === "unusable") {
      blocked.push(current);
      continue;
    }
    if (from === undefined) changed.push(`${file.path} (valarmind stopped before recording what turn ${turn} left in it)`);
    // A file already as the undo (or redo) would leave it is no conflict, whoever changed it.
    else if (!sameState(current.state, from) && !sameState(current.state, to)) changed.push(file.path);
    steps.push({ path: file.path, current, to, bytes: to.exists ? await target.store.getBlob(to.sha256, turn) : undefined, did: describeStep(action, turn, from, to) });
  }
  if (blocked.length > 0) throw new ValarmindError(`cannot ${verb}: ${blocked.map((b) => b.problem).join("; ")}; nothing was changed`, {
      hint: blocked.find((b) => b.hint !== undefined)?.hint ?? `${action === "undo" ? "Undo" : "Redo"} writes only plain files inside the workspace, never through a symlink or into .git/ or .valarmind/: put the file back as one, then try again.`,
    });
  const commands = target.checkpoint.commands.map(quote).join(", ");
  if (changed.length > 0 && !request.force) {
    const since = action === "undo" ? `after turn ${turn}` : `since turn ${turn} was undone`;
    const by = action === "undo" && commands !== "" ? `by you, another program, or the shell commands turn ${turn} ran after writing (${commands})` : "by you or another program";
    throw new ValarmindError(`cannot ${verb}: ${changed.length === 1 ? "this file was" : "these files were"} changed ${since} (${by}): ${changed.join(", ")}; nothing was changed`, {
      hint: `Commit or move your change first, then ${action} again; or ${action} with --force to overwrite it ('valarmind ${action} --force', '/${action} --force').`,
    });
  }

  const done: Step[] = [];
  for (const step of steps) {
    try {
      await put(root, step.path, step.current, step.to, step.bytes);
      done.push(step);
    } catch (error) {
      const failedBack = await putBack(root, done);
      const back = done.length === 0 ? "nothing was changed" : failedBack.length === 0 ? `${done.map((s) => s.path).join(", ")} ${done.length === 1 ? "was" : "were"} put back as before` : `putting back failed for ${failedBack.join("; ")}`;
      throw new ValarmindError(`cannot ${verb}: ${describeError(error)}; ${back}`, { hint: "Check the file, then try again.", cause: error });
    }
  }
  const files = steps.map((step) => ({ path: step.path, did: step.did }));
  const record: NewRecord = { kind: action, of_turn: turn, files: files.map((f) => f.path), ...(changed.length > 0 ? { forced: true } : {}) };
  const notes = changed.length > 0 && commands !== "" && action === "undo" ? [...target.notes, `--force overwrote what was in ${changed.join(", ")}, including what turn ${turn}'s shell commands left there`] : target.notes;
  return { action, turn, files, notes, record, putBack: () => putBack(root, done) };
}

/** After a failed step: the files already written get their content from before the undo back. */
async function putBack(root: string, done: readonly Step[]): Promise<string[]> {
  const failed: string[] = [];
  for (const step of [...done].reverse()) {
    try {
      const now = await readCurrentFile(root, step.path);
      if (now.kind === "unusable") throw new ConfinedWriteError(now.problem);
      await put(root, step.path, now, step.current.state, step.current.kind === "file" ? step.current.bytes : undefined);
    } catch (error) {
      failed.push(`${step.path} (${describeError(error)})`);
    }
  }
  return failed;
}

/** The user's view of an outcome: a title and one line per file. */
export function undoReport(outcome: UndoOutcome, sessionId: string): { title: string; lines: string[] } {
  const title = `${outcome.action === "undo" ? "undid" : "redid"} turn ${outcome.turn} of session ${sessionId}`;
  return { title, lines: outcome.files.map((file) => `${file.path}: ${file.did}`) };
}

/** Appends the outcome's record to the transcript; when that fails, the files are put back, so the transcript never misses a change it would explain. */
export async function recordUndo(outcome: UndoOutcome, append: (record: NewRecord) => void): Promise<void> {
  try {
    append(outcome.record);
  } catch (error) {
    const failed = await outcome.putBack();
    const back = failed.length === 0 ? "the files were put back as they were" : `putting the files back failed for ${failed.join("; ")}`;
    throw new ValarmindError(`cannot ${outcome.action} turn ${outcome.turn}: recording it in the transcript failed (${describeError(error)}); ${back}`, {
      hint: "Free some disk space, then try again.",
      cause: error,
    });
  }
}
