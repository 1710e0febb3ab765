/**
 * What a finished turn leaves in short-term memory: the window gets the turn with each tool
 * output as its prompt summary (ADR 0060; long read-like outputs stay whole, ADR 0074); those
 * outputs are held back for the working set, which they enter when their turn folds out of the
 * window; a call that writes a file makes earlier reads of that file stale (they leave at the
 * next fold; held-back ones at once); items whose files were named again count as used (both
 * read from the paths each call declares it touches); items unused for `ttlTurns` turns expire at
 * the next fold (seed 000: content that expires). The working set changes only at folds, when
 * the cached prefix breaks anyway.
 */
import type { ShortTermMemory } from "./short-term.ts";
import type { Turn } from "./turn.ts";
import { factsOfRecordedCall } from "../tools/call-facts.ts";
import type { ToolMemory } from "./tool-memory.ts";

export function recordTurnInMemory(
  memory: ShortTermMemory,
  turn: Turn,
  summaries: ReadonlyMap<string, ToolMemory>,
  options: { ttlTurns: number },
): void {
  const items = turn.items.map((item) => {
    if (item.kind !== "tool") return item;
    const summary = summaries.get(item.callId);
    return summary ? { ...item, output: summary.promptSummary } : item;
  });
  memory.endTurn({ ...turn, items }, (callId) => summaries.get(callId)?.facts?.locations);
  const { ttlTurns } = options;

  const ws = memory.workingSet;
  const named = new Set<string>();
  // In call order: an edit makes earlier reads of that file stale; a later read is current again.
  for (const item of turn.items) {
    if (item.kind !== "tool") continue;
    // The outcome's facts when the call ran in this process; the tool's, by name, otherwise.
    const locations = (summaries.get(item.callId)?.facts ?? factsOfRecordedCall(item.name, item.arguments))?.locations ?? [];
    for (const location of locations) named.add(location.path);
    const written = item.isError ? [] : locations.filter((l) => l.access === "write").map((l) => l.path);
    // Stale items leave at the next fold (the working set changes only then, ADR 0074): the window
    // shows this write after the item, so the model sees the newer state.
    if (written.length > 0) memory.markStale(written);
    const added = summaries.get(item.callId)?.workingSetItem;
    if (added) memory.holdBack(turn.turn, added);
  }
  for (const w of ws.items()) {
    if (w.tags.some((tag) => named.has(tag) || turn.user.includes(tag))) ws.access(w.id);
  }
  // Expiry and stale items are settled at the next fold, when the working set may change (ADR 0074).
  memory.workingSetTtlTurns = ttlTurns;
}
