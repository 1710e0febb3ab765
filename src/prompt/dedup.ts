/**
 * No content twice (seed 001's quality rule): identical blocks are hashed and sent once. The first
 * occurrence in request order stays; a later text piece with the same content is dropped, and a
 * later function output with the same content is replaced by a pointer to the first (the call
 * and its output must stay paired). Short blocks are left alone: a pointer would not be shorter.
 */
import type { InputItem } from "../model/types.ts";
import type { Piece } from "./section.ts";

/** Blocks shorter than this (in characters) are never deduplicated. */
export const DEDUP_MIN_CHARS = 200;

export interface Duplicate {
  /** The dropped piece, or `<piece>/output:<call_id>` for a replaced function output. */
  id: string;
  duplicateOf: string;
  /** The text that was not sent. */
  text: string;
}

/** How the model is pointed at the first copy. */
function describeRef(id: string): string {
  const call = /\/output:(.+)$/.exec(id);
  if (call) return `the output of call ${call[1]}`;
  if (id.startsWith("ws:")) return `working set item ${id.slice(3)}`;
  return `the ${id} block`;
}

function key(text: string): string {
  return `${text.length}:${Bun.hash(text).toString(36)}`;
}

export function dedupePieces(pieces: readonly Piece[]): { pieces: Piece[]; duplicates: Duplicate[] } {
  const seen = new Map<string, string>();
  const duplicates: Duplicate[] = [];
  const out: Piece[] = [];
  const firstSeen = (text: string, id: string): string | undefined => {
    if (text.length < DEDUP_MIN_CHARS) return undefined;
    const k = key(text.trim());
    const earlier = seen.get(k);
    if (earlier === undefined) seen.set(k, id);
    return earlier;
  };
  for (const piece of pieces) {
    // Tools, and the user's message with its attachments (it is sent as recorded).
    if (piece.placement === "tools" || piece.group !== undefined) {
      out.push(piece);
      continue;
    }
    if (!piece.items) {
      const earlier = firstSeen(piece.body ?? piece.text ?? "", piece.id);
      if (earlier !== undefined) {
        duplicates.push({ id: piece.id, duplicateOf: earlier, text: piece.text ?? "" });
        continue;
      }
      out.push(piece);
      continue;
    }
    let changed = false;
    const items = piece.items.map((item): InputItem => {
      if (item.type !== "function_call_output") return item;
      const ref = `${piece.id}/output:${item.call_id}`;
      const earlier = firstSeen(item.output, ref);
      if (earlier === undefined) return item;
      changed = true;
      duplicates.push({ id: ref, duplicateOf: earlier, text: item.output });
      return { ...item, output: `[identical to ${describeRef(earlier)} above]` };
    });
    out.push(changed ? { ...piece, items } : piece);
  }
  return { pieces: out, duplicates };
}
