import { afterAll, describe, expect, test } from "bun:test";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

function workspace(): string {
  return makeWorkspace({
    ".gitignore": "dist/\n*.log\n!keep.log\n",
    "src/a.ts": "",
    "src/b.test.ts": "",
    "src/gen/.gitignore": "*.gen.ts\n",
    "src/gen/x.gen.ts": "",
    "src/gen/y.ts": "",
    "dist/out.js": "",
    "debug.log": "",
    "keep.log": "",
    "README.md": "",
    ".github/workflows/ci.yml": "",
    "node_modules/pkg/index.js": "",
    ".git/HEAD": "",
    ".valarmind/memory/state.json": "{}",
  });
}

describe("list_files", () => {
  test("lists files sorted, honouring root and nested .gitignore, skipping .git, node_modules and .valarmind", async () => {
    const outcome = await call(registryFor(workspace()), "list_files", {});
    expect(outcome.forModel.split("\n")).toEqual([
      ".github/workflows/ci.yml",
      ".gitignore",
      "README.md",
      "keep.log",
      "src/a.ts",
      "src/b.test.ts",
      "src/gen/.gitignore",
      "src/gen/y.ts",
    ]);
    expect(outcome.summary).toBe("list .: 8 files");
  });

  test("filters by a name glob (any depth) or a path glob (relative to path)", async () => {
    const registry = registryFor(workspace());
    expect((await call(registry, "list_files", { glob: "*.ts" })).forModel.split("\n")).toEqual(["src/a.ts", "src/b.test.ts", "src/gen/y.ts"]);
    expect((await call(registry, "list_files", { path: "src", glob: "*.test.ts" })).forModel).toBe("src/b.test.ts");
    expect((await call(registry, "list_files", { path: "src", glob: "gen/**" })).forModel.split("\n")).toEqual(["src/gen/.gitignore", "src/gen/y.ts"]);
  });

  test("applies .gitignore files above the listed directory", async () => {
    const root = makeWorkspace({ ".gitignore": "*.tmp\n", "src/a.ts": "", "src/b.tmp": "" });
    expect((await call(registryFor(root), "list_files", { path: "src" })).forModel).toBe("src/a.ts");
  });

  test("caps the listing and says how many files there are", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 12; i++) files[`f${String(i).padStart(2, "0")}.txt`] = "";
    const outcome = await call(registryFor(makeWorkspace(files)), "list_files", { max_results: 5 });
    const out = outcome.forModel.split("\n");
    expect(out.slice(0, 5)).toEqual(["f00.txt", "f01.txt", "f02.txt", "f03.txt", "f04.txt"]);
    expect(out[5]).toBe("(12 files under .; showing the first 5 — narrow with path or glob)");
  });

  test("says so when nothing matches, and when the path is missing", async () => {
    const registry = registryFor(workspace());
    expect((await call(registry, "list_files", { glob: "*.py" })).forModel).toBe("No files matching *.py under . (ignored paths are skipped).");
    const missing = await call(registry, "list_files", { path: "nope" });
    expect(missing.isError).toBe(true);
    expect(missing.forModel).toBe("Error: nope does not exist.");
  });
});
