import { describe, expect, test } from "bun:test";
import { TouchedEntities } from "../../src/memory/touched.ts";

describe("TouchedEntities", () => {
  test("finds files and backticked symbols in text, not prose, versions or URLs", () => {
    const t = new TouchedEntities();
    t.observeText("Fix src/parser.ts and ./scripts/build.sh (see README.md). Call `parseLine()` or `Lexer.next`, e.g. v1.2.3 from https://x.dev/a.ts and/or later.", 1);
    expect(t.list("file").map((e) => e.name).sort()).toEqual(["README.md", "scripts/build.sh", "src/parser.ts"]);
    expect(t.list("symbol").map((e) => e.name).sort()).toEqual(["Lexer.next", "parseLine"]);
  });

  test("tool calls count as reads or edits; edited files rank first, then by touches", () => {
    const t = new TouchedEntities();
    t.observeToolCall("read_file", JSON.stringify({ path: "a.ts" }), 1);
    t.observeToolCall("read_file", JSON.stringify({ path: "a.ts" }), 2);
    t.observeToolCall("edit_file", JSON.stringify({ path: "./b.ts", old: "x", new: "y" }), 3);
    t.observeToolCall("grep", "not json", 3);
    expect(t.list("file").map((e) => [e.name, e.reads, e.edits, e.lastTurn])).toEqual([
      ["b.ts", 0, 1, 3],
      ["a.ts", 2, 0, 2],
    ]);
    expect(t.recentFiles(3)).toEqual(["b.ts"]);
    const copy = new TouchedEntities();
    copy.restore(t.snapshot());
    expect(copy.list("file")).toEqual(t.list("file"));
  });
});
