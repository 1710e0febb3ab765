/**
 * Tool descriptions (and the ADR template) live in `text/<name>.md`, like prompt text, so they can
 * be read and reviewed as prose. They are imported as text so the single executable carries them
 * (docs/adr/0080-package-and-single-binary.md); each is trimmed once per process.
 */
import adrTemplateText from "./text/adr-template.md" with { type: "text" };
import editFileText from "./text/edit_file.md" with { type: "text" };
import grepText from "./text/grep.md" with { type: "text" };
import listFilesText from "./text/list_files.md" with { type: "text" };
import memoryRecordDecisionText from "./text/memory_record_decision.md" with { type: "text" };
import memorySetConventionText from "./text/memory_set_convention.md" with { type: "text" };
import memorySetGoalText from "./text/memory_set_goal.md" with { type: "text" };
import memorySetNowText from "./text/memory_set_now.md" with { type: "text" };
import memoryTaskText from "./text/memory_task.md" with { type: "text" };
import readFileText from "./text/read_file.md" with { type: "text" };
import recallTurnText from "./text/recall_turn.md" with { type: "text" };
import runShellText from "./text/run_shell.md" with { type: "text" };
import writeFileText from "./text/write_file.md" with { type: "text" };

/** Every file in `text/`, by name (test/package/embedded-text.test.ts fails when one is left out). */
export const TOOL_TEXTS = {
  "adr-template": adrTemplateText,
  edit_file: editFileText,
  grep: grepText,
  list_files: listFilesText,
  memory_record_decision: memoryRecordDecisionText,
  memory_set_convention: memorySetConventionText,
  memory_set_goal: memorySetGoalText,
  memory_set_now: memorySetNowText,
  memory_task: memoryTaskText,
  read_file: readFileText,
  recall_turn: recallTurnText,
  run_shell: runShellText,
  write_file: writeFileText,
} as const satisfies Record<string, string>;

export type ToolTextName = keyof typeof TOOL_TEXTS;

const loaded = new Map<ToolTextName, string>();

export function toolText(name: ToolTextName): string {
  const hit = loaded.get(name);
  if (hit !== undefined) return hit;
  const text = TOOL_TEXTS[name].trim();
  loaded.set(name, text);
  return text;
}
