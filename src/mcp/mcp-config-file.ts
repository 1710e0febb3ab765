/**
 * `valarmind mcp add|remove` edit a settings file (the user's config.json, or the project's
 * `.valarmind/config.json`): read and validated like any settings layer (an invalid file is never
 * rewritten), changed under the file's lock, written atomically (0600). Every other setting in
 * the file is kept as it was.
 */
import { existsSync } from "node:fs";
import { sep } from "node:path";
import { linkTarget } from "../config/link-target.ts";
import { userConfigDir } from "../config/user-config-dir.ts";
import { readLayer } from "../config/load-settings.ts";
import type { PartialSettings } from "../config/settings-schema.ts";
import { UsageError } from "../errors.ts";
import { writeFileAtomic } from "../state/atomic-write.ts";
import { acquireLock } from "../state/lock.ts";
import { mcpConfigProblem } from "./mcp-config.ts";

/**
 * Applies `change` to the settings in `file` (an empty object when the file does not exist) and
 * writes the result, if `change` returned one; `makeDir` creates the file's directory first.
 */
export async function editSettingsFile(
  shown: string,
  makeDir: () => void,
  change: (settings: PartialSettings) => PartialSettings | undefined,
  options: { mendsMcp?: boolean } = {},
): Promise<void> {
  makeDir();
  // A config kept in a dotfiles folder and linked here is written where it lives: replacing the
  // link with a file would leave the dotfiles copy stale and unlinked.
  // Only the user's own: a project's .valarmind/config.json is a clone's, and its link may lead out of the workspace.
  const file = shown.startsWith(userConfigDir() + sep) ? linkTarget(shown) : shown;
  const lock = await acquireLock(file);
  try {
    // `mcp remove` reads a file whose MCP entries are broken (the hint for them names it); what it writes is checked below.
    const current = existsSync(file) ? readLayer(file, { checkMcp: options.mendsMcp !== true }) : {};
    const next = change(structuredClone(current));
    if (next === undefined) return;
    const problem = mcpConfigProblem(shown, next);
    if (problem) throw new UsageError(problem, { hint: "Nothing was written; see docs/mcp.md." });
    if (lock.compromised()) throw new UsageError(`${shown}: another valarmind process took the lock; nothing was written`, { hint: "Run the command again." });
    await writeFileAtomic(file, `${JSON.stringify(next, null, 2)}\n`);
  } finally {
    await lock.release();
  }
}
