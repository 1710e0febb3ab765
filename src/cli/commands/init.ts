import type { Command } from "commander";

/** `valarmind init`: options only; the work is imported lazily from ../actions/init.ts. */
export function registerInit(program: Command): void {
  program
    .command("init")
    .description("set up valarmind here: .valarmind/, a VALARMIND.md template, .gitignore entries (never overwrites a file)")
    .action(async () => {
      const { runInit } = await import("../actions/init.ts");
      await runInit(process.cwd());
    });
}
