import type { Command } from "commander";

/** `valarmind init`: options only; the work is imported lazily from ../actions/init.ts. */
export function registerInit(program: Command): void {
  program
    .command("init")
    .description("set up valarmind here: .valarmind/, a VALARMIND.md template, .gitignore entries (never overwrites a file)")
    .option("--here", "make this folder a workspace even inside a git repository or another workspace")
    .action(async (opts: { here?: boolean }) => {
      const { runInit } = await import("../actions/init.ts");
      await runInit(process.cwd(), { here: opts.here === true });
    });
}
