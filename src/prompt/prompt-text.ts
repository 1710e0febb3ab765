/** Prompt text lives in `src/prompt/text/*.md`; each file is read once, on first use. */
import { readFileSync } from "node:fs";

export type PromptTextName = "core-rules" | "summary-rules" | "summary-task" | "title-rules" | "promotion-rules" | "message-cut-note";

const loaded = new Map<PromptTextName, string>();

export function promptText(name: PromptTextName): string {
  let text = loaded.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(`./text/${name}.md`, import.meta.url), "utf8").trim();
    loaded.set(name, text);
  }
  return text;
}
