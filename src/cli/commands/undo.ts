import type { Command } from "commander";

/** `valarmind undo` and `valarmind redo`: options only; the work is imported lazily from ../actions/undo.ts. */
export function registerUndo(program: Command): void {
  for (const action of ["undo", "redo"] as const) {
    program
      .command(action)
      .description(
        action === "undo"
          ? "give back the files the last turn changed, as they were before it (again: one more turn back)"
          : "write again the files the last undo gave back",
      )
      .option("-s, --session <id>", "the session (an id, unique prefix, or transcript file); default: the latest")
      .option("--force", "overwrite files changed since the turn")
      .action(async (opts: { session?: string; force?: boolean }) => {
        const { runUndo } = await import("../actions/undo.ts");
        process.exitCode = await runUndo(action, { ...(opts.session !== undefined && { session: opts.session }), force: opts.force === true });
      });
  }
}
