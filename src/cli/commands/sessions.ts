import type { Command } from "commander";

/** `valarmind sessions list|show`: options only; the work is imported lazily. */
export function registerSessions(program: Command): void {
  const sessions = program.command("sessions").description("list and inspect this workspace's chat sessions");
  sessions
    .command("list", { isDefault: true })
    .description("list sessions, newest last")
    .option("--json", "print JSON")
    .action(async (opts: { json?: boolean }) => {
      const { listSessionsCommand } = await import("../actions/sessions.ts");
      process.exitCode = await listSessionsCommand({ json: opts.json === true });
    });
  sessions
    .command("show <id>")
    .description("print a session's transcript (id, unique id prefix, or file)")
    .option("--json", "print the raw records as JSON lines")
    .option("--raw", "include raw tool results, not only their summaries")
    .action(async (id: string, opts: { json?: boolean; raw?: boolean }) => {
      const { showSessionCommand } = await import("../actions/sessions.ts");
      process.exitCode = await showSessionCommand(id, { json: opts.json === true, raw: opts.raw === true });
    });
}
