/**
 * The working state (medium-term memory) as TOON. After the window on purpose: a state edit then
 * costs a few hundred uncached tokens instead of invalidating the conversation's cached prefix.
 */
import { encodeStateToon, type StateToon } from "../../state/toon.ts";
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

// The state is read once per turn and never mutated (the store returns a new object on change), so
// every model call of a turn reuses one projection per cap instead of re-encoding it.
const encoded = new WeakMap<WorkingState, Map<number, Promise<StateToon>>>();

function encodeOnce(state: WorkingState, cap: number, count: (text: string) => number): Promise<StateToon> {
  let byCap = encoded.get(state);
  if (!byCap) encoded.set(state, (byCap = new Map()));
  let result = byCap.get(cap);
  if (!result) {
    result = encodeStateToon(state, { maxTokens: cap, countTokens: count });
    byCap.set(cap, result);
    result.catch(() => byCap.delete(cap));
  }
  return result;
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
    const toon = await encodeOnce(state, ctx.stateCap, ctx.count);
    return [
      {
        id: "working_state",
        type: "working_state",
        format: "toon",
        reason: "working_state",
        detail: `goal, now, decisions, tasks, blockers, conventions (cap ${ctx.stateCap} tokens)`,
        placement: "message",
        role: "developer",
        text: tagged("working_state", toon.toon, { format: "toon" }),
        dropped: toon.omitted.map((id) => ({ id: `state:${id}`, reason: "state_cap", detail: `left out of the state projection to fit ${ctx.stateCap} tokens` })),
      },
    ];
  },
};
