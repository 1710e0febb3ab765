import type { Command } from "commander";
import { UsageError } from "../../errors.ts";

/** `valarmind compact`: options only; the work is imported lazily from ../actions/compact.ts. */
export function registerCompact(program: Command): void {
  program
    .command("compact")
    .description("project state.json to state.toon for the prompt (round trip checked) and report tokens")
    .option("--json", "print the report as JSON")
    .option("--check", "write nothing; exit 1 when state.toon is missing or stale")
    .option("--max-tokens <n>", "token cap of the projection", "750")
    .action(async (opts: { json?: boolean; check?: boolean; maxTokens: string }) => {
      const maxTokens = Number(opts.maxTokens);
      if (!Number.isInteger(maxTokens) || maxTokens < 1) {
        throw new UsageError(`--max-tokens must be a positive integer, got ${JSON.stringify(opts.maxTokens)}`);
      }
      const { runCompact } = await import("../actions/compact.ts");
      process.exitCode = await runCompact({ json: opts.json === true, check: opts.check === true, maxTokens });
    });
}
