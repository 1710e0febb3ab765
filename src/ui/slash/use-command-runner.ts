/**
 * Runs a core slash command and appends its output panel; one command at a time. A name outside
 * the catalogue is answered here, without asking the core.
 */
import { useCallback, useRef, useState } from "react";
import { findSlashCommand, unknownCommandOutput, type ChatController, type SlashCommandInfo } from "../../agent/front-end-contract.ts";
import { describeError } from "../../errors.ts";
import type { ReplAction } from "../transcript/repl-reducer.ts";

export interface CommandRunner {
  /** The command line being run, if any. */
  running: string | undefined;
  /** Up to date even between renders. */
  isRunning: () => boolean;
  run: (name: string, args: string, display: string) => void;
  /** Cancels the running command (a /compact waiting on the model); true if one was running. */
  abort: () => boolean;
}

export function useCommandRunner(
  controller: ChatController,
  dispatch: (action: ReplAction) => void,
  catalog: readonly SlashCommandInfo[],
  onDone: () => void,
): CommandRunner {
  const [running, setRunning] = useState<string | undefined>(undefined);
  const inFlight = useRef(false);
  const controllerRef = useRef<AbortController | undefined>(undefined);
  const run = useCallback(
    (name: string, args: string, display: string) => {
      if (!findSlashCommand(catalog, name)) {
        dispatch({ type: "append", item: { kind: "command", command: display, output: unknownCommandOutput(name) } });
        return;
      }
      inFlight.current = true;
      setRunning(display);
      const abort = new AbortController();
      controllerRef.current = abort;
      controller
        .runCommand(name, args, abort.signal)
        .then(
          (output) => dispatch({ type: "append", item: { kind: "command", command: display, output } }),
          (error: unknown) =>
            dispatch({
              type: "append",
              item: {
                kind: "command",
                command: display,
                output: abort.signal.aborted
                  ? { title: `/${name}`, lines: ["cancelled; nothing was changed by it"], isError: true }
                  : {
                      title: `/${name} failed`,
                      lines: [describeError(error)],
                      isError: true,
                    },
              },
            }),
        )
        .finally(() => {
          controllerRef.current = undefined;
          inFlight.current = false;
          setRunning(undefined);
          onDone();
        });
    },
    [controller, dispatch, catalog, onDone],
  );
  const isRunning = useCallback(() => inFlight.current, []);
  const abortCommand = useCallback(() => {
    const running = controllerRef.current;
    if (!running) return false;
    running.abort();
    return true;
  }, []);
  return { running, isRunning, run, abort: abortCommand };
}
