/** Asks the folder-trust question on the terminal before the REPL starts; resolves with the answer. */
import chalk from "chalk";
import { render } from "ink";
import { createElement } from "react";
import { FolderTrustPrompt, type FolderTrustAnswer, type FolderTrustQuestion } from "./trust/folder-trust-prompt.tsx";
import { restoreTerminal } from "./terminal-restore.ts";
import { createTheme, noColorRequested } from "./theme.ts";
import { ThemeContext } from "./theme-context.tsx";

export type { FolderTrustAnswer, FolderTrustQuestion };

export async function askFolderTrust(question: FolderTrustQuestion): Promise<FolderTrustAnswer> {
  const stdin = process.stdin;
  const stdout = process.stdout;
  const theme = createTheme({ level: stdout.isTTY ? chalk.level : 0, color: !noColorRequested(process.env) });
  let result: FolderTrustAnswer = "quit";
  const instance = render(
    createElement(
      ThemeContext,
      { value: theme },
      createElement(FolderTrustPrompt, {
        question,
        onAnswer: (answer: FolderTrustAnswer) => {
          result = answer;
          instance.unmount();
        },
      }),
    ),
    { stdin, stdout, stderr: process.stderr, exitOnCtrlC: false, interactive: stdout.isTTY === true },
  );
  try {
    await instance.waitUntilExit();
  } finally {
    instance.cleanup();
    restoreTerminal({ stdin, stdout });
  }
  return result;
}
