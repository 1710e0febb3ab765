/**
 * What a finished turn leaves in short-term memory: the window gets the turn with each tool
 * output replaced by its prompt summary (ADR 0060); long read-like outputs enter the working set;
 * a call that writes a file makes earlier reads of that file stale (removed); items whose files
 * were named again count as used (both read from the paths each call declares it touches);
 * items unused for `ttlTurns` turns expire (seed 000: content that expires).
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
  const { ttlTurns } = options;
  const items = turn.items.map((item) => {
    if (item.kind !== "tool") return item;
    const summary = summaries.get(item.callId);
    return summary ? { ...item, output: summary.promptSummary } : item;
  });
  memory.endTurn({ ...turn, items });
  const blockSettles = memory.window.atBlockBoundary();

  const ws = memory.workingSet;
  const named = new Set<string>();
  // In call order: an edit makes earlier reads of that file stale; a later read is current again.
  for (const item of turn.items) {
    if (item.kind !== "tool") continue;
    // The outcome's facts when the call ran in this process; the tool's, by name, otherwise.
    const locations = (summaries.get(item.callId)?.facts ?? factsOfRecordedCall(item.name, item.arguments))?.locations ?? [];
    for (const location of locations) named.add(location.path);
    const written = item.isError ? [] : locations.filter((l) => l.access === "write").map((l) => l.path);
    if (written.length > 0) {
      for (const stale of ws.items().filter((w) => w.tags.some((tag) => written.includes(tag)))) ws.remove(stale.id);
    }
    const added = summaries.get(item.callId)?.workingSetItem;
    if (added) ws.add(added);
  }
  for (const w of ws.items()) {
    if (w.tags.some((tag) => named.has(tag) || turn.user.includes(tag))) ws.access(w.id);
  }
  // Expiry waits for the turn where the window's newest block settles: the cached prefix breaks
  // there anyway, so removing items from the middle of the working set costs nothing extra.
  if (!blockSettles) return;
  const oldest = turn.turn - ttlTurns;
  for (const expired of ws.items().filter((w) => Math.max(w.added_turn, w.accessed_turn) <= oldest)) ws.remove(expired.id);
}
