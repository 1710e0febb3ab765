/**
 * The working-state snapshot the cached part of the prompt shows (ADR 0063): kept in short-term
 * memory and as a `state_snapshot` transcript record, so a resumed or headless process renders
 * the same bytes. A damaged record is ignored (a new snapshot is taken).
 */
import type { ShortTermMemory } from "./short-term.ts";
import type { SessionTranscript } from "../session/transcript.ts";
import type { WorkingState } from "../state/schema.ts";
import type { StateStore } from "../state/store.ts";
import { checkedSnapshot } from "../state/validate.ts";

export type StateSnapshot = { turn: number; state: WorkingState };

export function stateSnapshotOf(memory: ShortTermMemory, file: string): StateSnapshot | undefined {
  return checkedSnapshot(memory.stateSnapshot, file);
}

/**
 * The builder's `sources.stateSnapshot`, when there is a valid snapshot, and `stateSeen`, when a
 * window turn's state changes showed a later state (the next turn's changes count from it).
 */
export function snapshotSource(memory: ShortTermMemory, file: string): { stateSnapshot?: StateSnapshot; stateSeen?: StateSnapshot } {
  const snap = stateSnapshotOf(memory, file);
  if (!snap) return {};
  const seen = checkedSnapshot(memory.stateSeen, file);
  return seen && seen.turn >= snap.turn ? { stateSnapshot: snap, stateSeen: seen } : { stateSnapshot: snap };
}

export async function takeStateSnapshot(store: StateStore, memory: ShortTermMemory, transcript: SessionTranscript, turn: number): Promise<void> {
  const { state } = await store.read();
  memory.stateSnapshot = { turn, state };
  memory.stateSeen = undefined;
  transcript.append({ kind: "state_snapshot", turn, state: state as unknown as Record<string, unknown> });
}
