import { InvalidArgumentError, type Command } from "commander";

/** `--older-than DAYS`: a whole number of days, 0 or more. */
function days(value: string): number {
  // Digits only: "0x10" was 16 days, "1e1" ten.
  const n = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`'${value}' is not a whole number of days (e.g. 30)`);
  return n;
}

/** `valarmind sessions list|show|prune`: options only; the work is imported lazily. */
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
    .command("prune")
    .description("list sessions unused for a while (transcript, manifests, shell outputs, undo checkpoints); remove them with --yes")
    .option("--older-than <days>", "sessions nothing changed in for more than this many days", days, 30)
    .option("--yes", "remove them (without it, only list them)")
    .action(async (opts: { olderThan: number; yes?: boolean }) => {
      const { pruneSessionsCommand } = await import("../actions/sessions.ts");
      process.exitCode = await pruneSessionsCommand({ olderThanDays: opts.olderThan, yes: opts.yes === true });
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
