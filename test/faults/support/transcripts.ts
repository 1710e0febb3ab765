/**
 * Reading every transcript of a workspace as raw lines, for fault tests: they must see what is on
 * disk even when the reader would skip it, so they parse lines themselves instead of readSession.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { workspacePaths } from "../../../src/config/paths.ts";

/** Every parseable record line of every `.jsonl` under `.valarmind/sessions/` (side files included). */
export function allRecordLines(root: string): Array<Record<string, unknown>> {
  const dir = workspacePaths(root).sessionsDir;
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".jsonl"));
  } catch {
    return [];
  }
  return names.flatMap((name) =>
    readFileSync(join(dir, name), "utf8")
      .split("\n")
      .flatMap((line) => {
        try {
          const value: unknown = JSON.parse(line);
          return typeof value === "object" && value !== null ? [value as Record<string, unknown>] : [];
        } catch {
          return [];
        }
      }),
  );
}

/** The text of every `user` record in any transcript of the workspace. */
export function allUserMessages(root: string): string[] {
  return allRecordLines(root)
    .filter((r) => r.kind === "user" && typeof r.text === "string")
    .map((r) => String(r.text));
}
