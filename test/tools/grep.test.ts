import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createGrepTool } from "../../src/tools/grep.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

const rg = Bun.which("rg");

function workspace(): string {
  const root = makeWorkspace({
    ".gitignore": "dist/\n",
    "src/a.ts": "export const port = 8080;\nconst Port = 1;\n// port again\n",
    "src/b.ts": "import { port } from './a';\n",
    "src/deep/c.md": "The PORT is documented here.\n",
    "dist/a.js": "const port = 8080;\n",
    "node_modules/x/index.js": "port\n",
    ".github/ci.yml": "port: 1\n",
    "a-b.txt": "port in a-b\n",
    "crlf.txt": "port\r\n",
  });
  writeFileSync(join(root, "bin.dat"), Buffer.from("port\0\0binary"));
  return root;
}

// The same behaviour is required of both back ends: every case runs against each.
const backends: Array<[string, { forceFallback?: boolean }]> = [["js fallback", { forceFallback: true }]];
if (rg) backends.push(["ripgrep", {}]);

for (const [label, grepOptions] of backends) {
  describe(`grep (${label})`, () => {
    const registry = (root: string) => registryFor(root, { grep: grepOptions });

    test("finds matching lines as path:line: text, sorted, skipping ignored, binary and always-skipped files", async () => {
      const outcome = await call(registry(workspace()), "grep", { pattern: "port" });
      expect(outcome.forModel.split("\n")).toEqual([
        ".github/ci.yml:1: port: 1",
        "a-b.txt:1: port in a-b",
        "crlf.txt:1: port",
        "src/a.ts:1: export const port = 8080;",
        "src/a.ts:3: // port again",
        "src/b.ts:1: import { port } from './a';",
      ]);
      expect(outcome.summary).toBe("grep /port/ under .: 6 matches in 5 files");
    });

    test("case-insensitive and regex patterns", async () => {
      const root = workspace();
      const ci = await call(registry(root), "grep", { pattern: "port\\b", case_insensitive: true, path: "src" });
      expect(ci.forModel.split("\n")).toEqual([
        "src/a.ts:1: export const port = 8080;",
        "src/a.ts:2: const Port = 1;",
        "src/a.ts:3: // port again",
        "src/b.ts:1: import { port } from './a';",
        "src/deep/c.md:1: The PORT is documented here.",
      ]);
      const regex = await call(registry(root), "grep", { pattern: "^const \\w+ = \\d+;$", path: "src" });
      expect(regex.forModel).toBe("src/a.ts:2: const Port = 1;");
    });

    test("literal patterns, glob filters and a single file as path", async () => {
      const root = makeWorkspace({ "a.ts": "x = a.b(c)\nx = aXb(c)\n", "sub/b.ts": "a.b(c)\n", "sub/c.md": "a.b(c)\n" });
      expect((await call(registry(root), "grep", { pattern: "a.b(c)", literal: true })).forModel.split("\n")).toEqual([
        "a.ts:1: x = a.b(c)",
        "sub/b.ts:1: a.b(c)",
        "sub/c.md:1: a.b(c)",
      ]);
      expect((await call(registry(root), "grep", { pattern: "a.b", glob: "*.md" })).forModel).toBe("sub/c.md:1: a.b(c)");
      expect((await call(registry(root), "grep", { pattern: "a.b", glob: "sub/*.ts" })).forModel).toBe("sub/b.ts:1: a.b(c)");
      expect((await call(registry(root), "grep", { pattern: "aXb", path: "a.ts" })).forModel).toBe("a.ts:2: x = aXb(c)");
    });

    test("caps the matches and reports the totals", async () => {
      const root = makeWorkspace({ "a.txt": Array.from({ length: 30 }, (_, i) => `hit ${i}`).join("\n") });
      const outcome = await call(registry(root), "grep", { pattern: "hit", max_results: 3 });
      expect(outcome.forModel).toBe("a.txt:1: hit 0\na.txt:2: hit 1\na.txt:3: hit 2\n(30 matching lines in 1 file; showing the first 3 — narrow with path, glob or a more specific pattern)");
    });

    test("no matches, an invalid regex and a missing path are clear", async () => {
      const root = workspace();
      expect((await call(registry(root), "grep", { pattern: "zebra" })).forModel).toBe("No matches for /zebra/ under ..");
      const bad = await call(registry(root), "grep", { pattern: "(unclosed" });
      expect(bad.isError).toBe(true);
      expect(bad.forModel).toMatch(/^Error: invalid regular expression \/\(unclosed\//);
      const missing = await call(registry(root), "grep", { pattern: "x", path: "nope" });
      expect(missing.isError).toBe(true);
      expect(missing.forModel).toBe("Error: nope does not exist.");
    });
  });
}

describe("grep back-end choice", () => {
  test("forceFallback ignores an rg on PATH; a given rgPath is used", async () => {
    const root = makeWorkspace({ "a.txt": "x\n" });
    // A fake rg that fails loudly proves which back end ran.
    writeFileSync(join(root, "fake-rg"), "#!/bin/sh\necho 'fake rg ran' >&2\nexit 2\n", { mode: 0o755 });
    const viaFake = await call(registryFor(root, { tools: [createGrepTool({ rgPath: join(root, "fake-rg") })] }), "grep", { pattern: "x" });
    expect(viaFake.forModel).toMatch(/ripgrep failed: fake rg ran/);
    const fallback = await call(registryFor(root, { tools: [createGrepTool({ rgPath: join(root, "fake-rg"), forceFallback: true })] }), "grep", { pattern: "x", path: "a.txt" });
    expect(fallback.forModel).toBe("a.txt:1: x");
  });
});
