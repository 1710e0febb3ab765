/**
 * Shared by edit_file and write_file: reading the current text of a file as a mutating tool sees
 * it, and applying a planned change only if the file still holds what the plan was computed from
 * (the user approved that diff, not another), opened again at the moment of writing
 * (confined-file.ts) so nothing can redirect it.
 */
import { ConfinedWriteError, readConfined, writeConfined } from "./confined-file.ts";
import { looksBinary, READ_FILE_LIMITS, utf16Bom } from "./read-file.ts";
import type { ToolResult } from "./types.ts";

export type CurrentText =
  | { exists: false }
  | { exists: true; text: string; links: number }
  | { exists: true; problem: string }
  /** The file system refused to open it (EACCES, EPERM): the user can fix that, not the model. */
  | { exists: true; denied: string };

export async function currentText(abs: string, rel: string): Promise<CurrentText> {
  const read = await readConfined(abs, rel, READ_FILE_LIMITS.maxBytes);
  if (!read.ok) {
    if (read.reason === "missing") return { exists: false };
    if (read.reason === "permission") return { exists: true, denied: read.problem };
    if (read.reason === "too_large") return { exists: true, problem: `${rel} is ${read.size} bytes, too large to edit with this tool` };
    return { exists: true, problem: read.problem };
  }
  const encoding = utf16Bom(read.bytes);
  if (encoding) return { exists: true, problem: `${rel} is ${encoding} text; edited as UTF-8 it would be rewritten in another encoding. Convert it (iconv -f ${encoding} -t UTF-8) with run_shell first, or edit it there` };
  if (looksBinary(read.bytes)) return { exists: true, problem: `${rel} is a binary file` };
  const text = read.bytes.toString("utf8");
  // Bytes that are not UTF-8 (Latin-1, Windows-1252) decode to U+FFFD: written back, every such
  // character would be replaced, in lines the diff shows as unchanged.
  if (!Buffer.from(text, "utf8").equals(read.bytes)) {
    return { exists: true, problem: `${rel} is not valid UTF-8 (Latin-1 or another encoding?); rewritten it would lose the characters it cannot show. Convert it (iconv -f LATIN1 -t UTF-8) or edit it with run_shell (sed)` };
  }
  return { exists: true, text, links: read.links };
}

export function toolError(forModel: string, summary: string): ToolResult {
  return { forModel: `Error: ${forModel}`, summary, isError: true };
}

/**
 * Writes `after` to `rel` (under the real workspace root) unless the file no longer holds
 * `before` (undefined: must still not exist) or was redirected; `approvedLinks` is the hard-link
 * count the approval covered.
 */
export async function applyPlannedText(root: string, rel: string, before: string | undefined, after: string, approvedLinks = 1): Promise<ToolResult | undefined> {
  try {
    await writeConfined(root, rel, { before, after, approvedLinks });
    return undefined;
  } catch (error) {
    if (error instanceof ConfinedWriteError) return toolError(error.message, `${rel}: not written (${error.message.split(";")[0]})`);
    throw error;
  }
}
