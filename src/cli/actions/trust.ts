/** `valarmind trust`: store, forget, show or list folder-trust decisions (docs/security.md). */
import { relative } from "node:path";
import { listTrust, storeTrust, trustFilePath } from "../../config/folder-trust.ts";
import { resolveSettings } from "../../config/load-settings.ts";
import { findWorkspaceRoot } from "../../config/paths.ts";
import type { TrustOptions } from "../commands/trust.ts";
import { changeWarning, decideTrust, shownSetting } from "./workspace-trust.ts";

/** What the project config changes, one line each (or why there is nothing to change). */
function projectLines(root: string): string[] {
  const { project } = resolveSettings(root, {}, { trusted: true });
  if (!project) return ["no project settings (.valarmind/config.json): trust changes nothing today"];
  if (project.changes.length === 0) return [`${relative(root, project.file)} changes nothing from your own settings`];
  return [
    `${relative(root, project.file)} changes:`,
    ...project.changes.map((c) => {
      const warning = changeWarning(c);
      return `  ${c.key}: ${c.from === undefined ? "(unset)" : shownSetting(c.key, c.from)} → ${shownSetting(c.key, c.to)}${warning ? ` (${warning})` : ""}${c.narrows ? " (narrows: applies even untrusted)" : ""}`;
    }),
  ];
}

export async function runTrust(opts: TrustOptions): Promise<number> {
  const write = (lines: string[]) => process.stdout.write(`${lines.join("\n")}\n`);
  if (opts.list) {
    const all = listTrust();
    write(all.length === 0 ? [`no decisions yet (${trustFilePath()})`] : all.map((e) => `${e.trust.padEnd(9)} ${e.root}  (${e.decidedAt})`));
    return 0;
  }
  const root = findWorkspaceRoot();
  if (opts.status) {
    const decision = decideTrust(root, undefined);
    write([`${root}: ${decision.stored ?? "not decided (untrusted; an interactive chat will ask)"}`, ...projectLines(root)]);
    return 0;
  }
  if (opts.revoke) {
    await storeTrust(root, undefined);
    write([`forgot the decision for ${root}: its project settings are ignored and the next interactive chat asks again`]);
    return 0;
  }
  const level = opts.deny ? "untrusted" : "trusted";
  // Read first: a project file that cannot be read is an error before any decision is stored (a
  // script taking the exit code for "not trusted" must be right).
  const lines = projectLines(root);
  await storeTrust(root, level);
  write([level === "trusted" ? `trusted ${root}: its project settings apply` : `not trusting ${root}: its project settings are ignored (a narrower approval mode still applies)`, ...lines]);
  return 0;
}
