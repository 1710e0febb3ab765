import type { Command } from "commander";

/** `valarmind store push|pull`: options only; the work is imported lazily from ./store-transfer.ts. */
export function registerStore(program: Command): void {
  const store = program.command("store").description("copy the working state between .valarmind/memory/state.json and a shared Redis/Valkey store");
  for (const direction of ["push", "pull"] as const) {
    store
      .command(direction)
      .description(direction === "push" ? "copy the local state.json to the server" : "copy the server's state to the local state.json")
      .option("--force", "overwrite a target that differs (or is newer)")
      .option("--url <url>", "the server (default: the 'store' setting or VALARMIND_STORE)")
      .action(async (opts: { force?: boolean; url?: string }) => {
        const { runStorePush, runStorePull } = await import("./store-transfer.ts");
        const run = direction === "push" ? runStorePush : runStorePull;
        process.stdout.write(`${await run({ force: opts.force === true, ...(opts.url !== undefined && { url: opts.url }) })}\n`);
      });
  }
}
