/**
 * Shared by edit_file and write_file: reading the current text of a file as a mutating tool sees
 * it, and applying a planned change only if the file still holds what the plan was computed from
 * (the user approved that diff, not another).
 */
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { looksBinary, READ_FILE_LIMITS } from "./read-file.ts";
import type { ToolResult } from "./types.ts";

export type CurrentText = { exists: false } | { exists: true; text: string } | { exists: true; problem: string };

export async function currentText(abs: string, rel: string): Promise<CurrentText> {
  let info;
  try {
    info = await stat(abs);
  } catch {
    return { exists: false };
  }
  if (info.isDirectory()) return { exists: true, problem: `${rel} is a directory` };
  if (info.size > READ_FILE_LIMITS.maxBytes) return { exists: true, problem: `${rel} is ${info.size} bytes, too large to edit with this tool` };
  const bytes = await readFile(abs);
  if (looksBinary(bytes)) return { exists: true, problem: `${rel} is a binary file` };
  return { exists: true, text: bytes.toString("utf8") };
}

export function toolError(forModel: string, summary: string): ToolResult {
  return { forModel: `Error: ${forModel}`, summary, isError: true };
}

/** Writes `after` unless the file no longer holds `before` (undefined: must still not exist). */
export async function applyPlannedText(abs: string, rel: string, before: string | undefined, after: string): Promise<ToolResult | undefined> {
  const now = await currentText(abs, rel);
  const unchanged = before === undefined ? !now.exists : now.exists && "text" in now && now.text === before;
  if (!unchanged) {
    return toolError(`${rel} changed on disk after this change was prepared; nothing was written. Read it again and redo the change.`, `${rel}: changed meanwhile, not written`);
  }
  await mkdir(dirname(abs), { recursive: true });
  await writeFile(abs, after, "utf8");
  return undefined;
}
