import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

const read = (root: string, rel: string): string => readFileSync(join(root, rel), "utf8");

describe("edit_file", () => {
  test("replaces a unique match and returns a unified diff", async () => {
    const root = makeWorkspace({ "src/a.ts": "const a = 1;\nconst b = 2;\nconst c = 3;\n" });
    const outcome = await call(registryFor(root), "edit_file", { path: "src/a.ts", old_string: "const b = 2;", new_string: "const b = 20;" });
    expect(outcome.isError).toBe(false);
    expect(read(root, "src/a.ts")).toBe("const a = 1;\nconst b = 20;\nconst c = 3;\n");
    expect(outcome.forModel).toBe("Edited src/a.ts: 1 replacement at line 2 (+1 −1 lines).");
    expect(outcome.summary).toBe("edited src/a.ts (+1 −1)");
    expect(outcome.diff).toBe(
      "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n const a = 1;\n-const b = 2;\n+const b = 20;\n const c = 3;\n",
    );
  });

  test("zero matches: nothing changes and the error says so, with a whitespace hint", async () => {
    const root = makeWorkspace({ "a.py": "def f():\n    return 1\n" });
    const outcome = await call(registryFor(root), "edit_file", { path: "a.py", old_string: "\treturn 1", new_string: "\treturn 2" });
    expect(outcome.isError).toBe(true);
    expect(outcome.forModel).toBe(
      "Error: old_string was not found in a.py (0 matches); nothing was changed. Its first line appears at line 2 with different indentation or surrounding text; read the file and copy the text exactly.",
    );
    expect(read(root, "a.py")).toBe("def f():\n    return 1\n");
  });

  test("several matches: refused with the count and line numbers unless replace_all", async () => {
    const root = makeWorkspace({ "a.txt": "x = 1\ny\nx = 1\nz\nx = 1\n" });
    const registry = registryFor(root);
    const refused = await call(registry, "edit_file", { path: "a.txt", old_string: "x = 1", new_string: "x = 2" });
    expect(refused.isError).toBe(true);
    expect(refused.forModel).toBe(
      "Error: old_string matches 3 times in a.txt (at lines 1, 3, 5); nothing was changed. Include more surrounding lines to make it unique, or set replace_all: true to change every occurrence.",
    );
    expect(read(root, "a.txt")).toBe("x = 1\ny\nx = 1\nz\nx = 1\n");
    const all = await call(registry, "edit_file", { path: "a.txt", old_string: "x = 1", new_string: "x = 2", replace_all: true });
    expect(all.forModel).toBe("Edited a.txt: 3 replacements at lines 1, 3, 5 (+3 −3 lines).");
    expect(read(root, "a.txt")).toBe("x = 2\ny\nx = 2\nz\nx = 2\n");
  });

  test("replacement text with $ patterns is inserted literally", async () => {
    const root = makeWorkspace({ "a.txt": "price\n" });
    await call(registryFor(root), "edit_file", { path: "a.txt", old_string: "price", new_string: "$& $1 $$" });
    expect(read(root, "a.txt")).toBe("$& $1 $$\n");
  });

  test("matches LF old_string in a CRLF file and keeps CRLF endings", async () => {
    const root = makeWorkspace({ "w.txt": "one\r\ntwo\r\nthree\r\n" });
    const outcome = await call(registryFor(root), "edit_file", { path: "w.txt", old_string: "one\ntwo", new_string: "one\n2" });
    expect(outcome.isError).toBe(false);
    expect(read(root, "w.txt")).toBe("one\r\n2\r\nthree\r\n");
  });

  test("empty or identical strings, missing files and directories are errors", async () => {
    const root = makeWorkspace({ "a.txt": "a\n", "d/x": "" });
    const registry = registryFor(root);
    expect((await call(registry, "edit_file", { path: "a.txt", old_string: "", new_string: "b" })).forModel).toMatch(/old_string is empty.*write_file/);
    expect((await call(registry, "edit_file", { path: "a.txt", old_string: "a", new_string: "a" })).forModel).toMatch(/identical/);
    expect((await call(registry, "edit_file", { path: "b.txt", old_string: "a", new_string: "b" })).forModel).toMatch(/b\.txt does not exist\. Use write_file/);
    expect((await call(registry, "edit_file", { path: "d", old_string: "a", new_string: "b" })).forModel).toMatch(/d is a directory/);
  });
});

describe("write_file", () => {
  test("creates a file and its parent directories, with a diff from /dev/null", async () => {
    const root = makeWorkspace();
    const outcome = await call(registryFor(root), "write_file", { path: "deep/new/file.txt", content: "hello\nworld\n" });
    expect(outcome.isError).toBe(false);
    expect(read(root, "deep/new/file.txt")).toBe("hello\nworld\n");
    expect(outcome.forModel).toBe("Created deep/new/file.txt (2 lines).");
    expect(outcome.diff).toBe("--- /dev/null\n+++ b/deep/new/file.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n");
  });

  test("overwrites with a diff against the old content; identical content is not rewritten", async () => {
    const root = makeWorkspace({ "a.txt": "old\nsame\n" });
    const registry = registryFor(root);
    const outcome = await call(registry, "write_file", { path: "a.txt", content: "new\nsame\n" });
    expect(outcome.forModel).toBe("Overwrote a.txt (+1 −1 lines).");
    expect(outcome.diff).toContain("-old\n+new\n same\n");
    const again = await call(registry, "write_file", { path: "a.txt", content: "new\nsame\n" });
    expect(again.forModel).toBe("a.txt already has exactly this content; nothing was written.");
  });

  test("refuses directories, binary files and valarmind's own state", async () => {
    const root = makeWorkspace({ "d/x": "", ".valarmind/memory/state.json": "{}" });
    const registry = registryFor(root);
    expect((await call(registry, "write_file", { path: "d", content: "x" })).forModel).toMatch(/d is a directory/);
    const state = await call(registry, "write_file", { path: ".valarmind/memory/state.json", content: "{}" });
    expect(state.isError).toBe(true);
    expect(state.forModel).toMatch(/inside \.valarmind\/.*memory_\* tools/);
  });
});
