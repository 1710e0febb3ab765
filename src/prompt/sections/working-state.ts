/**
 * The working state (medium-term memory) as TOON, in two parts (ADR 0063). `working_state` shows
 * the state as of the last snapshot (taken when the window's settled part last changed, so it
 * moves when the cached prefix breaks anyway) and sits after the settled window; the changes since
 * that snapshot — usually a line or two, or nothing — come as `working_state_changes` after the
 * recent turns. A memory-tool call then costs a few tokens near the end of the request instead of
 * invalidating the working set and the recent turns.
 *
 * The state is data, not instructions, and goes in a user message: the model writes it from what
 * it read, and `.valarmind/memory/state.json` can arrive with a repository (an archive keeps it).
 */
import { encode } from "@toon-format/toon";
import { diffProjections } from "../../state/projection-diff.ts";
import { checkRoundTrip, encodeStateToon, type StateToon } from "../../state/toon.ts";
import type { WorkingState } from "../../state/schema.ts";
import { tagged, takenPiece, type Section } from "../section.ts";

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

/** Items left out of the state projection that a manifest names one by one; the rest are one counted entry. */
const MAX_NAMED_DROPS = 50;

export const workingStateSection: Section = {
  id: "working_state",
  region: "state",
  // The snapshot: it changes only at a fold, when the prefix breaks anyway (ADR 0074).
  stable: true,
  placement: "message",
  role: "user",
  type: "working_state",
  format: "toon",
  reason: "working_state",
  render: async (ctx) => {
    const state = ctx.stateSnapshot?.state ?? ctx.state;
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
        role: "user",
        text: tagged("working_state", toon.toon, { format: "toon", source: ".valarmind/memory/state.json" }),
        // Named one by one up to a few dozen, then counted: a state of 100k tasks must not make every manifest megabytes.
        dropped: [
          ...toon.omitted.slice(0, MAX_NAMED_DROPS).map((id) => ({ id: `state:${id}`, reason: "state_cap", detail: `left out of the state projection to fit ${ctx.stateCap} tokens` })),
          ...(toon.omitted.length > MAX_NAMED_DROPS
            ? [{ id: "state:more", reason: "state_cap", detail: `${toon.omitted.length - MAX_NAMED_DROPS} more items left out of the state projection to fit ${ctx.stateCap} tokens` }]
            : []),
        ],
      },
    ];
  },
};

/**
 * What changed in the working state since the model last saw it — the snapshot, or the state
 * changes a later window turn carries (`stateSeen`); absent when nothing did. Taken at the turn's
 * first request and kept with the turn (ADR 0074), so each change is sent once.
 */
export const stateChangesSection: Section = {
  id: "working_state_changes",
  region: "state_changes",
  stable: false,
  placement: "message",
  role: "user",
  type: "working_state",
  format: "toon",
  reason: "working_state_changes",
  render: async (ctx) => {
    const taken = ctx.task?.context;
    if (taken) return takenPiece(stateChangesSection, taken.stateChanges);
    const since = ctx.stateSeen ?? ctx.stateSnapshot;
    const state = ctx.state;
    if (!since || !state || since.state === state) return "";
    const [before, after] = await Promise.all([encodeOnce(since.state, ctx.stateCap, ctx.count), encodeOnce(state, ctx.stateCap, ctx.count)]);
    const changes = diffProjections(before.projection, after.projection);
    if (!changes) return "";
    const toon = encode(changes);
    checkRoundTrip(toon, changes);
    return [
      {
        id: "working_state_changes",
        type: "working_state",
        format: "toon",
        reason: "working_state_changes",
        detail: `changes to the working state since turn ${since.turn} showed it (${Object.keys(changes).join(", ")})`,
        placement: "message",
        role: "user",
        text: tagged("working_state_changes", toon, { since_turn: since.turn, source: ".valarmind/memory/state.json" }),
      },
    ];
  },
};
