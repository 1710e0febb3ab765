/**
 * The current task: the user's message being answered and, during the tool loop, this turn's
 * steps so far (full outputs, capped). The message is required and never cut. Between the two sit
 * the turn's working set, state changes and volatile context (taken once per turn): so the next
 * turn's request, where this message has entered the window, still shares the prefix up to and
 * including it, and the steps of one turn share everything before their own.
 */
import { splitMessage } from "../attachments.ts";
import type { CurrentTask, Piece, Section } from "../section.ts";
import { stepItems } from "./conversation.ts";

/**
 * A message with attachments (`@path`, images; ADR 0079) as one user message in parts: the user's
 * words, one `attachment` item per attached file, listing or image, so the manifest shows what
 * each costs. The parts join back to the recorded text exactly; images ride after it, this turn only.
 */
function messageParts(task: CurrentTask, turn: number): Piece[] {
  const ids = new Set<string>();
  const unique = (id: string): string => {
    let candidate = id;
    for (let n = 2; ids.has(candidate); n++) candidate = `${id}#${n}`;
    ids.add(candidate);
    return candidate;
  };
  const common = { format: "text", placement: "message", role: "user", group: "task" } as const;
  const pieces = splitMessage(task.userText).map((part, index): Piece => {
    if (part.path === undefined) {
      return { ...common, id: unique(index === 0 ? "task:message" : "task:message:more"), type: "current_task", reason: "current_task", detail: `the user's message for turn ${turn}`, text: part.text };
    }
    return { ...common, id: unique(`attachment:${part.path}`), type: "attachment", reason: "attachment", detail: `${part.path}: attached to the user's message with @`, text: part.text };
  });
  for (const attached of task.images ?? []) {
    pieces.push({ ...common, id: unique(`attachment:${attached.path}:image`), type: "attachment", reason: "attachment", detail: `${attached.path}: an image sent with this turn only (tokens estimated)`, text: "", images: [attached.image] });
  }
  return pieces;
}

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
    if ((task.images?.length ?? 0) > 0 || task.userText.includes("<attachment")) return messageParts(task, ctx.turn);
    return [
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
  },
};

export const currentStepsSection: Section = {
  id: "current_steps",
  region: "steps",
  stable: false,
  required: true,
  placement: "items",
  type: "task_step",
  format: "items",
  reason: "current_turn_step",
  render: (ctx) => {
    const task = ctx.task;
    if (!task) return [];
    return task.items.map((item, index): Piece => {
      const id = item.kind === "tool" ? `task:call:${item.callId}` : `task:assistant:${index + 1}`;
      const detail = item.kind === "tool" ? `${item.name} call and its output, this turn` : "assistant text, this turn";
      return { id, type: "task_step", format: "items", reason: "current_turn_step", detail, placement: "items", items: stepItems([item], ctx) };
    });
  },
};
