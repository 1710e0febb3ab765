/**
 * What a finished tool call leaves in short-term memory (seed 002: the raw result stays in the
 * transcript, the prompt gets a summary). Short outputs are their own summary. Longer read-like
 * results (a file, search hits, a command's output) enter the token-bounded working set, where
 * the overflow policy decides how long they stay; the window then carries one line pointing at
 * the working-set item, so the same content is never sent twice.
 */
import { posix } from "node:path";
import type { NewWorkingSetItem } from "../memory/working-set.ts";
import type { ToolCallRequest } from "../model/types.ts";
import type { ToolCallOutcome } from "../tools/types.ts";

/** Outputs up to this many bytes are kept whole in the window. */
export const INLINE_OUTPUT_BYTES = 600;

const WORKING_SET_PRIORITY: Record<string, number> = {
  read_file: 0.6,
  run_shell: 0.5,
  grep: 0.4,
  list_files: 0.3,
};

export interface ToolMemory {
  /** What later prompts carry for this call in the conversation window. */
  promptSummary: string;
  /** A working-set item to add, for long read-like results. */
  workingSetItem?: NewWorkingSetItem;
}

/** "./src/a.ts" and "src//a.ts" name the same file as "src/a.ts". */
export function normalizeWorkspacePath(path: string): string {
  const normal = posix.normalize(path.replaceAll("\\", "/"));
  return normal.startsWith("./") ? normal.slice(2) : normal;
}

/** The workspace paths a call's arguments name (keys like path, file, glob). */
export function pathTags(argumentsJson: string): string[] {
  try {
    const args: unknown = JSON.parse(argumentsJson);
    if (typeof args !== "object" || args === null) return [];
    return Object.entries(args)
      .filter(([key, value]) => /path|file|glob/i.test(key) && typeof value === "string" && value !== "")
      .map(([, value]) => normalizeWorkspacePath(String(value)));
  } catch {
    return [];
  }
}

export function toolMemory(call: ToolCallRequest, outcome: ToolCallOutcome): ToolMemory {
  const output = outcome.forModel;
  if (Buffer.byteLength(output, "utf8") <= INLINE_OUTPUT_BYTES) return { promptSummary: output };
  const priority = WORKING_SET_PRIORITY[call.name];
  if (outcome.isError || outcome.denied || priority === undefined) {
    return { promptSummary: `${outcome.summary}\n[full output in the session transcript; not repeated here]` };
  }
  const source = `${call.name} ${outcome.target}`.trim();
  return {
    promptSummary: `${outcome.summary}\n[output kept in the working set as "${source}" while it stays relevant; re-run the tool if it is gone]`,
    workingSetItem: { content: output, source, priority, tags: pathTags(call.arguments) },
  };
}
