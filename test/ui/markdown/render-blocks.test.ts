import { describe, expect, test } from "bun:test";
import { renderMarkdown } from "../../../src/ui/markdown/render-blocks.ts";
import { createTheme, plainTheme } from "../../../src/ui/theme.ts";

const render = (source: string, width = 60) => renderMarkdown(source, width, plainTheme);

describe("renderMarkdown", () => {
  test("headings, paragraphs and blank lines between blocks", () => {
    expect(render("# Title\n\nSome text.\n\n## Sub")).toEqual(["Title", "", "Some text.", "", "Sub"]);
  });

  test("bullet, ordered and nested lists with hanging indent", () => {
    expect(render("- one\n- two\n  - nested\n\n3. c\n4. d")).toEqual([
      "• one",
      "• two",
      "  • nested",
      "",
      "3. c",
      "4. d",
    ]);
  });

  test("long list items wrap under their text, not under the bullet", () => {
    const lines = render("- " + "word ".repeat(8).trim(), 20);
    expect(lines[0]?.startsWith("• word")).toBe(true);
    expect(lines.slice(1).every((line) => line.startsWith("  "))).toBe(true);
  });

  test("code blocks keep their lines and show the language", () => {
    expect(render("```ts\nconst a = 1;\n  indented();\n```")).toEqual(["╭ ts", "│ const a = 1;", "│   indented();"]);
  });

  test("an unterminated code fence still renders as code (streaming)", () => {
    expect(render("```\nline one\nline tw")).toEqual(["│ line one", "│ line tw"]);
  });

  test("inline code keeps backticks without color; links show their target", () => {
    expect(render("Use `bun test` and [docs](https://x.dev)")).toEqual(["Use `bun test` and docs (https://x.dev)"]);
  });

  test("entities are decoded and backslash escapes resolved", () => {
    expect(render("a &amp; b \\*not em\\*")).toEqual(["a & b *not em*"]);
  });

  test("tables align their columns", () => {
    expect(render("| a | bb |\n|---|---|\n| 1 | 2 |")).toEqual(["a │ bb", "──┼───", "1 │ 2 "]);
  });

  test("bold is bold and headings are colored when the terminal has color", () => {
    const theme = createTheme({ level: 1, color: true });
    const [line] = renderMarkdown("**strong**", 40, theme);
    expect(line).toBe("\u001b[1mstrong\u001b[22m");
    const [heading] = renderMarkdown("## H", 40, theme);
    expect(heading).toContain("\u001b[35m");
  });

  test("NO_COLOR keeps attributes but emits no color codes", () => {
    const theme = createTheme({ level: 3, color: false });
    const lines = renderMarkdown("# T\n\n**b** `c` [l](http://u)\n\n```\nx\n```", 40, theme).join("\n");
    expect(lines).toContain("\u001b[1m");
    // SGR color parameters: 30-37, 38;…, 39, 40-47, 90-97, 100-107.
    expect(/\u001b\[(3\d|4\d|9\d|10\d)(;\d+)*m/.test(lines)).toBe(false);
  });

  test("text wraps to the width", () => {
    const lines = render("aaaa bbbb cccc dddd eeee", 12);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.every((line) => line.length <= 12)).toBe(true);
  });
});
