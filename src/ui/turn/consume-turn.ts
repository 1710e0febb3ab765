/**
 * Feeds one turn's event stream into the reducer. Text deltas are coalesced per frame so 200
 * deltas a second cost a few dozen renders, never dropped text: every other event (and the end
 * of the stream) flushes the pending text first, keeping the order intact.
 */
import type { AgentEvent } from "../../agent/events.ts";
import type { ReplAction } from "../transcript/repl-reducer.ts";

export interface ConsumeOptions {
  /** How long deltas are gathered before one render; 0 renders every delta. */
  frameMs: number;
  /** Called after each dispatch batch (the app refreshes its status snapshot). */
  onFlush: () => void;
}

/** Resolves when the stream ends; rejects only if the stream itself throws. */
export async function consumeTurn(
  events: AsyncIterable<AgentEvent>,
  dispatch: (action: ReplAction) => void,
  options: ConsumeOptions,
): Promise<{ sawTurnEnd: boolean }> {
  let pending = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sawTurnEnd = false;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (pending !== "") {
      const delta = pending;
      pending = "";
      dispatch({ type: "agent", event: { type: "text_delta", delta } });
    }
    options.onFlush();
  };
  try {
    for await (const event of events) {
      if (event.type === "text_delta") {
        if (options.frameMs <= 0) {
          dispatch({ type: "agent", event });
          continue;
        }
        pending += event.delta;
        timer ??= setTimeout(flush, options.frameMs);
        continue;
      }
      if (pending !== "") flush();
      dispatch({ type: "agent", event });
      if (event.type === "turn_end") {
        sawTurnEnd = true;
        // The answer is complete; the settle step (a window fold) may follow before the stream
        // ends, so the status line (tokens, cached share) is refreshed now rather than at the end.
        options.onFlush();
      }
    }
  } finally {
    flush();
  }
  return { sawTurnEnd };
}
