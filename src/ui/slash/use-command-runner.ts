/** Runs a core slash command and appends its output panel; one command at a time. */
import { useCallback, useRef, useState } from "react";
import type { ChatController } from "../../agent/front-end-contract.ts";
import type { ReplAction } from "../transcript/repl-reducer.ts";
import type { CommandInfo } from "./slash-catalog.ts";

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
  catalog: readonly CommandInfo[],
  onDone: () => void,
): CommandRunner {
  const [running, setRunning] = useState<string | undefined>(undefined);
  const inFlight = useRef(false);
  const run = useCallback(
    (name: string, args: string, display: string) => {
      if (!catalog.some((command) => command.name === name)) {
        dispatch({
          type: "append",
          item: {
            kind: "command",
            command: display,
            output: {
              title: `Unknown command /${name}`,
              lines: ["Type /help for the list of commands."],
              isError: true,
            },
          },
        });
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
                  lines: [error instanceof Error ? error.message : String(error)],
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
