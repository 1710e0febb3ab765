import type { Command } from "commander";
import { ValarmindError } from "../../errors.ts";

// Placeholder registration; the issue that owns `prompt` replaces it.
export function registerPrompt(program: Command): void {
  program
    .command("prompt")
    .description("(prompt: not built yet)")
    .action(() => {
      throw new ValarmindError("'valarmind prompt' is not built yet");
    });
}
