import type { Command } from "commander";
import { ValarmindError } from "../../errors.ts";

// Placeholder registration; the issue that owns `state` replaces it.
export function registerState(program: Command): void {
  program
    .command("state")
    .description("(state: not built yet)")
    .action(() => {
      throw new ValarmindError("'valarmind state' is not built yet");
    });
}
