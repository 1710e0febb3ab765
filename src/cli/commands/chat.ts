import type { Command } from "commander";
import { ValarmindError } from "../../errors.ts";

// Placeholder registration; the issue that owns `chat` replaces it.
export function registerChat(program: Command): void {
  program
    .command("chat")
    .description("(chat: not built yet)")
    .action(() => {
      throw new ValarmindError("'valarmind chat' is not built yet");
    });
}
