import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, existsSync } from "node:fs";
import { join } from "node:path";
import { confinePath, PathEscapeError } from "../../src/tools/confine.ts";
import { call, makeOutsideDir, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

describe("confinePath", () => {
  test("resolves relative and absolute paths inside the root", () => {
    const root = makeWorkspace({ "src/a.ts": "x" });
    expect(confinePath(root, "src/a.ts")).toEqual({ abs: join(root, "src/a.ts"), rel: "src/a.ts" });
    expect(confinePath(root, join(root, "src/a.ts")).rel).toBe("src/a.ts");
    expect(confinePath(root, "src/../src/a.ts").rel).toBe("src/a.ts");
    expect(confinePath(root, ".").rel).toBe(".");
    // A new file's path is allowed (its nearest existing ancestor is inside).
    expect(confinePath(root, "new/dir/file.ts").rel).toBe("new/dir/file.ts");
  });

  test("refuses .. and absolute paths outside the root", () => {
    const root = makeWorkspace();
    expect(() => confinePath(root, "../x")).toThrow(PathEscapeError);
    expect(() => confinePath(root, "src/../../x")).toThrow(/outside the workspace/);
    expect(() => confinePath(root, "/etc/passwd")).toThrow(/outside the workspace/);
    expect(() => confinePath(root, "")).toThrow(/empty/);
  });

  test("refuses symlinks that lead outside, for files, directories and new files below them", () => {
    const outside = makeOutsideDir({ "secret.txt": "s3cret" });
    const root = makeWorkspace({ "ok.txt": "ok" });
    symlinkSync(join(outside, "secret.txt"), join(root, "link.txt"));
    symlinkSync(outside, join(root, "linkdir"));
    expect(() => confinePath(root, "link.txt")).toThrow(/symlink.*outside the workspace/);
    expect(() => confinePath(root, "linkdir/secret.txt")).toThrow(/outside the workspace/);
    expect(() => confinePath(root, "linkdir/new.txt")).toThrow(/outside the workspace/);
  });

  test("allows symlinks that stay inside and refuses dangling ones", () => {
    const root = makeWorkspace({ "real/a.txt": "a" });
    symlinkSync(join(root, "real"), join(root, "alias"));
    symlinkSync(join(root, "missing"), join(root, "dangling"));
    expect(confinePath(root, "alias/a.txt").rel).toBe("real/a.txt");
    expect(() => confinePath(root, "dangling")).toThrow(/target does not exist/);
  });

  test("for writes, refuses .git/ and .valarmind/", () => {
    const root = makeWorkspace({ ".git/config": "", ".valarmind/memory/state.json": "{}" });
    expect(() => confinePath(root, ".git/config", { forWrite: true })).toThrow(/\.git\//);
    expect(() => confinePath(root, ".valarmind/memory/state.json", { forWrite: true })).toThrow(/memory_\* tools/);
    expect(confinePath(root, ".git/config").rel).toBe(".git/config");
  });
});

describe("path escapes through the registry", () => {
  test("every path tool refuses ../, absolute and symlink escapes without touching the outside", async () => {
    const outside = makeOutsideDir({ "secret.txt": "s3cret" });
    const root = makeWorkspace({ "a.txt": "a" });
    mkdirSync(join(root, "sub"));
    symlinkSync(outside, join(root, "sub", "out"));
    const registry = registryFor(root);
    const attempts: Array<[string, Record<string, unknown>]> = [
      ["read_file", { path: "../secret.txt" }],
      ["read_file", { path: join(outside, "secret.txt") }],
      ["read_file", { path: "sub/out/secret.txt" }],
      ["list_files", { path: "sub/out" }],
      ["grep", { pattern: "s3cret", path: "sub/out" }],
      ["write_file", { path: "sub/out/new.txt", content: "x" }],
      ["write_file", { path: "../new.txt", content: "x" }],
      ["edit_file", { path: "sub/out/secret.txt", old_string: "s3cret", new_string: "gone" }],
    ];
    for (const [name, args] of attempts) {
      const outcome = await call(registry, name, args);
      expect(outcome.isError).toBe(true);
      expect(outcome.forModel).toMatch(/outside the workspace/);
      expect(outcome.forModel).not.toContain("s3cret\n");
    }
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("s3cret");
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
  });

  test("grep and list_files do not follow a symlinked directory during a walk", async () => {
    const outside = makeOutsideDir({ "secret.txt": "s3cret" });
    const root = makeWorkspace({ "a.txt": "no secret here" });
    symlinkSync(outside, join(root, "out"));
    const registry = registryFor(root);
    const listed = await call(registry, "list_files", {});
    expect(listed.forModel).not.toContain("secret.txt");
    const found = await call(registry, "grep", { pattern: "s3cret" });
    expect(found.forModel).toMatch(/^No matches/);
  });
});
