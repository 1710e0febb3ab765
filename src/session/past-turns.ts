/**
 * A session's earlier conversation as its transcript holds it, for a front end to show when the
 * session is resumed (the REPL prints it before the first prompt, as it printed it live): each
 * turn's message, what the model wrote and which tools it called, and how the turn ended. Only
 * the newest `limit` turns are kept; `total` says how many there were.
 *
 *   const earlier = pastTurnsOf(read.records, 50);   // { turns: [...], total: 212 }
 */
import type { TranscriptRecord } from "./transcript-schema.ts";
import { UNDO_NOTE_START } from "../checkpoints/undo-note.ts";
import { splitMessage } from "../prompt/attachments.ts";
import { promptText } from "../prompt/prompt-text.ts";

export type PastStep =
  | { kind: "text"; text: string }
  | { kind: "tool"; callId: string; name: string; arguments: string; summary: string; isError: boolean; denied: boolean };

export interface PastTurn {
  turn: number;
  /** The user's words as typed: the recorded message without what valarmind added to it. */
  user: string;
  /** What the recorded message carries besides the words: "README.md attached", "standard input", "a note about /undo". */
  added?: string[];
  steps: PastStep[];
  /** Absent while the transcript has no turn_end for it. */
  stopReason?: "completed" | "incomplete" | "error" | "aborted" | "max_steps";
  /** `/undo` gave back the files this turn changed (and no `/redo` wrote them again since). */
  undone?: boolean;
}

export interface EarlierTurns {
  turns: PastTurn[];
  /** Turns the transcript holds, the ones left out included. */
  total: number;
}

/** Turns shown when a session is resumed; `valarmind sessions show` prints them all. */
export const PAST_TURNS_SHOWN = 50;

/** The note after a turn's message that says what the user typed (a custom command), src/agent/turn-opening.ts. */
export const TYPED_AS_NOTE = "typed_as";

/** The registry's answer to a call it refused on the user's word (src/tools/registry.ts). */
const DENIED = /^Denied: the user did not approve/;

/**
 * The words the user typed, and what else the recorded message holds: valarmind records a message
 * with its `@path` attachments, a piped input and the note about /undo appended after a note of
 * its own (turn-opening.ts), so the window and a resume carry what the model saw.
 */
export function userWords(recorded: string): { words: string; added: string[] } {
  const notes: Array<[string, (rest: string) => string[]]> = [
    [`\n\n${promptText("attachment-note")}\n`, (rest) => splitMessage(rest).flatMap((part) => (part.path === undefined ? [] : [`${part.path} attached`]))],
    [`\n\n${promptText("piped-input-note")}\n`, () => ["standard input"]],
    [`\n\n${UNDO_NOTE_START}`, () => ["a note about /undo"]],
  ];
  let end = recorded.length;
  for (const [note] of notes) {
    const at = recorded.indexOf(note);
    if (at !== -1 && at < end) end = at;
  }
  if (end === recorded.length) return { words: recorded, added: [] };
  const rest = recorded.slice(end);
  const added = notes.flatMap(([note, what]) => (rest.includes(note) ? what(rest) : []));
  return { words: recorded.slice(0, end), added };
}

export function pastTurnsOf(records: readonly TranscriptRecord[], limit = PAST_TURNS_SHOWN): EarlierTurns {
  const turns = new Map<number, PastTurn>();
  /** The custom command as typed (`/NAME ARGS`) of a turn whose recorded message is its expansion. */
  const typedAs = new Map<number, string>();
  const turnOf = (turn: number): PastTurn => {
    let found = turns.get(turn);
    if (!found) {
      found = { turn, user: "", steps: [] };
      turns.set(turn, found);
    }
    return found;
  };
  for (const record of records) {
    switch (record.kind) {
      case "user":
        // A turn's message comes first; a second one (two writers, renumbered) is kept beside it.
        turnOf(record.turn).user += turnOf(record.turn).user === "" ? record.text : `\n\n${record.text}`;
        break;
      case "assistant":
        if (record.text.trim() !== "") turnOf(record.turn).steps.push({ kind: "text", text: record.text });
        break;
      case "tool_call":
        turnOf(record.turn).steps.push({
          kind: "tool",
          callId: record.call_id,
          name: record.name,
          arguments: record.arguments,
          summary: record.summary,
          isError: record.is_error,
          denied: record.is_error && DENIED.test(record.output),
        });
        break;
      case "turn_end":
        turnOf(record.turn).stopReason = record.stop_reason;
        break;
      case "undo":
        if (turns.has(record.of_turn)) turnOf(record.of_turn).undone = true;
        break;
      case "redo":
        if (turns.has(record.of_turn)) delete turnOf(record.of_turn).undone;
        break;
      case "note":
        if (record.what === TYPED_AS_NOTE && record.turn !== undefined) typedAs.set(record.turn, record.text);
        break;
      default:
        break;
    }
  }
  for (const turn of turns.values()) {
    const words = userWords(turn.user);
    // A custom command is shown as typed; what its expansion carried (attachments, a pipe) stays listed.
    turn.user = typedAs.get(turn.turn) ?? words.words;
    if (words.added.length > 0) turn.added = words.added;
  }
  const all = [...turns.values()].sort((a, b) => a.turn - b.turn);
  return { turns: all.slice(Math.max(0, all.length - limit)), total: all.length };
}
