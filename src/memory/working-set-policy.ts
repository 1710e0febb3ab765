/**
 * Overflow policies of the working set (seed 004), as pure functions over items so the prompt
 * builder can plan evictions on a copy (a dry run changes nothing) and the `WorkingSet` applies
 * the same order for real.
 *
 * - fifo: oldest added first.
 * - lru: least recently accessed first.
 * - priority: lowest effective priority first. Effective priority decays with the turns since
 *   the item was last accessed (turns, not minutes: deterministic, and a coding session's clock
 *   is its turns) and gets an attention boost when a tag names one of the current task's files.
 * - summarize: the oldest items are condensed into one summary item instead of being dropped.
 */
import type { WorkingSetItemData } from "../session/transcript-schema.ts";

export type OverflowPolicy = "fifo" | "lru" | "priority" | "summarize";

export const MIN_PRIORITY = 0.01;
export const PRIORITY_DECAY_PER_TURN = 0.02;
export const ATTENTION_BOOST = 0.3;

export interface AttentionContext {
  /** The turn being assembled (for decay). */
  turn: number;
  /** Tags that match the current task: its files, lowercased and workspace-relative. */
  attention: readonly string[];
}

export function matchesAttention(item: WorkingSetItemData, attention: readonly string[]): boolean {
  if (attention.length === 0) return false;
  return item.tags.some((tag) => {
    const t = tag.toLowerCase();
    return attention.some((a) => t === a || t.endsWith(`/${a}`) || a.endsWith(`/${t}`));
  });
}

export function effectivePriority(item: WorkingSetItemData, ctx: AttentionContext): number {
  const idle = Math.max(0, ctx.turn - item.accessed_turn);
  const decayed = Math.max(MIN_PRIORITY, item.priority - PRIORITY_DECAY_PER_TURN * idle);
  return decayed + (matchesAttention(item, ctx.attention) ? ATTENTION_BOOST : 0);
}

/** Items in the order the policy evicts them (first = first to go). Stable for ties. */
export function evictionOrder(
  items: readonly WorkingSetItemData[],
  policy: OverflowPolicy,
  ctx: AttentionContext,
): WorkingSetItemData[] {
  const indexed = items.map((item, index) => ({ item, index }));
  const by = (key: (x: WorkingSetItemData) => number) =>
    indexed.sort((a, b) => key(a.item) - key(b.item) || a.index - b.index).map((x) => x.item);
  switch (policy) {
    case "fifo":
    case "summarize":
      return by((x) => x.added_turn);
    case "lru":
      return by((x) => x.accessed_turn);
    case "priority":
      return by((x) => effectivePriority(x, ctx));
  }
}

function firstLines(text: string, maxChars: number): string {
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  let out = "";
  for (const line of lines) {
    if (out.length + line.length + 3 > maxChars) break;
    out += `${out ? " / " : ""}${line}`;
  }
  return out || (lines[0] ?? "").slice(0, maxChars);
}

/**
 * The SUMMARIZE policy's condenser: keeps, per item, its source, tags and its first lines, so a
 * later turn still knows what was there and can fetch it again. Extractive and offline.
 */
export function condenseItems(items: readonly WorkingSetItemData[], perItemChars = 240): string {
  return items
    .map((item) => {
      const tags = item.tags.length ? ` [${item.tags.join(", ")}]` : "";
      return `- ${item.source}${tags}: ${firstLines(item.content, perItemChars)}`;
    })
    .join("\n");
}
