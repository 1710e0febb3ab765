import type { Command } from "commander";

export interface StatusOptions {
  json?: boolean;
  trust?: boolean;
}

/** `valarmind status`: what a chat here would do (trust, model, approvals, sandbox, memory, MCP). Options only; the work is imported lazily. */
export function registerStatus(program: Command): void {
  program
    .command("status")
    .description("show what valarmind would do in this workspace: folder trust and project settings, model endpoint, approvals, shell sandbox and limits, memory, MCP servers")
    .option("--json", "print it as one JSON object")
    .option("--trust", "as `chat --trust` would see it: this folder's project settings apply for that run")
    .action(async (opts: StatusOptions) => {
      const { runStatus } = await import("../actions/status.ts");
      process.exitCode = await runStatus(opts);
    });
}
