import type { Command } from "commander";
import { UsageError } from "../../errors.ts";

export interface TrustOptions {
  revoke?: boolean;
  deny?: boolean;
  list?: boolean;
  status?: boolean;
}

/** `valarmind trust`: decide whether this folder's project settings apply. Options only; the work is imported lazily. */
export function registerTrust(program: Command): void {
  program
    .command("trust")
    .description("trust this workspace: its project settings (.valarmind/config.json) apply; the answer is kept in your config")
    .option("--deny", "do not trust it: ignore its project settings and do not ask again")
    .option("--revoke", "forget the decision: the next interactive chat asks again")
    .option("--status", "show this workspace's decision and what its project settings would change")
    .option("--list", "list every folder you decided on")
    .action(async (opts: TrustOptions) => {
      if ([opts.revoke, opts.deny, opts.list, opts.status].filter(Boolean).length > 1) {
        throw new UsageError("use one of --deny, --revoke, --status and --list at a time");
      }
      const { runTrust } = await import("../actions/trust.ts");
      process.exitCode = await runTrust(opts);
    });
}
