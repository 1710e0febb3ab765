/**
 * What can be undone and redone, read from the transcript alone (ADR 0081): each `undo` record
 * marks its turn undone and pushes it on the redo stack, each `redo` pops it, and a new user turn
 * after an undo empties the redo stack (the undone turns stay undone). Pure: records in, history out.
 */
import type { TranscriptRecord } from "../session/transcript-schema.ts";

export interface UndoHistory {
  /** Turns with a user record, oldest first. */
  turns: number[];
  undone: ReadonlySet<number>;
  /** The turn `redo` gives back next is the last. */
  redoStack: readonly number[];
  /**
   * Sessions this one was forked from, nearest first, each with the last turn the fork copied from
   * it: a fork starts with their finished turns, whose checkpoints stayed under the old session's
   * id; the parent's later turns are not the fork's.
   */
  forkedFrom: ReadonlyArray<{ id: string; throughTurn: number }>;
}

const SESSION_ID = /^[a-z0-9]{4,32}$/;

export function undoHistory(records: readonly TranscriptRecord[]): UndoHistory {
  const turns: number[] = [];
  const undone = new Set<number>();
  let redoStack: number[] = [];
  const forkedFrom: Array<{ id: string; throughTurn: number }> = [];
  for (const record of records) {
    switch (record.kind) {
      case "user":
        if (!turns.includes(record.turn)) turns.push(record.turn);
        redoStack = [];
        break;
      case "undo":
        undone.add(record.of_turn);
        redoStack.push(record.of_turn);
        break;
      case "redo":
        undone.delete(record.of_turn);
        redoStack = redoStack.filter((turn) => turn !== record.of_turn);
        break;
      case "note": {
        // session-fork.ts writes "<old id>: <why>"; a fork of a fork names its own parent, copied first.
        const id = record.what === "forked_from" ? record.text.split(":")[0] : undefined;
        if (id !== undefined && SESSION_ID.test(id) && !forkedFrom.some((parent) => parent.id === id)) forkedFrom.unshift({ id, throughTurn: Math.max(0, ...turns) });
        break;
      }
      default:
        break;
    }
  }
  return { turns: turns.sort((a, b) => a - b), undone, redoStack, forkedFrom };
}
