import type { Command } from "commander";
import { ValarmindError } from "../../errors.ts";

// Placeholder registration; the issue that owns `compact` replaces it.
export function registerCompact(program: Command): void {
  program
    .command("compact")
    .description("(compact: not built yet)")
    .action(() => {
      throw new ValarmindError("'valarmind compact' is not built yet");
    });
}
