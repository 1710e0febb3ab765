/** `valarmind status`: the workspace's effective setup, offline (docs/cli.md). */
import { resolveSettings } from "../../config/load-settings.ts";
import { findWorkspaceRoot } from "../../config/paths.ts";
import type { StatusOptions } from "../commands/status.ts";
import { gatherStatus } from "../status/gather-status.ts";
import { statusJson, statusLines, statusRows } from "../status/status-report.ts";
import { decideTrust } from "./workspace-trust.ts";
import { jsonForTerminal } from "../../ui/print-json.ts";

export async function runStatus(opts: StatusOptions): Promise<number> {
  const root = findWorkspaceRoot();
  const trust = decideTrust(root, opts.trust === true ? true : undefined);
  const loaded = resolveSettings(root, {}, { trusted: trust.trusted });
  const facts = gatherStatus({ root, loaded, trust });
  process.stdout.write(opts.json ? `${jsonForTerminal(statusJson(facts))}\n` : `${statusLines(statusRows(facts)).join("\n")}\n`);
  return 0;
}
