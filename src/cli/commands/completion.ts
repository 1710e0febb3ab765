import { Argument, type Command } from "commander";

/**
 * `valarmind completion bash|zsh|fish`: prints a completion script made from the program's own
 * commands and options, read when the action runs (every command is registered by then). The
 * generators are imported lazily like every command's work.
 */
export function registerCompletion(program: Command): void {
  program
    .command("completion")
    .description("print a shell completion script: bash, zsh or fish (docs/completion.md says how to install it)")
    .addArgument(new Argument("<shell>", "the shell").choices(["bash", "zsh", "fish"]))
    .action(async (shell: "bash" | "zsh" | "fish") => {
      const [{ commandTree }, { completionScript }] = await Promise.all([import("../completion/command-tree.ts"), import("../completion/completion-scripts.ts")]);
      process.stdout.write(completionScript(shell, commandTree(program)));
    });
}
