import type { Command } from "commander";
import { ValarmindError } from "../../errors.ts";

// Placeholder registration; the issue that owns `init` replaces it.
export function registerInit(program: Command): void {
  program
    .command("init")
    .description("(init: not built yet)")
    .action(() => {
      throw new ValarmindError("'valarmind init' is not built yet");
    });
}
