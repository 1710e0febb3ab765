/**
 * The working set: one piece per item, in insertion order. It changes only when the window folds
 * (items enter with their folded turns, and leave then), so it sits in the cached prefix (ADR 0074). The reason records the item's source and its priority as
 * the overflow policy sees it, attention boost included. Items are file contents and tool output:
 * data, sent in a user message and escaped so they cannot close their tag.
 */
import { effectivePriority, matchesAttention } from "../../memory/working-set-policy.ts";
import { tagged, type Piece, type Section } from "../section.ts";

export const workingSetSection: Section = {
  id: "working_set",
  region: "working_set",
  stable: true,
  placement: "message",
  role: "user",
  type: "working_set_item",
  format: "text",
  reason: "working_set",
  render: (ctx) =>
    ctx.workingSet.map((item): Piece => {
      const attention = { turn: ctx.turn, attention: ctx.attention };
      const boosted = matchesAttention(item, ctx.attention);
      const effective = effectivePriority(item, attention);
      return {
        id: `ws:${item.id}`,
        type: "working_set_item",
        format: "text",
        reason: "working_set",
        detail: `source ${item.source}, priority ${item.priority.toFixed(2)} → ${effective.toFixed(2)}${boosted ? " (boosted: current task's file)" : ""}, added turn ${item.added_turn}`,
        placement: "message",
        role: "user",
        body: item.content,
        text: tagged("working_set_item", item.content, {
          id: item.id,
          source: item.source,
          tags: item.tags.length > 0 ? item.tags.join(",") : undefined,
        }),
      };
    }),
};
