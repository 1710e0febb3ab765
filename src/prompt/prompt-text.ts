/**
 * Prompt text lives in `src/prompt/text/*.md`, imported as text so the single executable carries it
 * (docs/adr/0080-package-and-single-binary.md); each is trimmed once, on first use.
 */
import attachmentNote from "./text/attachment-note.md" with { type: "text" };
import coreRules from "./text/core-rules.md" with { type: "text" };
import foldRules from "./text/fold-rules.md" with { type: "text" };
import messageCutNote from "./text/message-cut-note.md" with { type: "text" };
import pipedInputNote from "./text/piped-input-note.md" with { type: "text" };
import promotionRules from "./text/promotion-rules.md" with { type: "text" };
import summaryRules from "./text/summary-rules.md" with { type: "text" };
import summaryTask from "./text/summary-task.md" with { type: "text" };

export type PromptTextName = "core-rules" | "fold-rules" | "summary-rules" | "summary-task" | "promotion-rules" | "message-cut-note" | "piped-input-note" | "attachment-note";

/** Every file in `text/`, by name (test/package/embedded-text.test.ts fails when one is left out). */
export const PROMPT_TEXTS: Readonly<Record<PromptTextName, string>> = {
  "core-rules": coreRules,
  "fold-rules": foldRules,
  "summary-rules": summaryRules,
  "summary-task": summaryTask,
  "promotion-rules": promotionRules,
  "message-cut-note": messageCutNote,
  "piped-input-note": pipedInputNote,
  "attachment-note": attachmentNote,
};

const loaded = new Map<PromptTextName, string>();

export function promptText(name: PromptTextName): string {
  let text = loaded.get(name);
  if (text === undefined) {
    text = PROMPT_TEXTS[name].trim();
    loaded.set(name, text);
  }
  return text;
}
