/**
 * Entry point of the interactive REPL. The `chat` command imports this lazily and hands over a
 * ready `ChatController`; from then on the REPL owns it and closes it when the user leaves.
 */
import chalk from "chalk";
import { render, type Instance } from "ink";
import { createElement } from "react";
import type { ChatController } from "../agent/front-end-contract.ts";
import { App } from "./app.tsx";
import { restoreTerminal } from "./terminal-restore.ts";
import { createTheme, noColorRequested, type Theme } from "./theme.ts";
import { ThemeContext } from "./theme-context.tsx";

export interface RunReplOptions {
  /** Defaults to the process streams. */
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
  /** Sent as the first message once the REPL is up. */
  initialPrompt?: string;
  /** Environment read for NO_COLOR; defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** Color depth (0 none … 3 truecolor); defaults to what chalk detects for a TTY stdout. */
  colorLevel?: 0 | 1 | 2 | 3;
  /** Install SIGINT/SIGTERM/SIGHUP and crash handlers that restore the terminal (default true). */
  handleSignals?: boolean;
  /** Called once, when the first frame (with the input prompt) has been rendered. */
  onReady?: () => void;
}

const EXIT_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function themeFor(stdout: NodeJS.WriteStream, options: RunReplOptions): Theme {
  const level = options.colorLevel ?? (stdout.isTTY ? chalk.level : 0);
  return createTheme({ level, color: !noColorRequested(options.env ?? process.env) });
}

/**
 * Renders the REPL and resolves when the user leaves (/exit, Ctrl+D, Ctrl+C twice, a signal).
 * Rejects if the UI crashes. Either way the terminal is restored and the controller closed.
 */
export async function runRepl(controller: ChatController, options: RunReplOptions = {}): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const streams = { stdin, stdout };
  const theme = themeFor(stdout, options);
  let ready = false;
  let instance: Instance | undefined;
  let crash: unknown;

  const leave = () => instance?.unmount();
  const onCrash = (error: unknown) => {
    crash ??= error;
    leave();
  };
  const onExit = () => restoreTerminal(streams);
  const handleSignals = options.handleSignals ?? true;
  if (handleSignals) {
    for (const signal of EXIT_SIGNALS) process.on(signal, leave);
    process.on("uncaughtException", onCrash);
    process.on("unhandledRejection", onCrash);
    process.on("exit", onExit);
  }

  try {
    const app = createElement(App, {
      controller,
      ...(options.initialPrompt === undefined ? {} : { initialPrompt: options.initialPrompt }),
    });
    instance = render(createElement(ThemeContext, { value: theme }, app), {
      stdin,
      stdout,
      stderr,
      exitOnCtrlC: false,
      // ink turns itself non-interactive when CI is set (is-in-ci), drawing only the last frame at
      // exit; the chat command only starts the REPL on a terminal, where it must be interactive.
      interactive: stdout.isTTY === true,
      kittyKeyboard: { mode: "auto", flags: ["disambiguateEscapeCodes"] },
      onRender: () => {
        if (ready) return;
        ready = true;
        options.onReady?.();
      },
    });
    await instance.waitUntilExit();
    if (crash !== undefined) throw crash;
  } finally {
    instance?.cleanup();
    restoreTerminal(streams);
    if (handleSignals) {
      for (const signal of EXIT_SIGNALS) process.off(signal, leave);
      process.off("uncaughtException", onCrash);
      process.off("unhandledRejection", onCrash);
      process.off("exit", onExit);
    }
    await controller.close();
  }
}
