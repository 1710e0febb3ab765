/**
 * The working state (medium-term memory) as TOON. After the window on purpose: a state edit then
 * costs a few hundred uncached tokens instead of invalidating the conversation's cached prefix.
 */
import { encodeStateToon } from "../../state/toon.ts";
import type { WorkingState } from "../../state/schema.ts";
import { tagged, type Section } from "../section.ts";

function isEmpty(state: WorkingState): boolean {
  return (
    state.goal.trim() === "" &&
    state.now.trim() === "" &&
    state.decisions_recent.length === 0 &&
    state.tasks_open.every((t) => t.status === "done") &&
    state.blockers.length === 0 &&
    Object.keys(state.conventions).length === 0
  );
}

export const workingStateSection: Section = {
  id: "working_state",
  region: "state",
  stable: false,
  placement: "message",
  role: "developer",
  type: "working_state",
  format: "toon",
  reason: "working_state",
  render: async (ctx) => {
    const state = ctx.state;
    if (!state || isEmpty(state)) return "";
    const encoded = await encodeStateToon(state, { maxTokens: ctx.stateCap, countTokens: ctx.count });
    return [
      {
        id: "working_state",
        type: "working_state",
        format: "toon",
        reason: "working_state",
        detail: `goal, now, decisions, tasks, blockers, conventions (cap ${ctx.stateCap} tokens)`,
        placement: "message",
        role: "developer",
        text: tagged("working_state", encoded.toon, { format: "toon" }),
        dropped: encoded.omitted.map((id) => ({ id: `state:${id}`, reason: "state_cap", detail: `left out of the state projection to fit ${ctx.stateCap} tokens` })),
      },
    ];
  },
};
