/**
 * Prompt texts and tool descriptions are imported as text (so the single executable carries them):
 * every file in their `text/` folders must be in the table, with the file's own text.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { PROMPT_TEXTS, promptText, type PromptTextName } from "../../src/prompt/prompt-text.ts";
import { TOOL_TEXTS, toolText, type ToolTextName } from "../../src/tools/descriptions.ts";

const SRC = resolve(import.meta.dir, "../../src");

function markdownFiles(dir: string): Map<string, string> {
  const files = readdirSync(dir).filter((name) => name.endsWith(".md"));
  return new Map(files.map((name) => [name.slice(0, -".md".length), readFileSync(join(dir, name), "utf8")]));
}

describe("embedded text", () => {
  test("every src/prompt/text/*.md is a prompt text, with the file's content", () => {
    const files = markdownFiles(join(SRC, "prompt/text"));
    expect(Object.keys(PROMPT_TEXTS).sort()).toEqual([...files.keys()].sort());
    for (const [name, text] of files) {
      expect(PROMPT_TEXTS[name as PromptTextName]).toBe(text);
      expect(promptText(name as PromptTextName)).toBe(text.trim());
    }
  });

  test("every src/tools/text/*.md is a tool text, with the file's content", () => {
    const files = markdownFiles(join(SRC, "tools/text"));
    expect(Object.keys(TOOL_TEXTS).sort()).toEqual([...files.keys()].sort());
    for (const [name, text] of files) {
      expect(TOOL_TEXTS[name as ToolTextName]).toBe(text);
      expect(toolText(name as ToolTextName)).toBe(text.trim());
    }
  });
});
