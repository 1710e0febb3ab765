/**
 * `valarmind mcp add|remove` edit a settings file (the user's config.json, or the project's
 * `.valarmind/config.json`): read and validated like any settings layer (an invalid file is never
 * rewritten), changed under the file's lock, written atomically (0600). Every other setting in
 * the file is kept as it was.
 */
import { existsSync } from "node:fs";
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
export async function editSettingsFile(file: string, makeDir: () => void, change: (settings: PartialSettings) => PartialSettings | undefined): Promise<void> {
  makeDir();
  const lock = await acquireLock(file);
  try {
    const current = existsSync(file) ? readLayer(file) : {};
    const next = change(structuredClone(current));
    if (next === undefined) return;
    const problem = mcpConfigProblem(file, next);
    if (problem) throw new UsageError(problem, { hint: "Nothing was written; see docs/mcp.md." });
    if (lock.compromised()) throw new UsageError(`${file}: another valarmind process took the lock; nothing was written`, { hint: "Run the command again." });
    await writeFileAtomic(file, `${JSON.stringify(next, null, 2)}\n`);
  } finally {
    await lock.release();
  }
}
