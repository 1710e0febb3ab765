/**
 * The current task: the user's message being answered and, during the tool loop, this turn's
 * steps so far (full outputs, capped). Always last, never cut; the message is required.
 */
import type { Piece, Section } from "../section.ts";
import { stepItems } from "./conversation.ts";

export const currentTaskSection: Section = {
  id: "current_task",
  region: "task",
  stable: false,
  required: true,
  placement: "items",
  type: "current_task",
  format: "items",
  reason: "current_task",
  render: (ctx) => {
    const task = ctx.task;
    if (!task) return [];
    const pieces: Piece[] = [
      {
        id: "task:message",
        type: "current_task",
        format: "items",
        reason: "current_task",
        detail: `the user's message for turn ${ctx.turn}`,
        placement: "items",
        items: [{ type: "message", role: "user", content: task.userText }],
      },
    ];
    task.items.forEach((item, index) => {
      const id = item.kind === "tool" ? `task:call:${item.callId}` : `task:assistant:${index + 1}`;
      const detail = item.kind === "tool" ? `${item.name} call and its output, this turn` : "assistant text, this turn";
      pieces.push({ id, type: "task_step", format: "items", reason: "current_turn_step", detail, placement: "items", items: stepItems([item], ctx) });
    });
    return pieces;
  },
};
