/** Starts and aborts turns; owns the AbortController of the turn in flight. */
import { useCallback, useRef, useState } from "react";
import type { ChatController } from "../../agent/front-end-contract.ts";
import type { AgentEvent } from "../../agent/events.ts";
import { describeError } from "../../errors.ts";
import type { ReplAction } from "../transcript/repl-reducer.ts";
import { consumeTurn } from "./consume-turn.ts";

export interface TurnRunner {
  running: boolean;
  /** Up to date even between renders (several keys can arrive in one read). */
  isRunning: () => boolean;
  start: (text: string, display: string) => void;
  abort: () => void;
}

export function useTurnRunner(
  controller: ChatController,
  dispatch: (action: ReplAction) => void,
  frameMs: number,
  onFlush: () => void,
  onDone: () => void,
): TurnRunner {
  const [running, setRunning] = useState(false);
  const current = useRef<AbortController | undefined>(undefined);

  const start = useCallback(
    (text: string, display: string) => {
      if (current.current) return;
      const abort = new AbortController();
      current.current = abort;
      setRunning(true);
      dispatch({ type: "turn_begin", display });
      const finish = () => {
        current.current = undefined;
        setRunning(false);
        onDone();
      };
      let events: AsyncIterable<AgentEvent>;
      try {
        events = controller.submit(text, abort.signal);
      } catch (error) {
        reportCrash(dispatch, error);
        finish();
        return;
      }
      consumeTurn(events, dispatch, { frameMs, onFlush })
        .then(({ sawTurnEnd }) => {
          if (!sawTurnEnd) dispatch({ type: "turn_closed", stopReason: abort.signal.aborted ? "aborted" : "error" });
        })
        .catch((error: unknown) => reportCrash(dispatch, error))
        .finally(finish);
    },
    [controller, dispatch, frameMs, onFlush, onDone],
  );

  const abort = useCallback(() => current.current?.abort(), []);
  const isRunning = useCallback(() => current.current !== undefined, []);
  return { running, isRunning, start, abort };
}

/** A core that throws is a bug: say so plainly, keep the REPL alive, and show no stack trace. */
function reportCrash(dispatch: (action: ReplAction) => void, error: unknown): void {
  const message = describeError(error);
  dispatch({
    type: "agent",
    event: {
      type: "error",
      kind: "internal",
      message: `internal error: ${message}`,
      hint: "The turn was stopped; your message is kept in the session transcript. Retry it, or report this as a bug.",
    },
  });
  dispatch({ type: "turn_closed", stopReason: "error" });
}
