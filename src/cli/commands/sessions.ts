import type { Command } from "commander";
import { ValarmindError } from "../../errors.ts";

// Placeholder registration; the issue that owns `sessions` replaces it.
export function registerSessions(program: Command): void {
  program
    .command("sessions")
    .description("(sessions: not built yet)")
    .action(() => {
      throw new ValarmindError("'valarmind sessions' is not built yet");
    });
}
