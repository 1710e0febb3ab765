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
}

export function useCommandRunner(
  controller: ChatController,
  dispatch: (action: ReplAction) => void,
  catalog: readonly SlashCommandInfo[],
  onDone: () => void,
): CommandRunner {
  const [running, setRunning] = useState<string | undefined>(undefined);
  const inFlight = useRef(false);
  const run = useCallback(
    (name: string, args: string, display: string) => {
      if (!findSlashCommand(catalog, name)) {
        dispatch({ type: "append", item: { kind: "command", command: display, output: unknownCommandOutput(name) } });
        return;
      }
      inFlight.current = true;
      setRunning(display);
      controller
        .runCommand(name, args)
        .then(
          (output) => dispatch({ type: "append", item: { kind: "command", command: display, output } }),
          (error: unknown) =>
            dispatch({
              type: "append",
              item: {
                kind: "command",
                command: display,
                output: {
                  title: `/${name} failed`,
                  lines: [describeError(error)],
                  isError: true,
                },
              },
            }),
        )
        .finally(() => {
          inFlight.current = false;
          setRunning(undefined);
          onDone();
        });
    },
    [controller, dispatch, catalog, onDone],
  );
  const isRunning = useCallback(() => inFlight.current, []);
  return { running, isRunning, run };
}
