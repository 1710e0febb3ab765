/**
 * One confinement for everything that reaches a prompt or the disk: reads and instruction files
 * refuse FIFOs, sockets and symlinks that leave the workspace; a file with several hard links is
 * neither read nor written without asking; an approved write is resolved again when it happens,
 * so a directory swapped for a symlink during the prompt cannot redirect it; `.git/` and
 * `.valarmind/` are protected at any depth and in any case; in auto-edit, writes to instruction
 * files, git hooks and CI workflows still ask.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ApprovalDecision } from "../../src/agent/events.ts";
import { readInstructionFiles } from "../../src/prompt/instruction-files.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import type { ApprovalMode, ApprovalRequest } from "../../src/tools/approvals.ts";
import { call, makeOutsideDir, makeWorkspace, registryFor, removeWorkspaces } from "../tools/temp-workspace.ts";

afterAll(removeWorkspaces);

function mkfifo(path: string): void {
  const made = Bun.spawnSync(["mkfifo", path]);
  if (made.exitCode !== 0) throw new Error(`mkfifo ${path} failed: ${made.stderr.toString()}`);
}

function registry(root: string, mode: ApprovalMode, answer?: (r: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>) {
  const asked: ApprovalRequest[] = [];
  const reg = registryFor(root, {
    settings: { approvals: mode, toolOutputTokens: 100_000, shellTimeoutMs: 10_000 },
    interactive: answer !== undefined,
    ...(answer
      ? {
          ask: async (request: ApprovalRequest) => {
            asked.push(request);
            return answer(request);
          },
        }
      : {}),
  });
  return { reg, asked };
}

describe("reads", () => {
  test("read_file and grep refuse a FIFO at once instead of blocking; list_files does not open it", async () => {
    const root = makeWorkspace({ "a.txt": "hello\n" });
    mkfifo(join(root, "pipe"));
    const { reg } = registry(root, "suggest");
    const read = await call(reg, "read_file", { path: "pipe" });
    expect(read.isError).toBe(true);
    expect(read.forModel).toContain("is a FIFO (named pipe), not a regular file");
    const grep = await call(reg, "grep", { pattern: "x", path: "pipe" });
    expect(grep.forModel).toContain("not a regular file");
    const list = await call(reg, "list_files", { path: "pipe" });
    expect(list.forModel).toContain("not a directory");
    const all = await call(reg, "grep", { pattern: "hello" });
    expect(all.forModel).toContain("a.txt:1:");
  });

  test("read_file refuses a socket", async () => {
    const root = makeWorkspace();
    const socketPath = join(root, "sock");
    const listener = Bun.listen({ unix: socketPath, socket: { data() {} } });
    try {
      const { reg } = registry(root, "full-auto");
      const read = await call(reg, "read_file", { path: "sock" });
      expect(read.forModel).toContain("is a socket");
    } finally {
      listener.stop(true);
    }
  });

  test("a hard link to a file outside is not read without asking; grep skips it", async () => {
    const outside = makeOutsideDir({ "secret.txt": "OUTSIDE-SECRET\n" });
    const root = makeWorkspace({ "a.txt": "plain OUTSIDE\n" });
    linkSync(join(outside, "secret.txt"), join(root, "innocent.txt"));

    const headless = registry(root, "auto-edit");
    const refused = await call(headless.reg, "read_file", { path: "innocent.txt" });
    expect(refused.denied).toBe(true);
    expect(refused.forModel).not.toContain("OUTSIDE-SECRET");
    expect(refused.forModel).toContain("2 hard links");

    const asking = registry(root, "suggest", () => ({ kind: "deny" }));
    await call(asking.reg, "read_file", { path: "innocent.txt" });
    expect(asking.asked).toHaveLength(1);
    expect(JSON.stringify(asking.asked[0])).toContain("2 hard links");

    const grep = await call(headless.reg, "grep", { pattern: "OUTSIDE" });
    expect(grep.forModel).toContain("a.txt:1:");
    expect(grep.forModel).not.toContain("OUTSIDE-SECRET");
    expect(grep.forModel).toContain("skipped 1 file with several hard links");

    const plain = await call(headless.reg, "read_file", { path: "a.txt" });
    expect(plain.denied).toBe(false);
    expect(plain.forModel).toContain("plain OUTSIDE");
  });
});

describe("writes", () => {
  test("a hard link to an outside file is not edited through without an explicit warning", async () => {
    const outside = makeOutsideDir({ "target.txt": "original\n" });
    const root = makeWorkspace();
    linkSync(join(outside, "target.txt"), join(root, "linked.txt"));
    const headless = registry(root, "auto-edit");
    const outcome = await call(headless.reg, "edit_file", { path: "linked.txt", old_string: "original", new_string: "changed" });
    expect(outcome.denied).toBe(true);
    expect(readFileSync(join(outside, "target.txt"), "utf8")).toBe("original\n");
    const asking = registry(root, "auto-edit", () => ({ kind: "deny" }));
    await call(asking.reg, "write_file", { path: "linked.txt", content: "x" });
    expect(JSON.stringify(asking.asked[0])).toContain("2 hard links");
    expect(readFileSync(join(outside, "target.txt"), "utf8")).toBe("original\n");
  });

  test("a directory swapped for a symlink while the user reads the prompt does not redirect the write", async () => {
    const outside = makeOutsideDir({ "config.txt": "outside original\n" });
    const root = makeWorkspace({ "sub/config.txt": "inside original\n" });
    const swap = () => {
      renameSync(join(root, "sub"), join(root, "sub-moved"));
      symlinkSync(outside, join(root, "sub"));
    };
    const edit = registry(root, "suggest", () => {
      swap();
      return { kind: "allow_once" };
    });
    const outcome = await call(edit.reg, "edit_file", { path: "sub/config.txt", old_string: "original", new_string: "pwned" });
    expect(outcome.isError).toBe(true);
    expect(outcome.forModel).toContain("symlink");
    expect(readFileSync(join(outside, "config.txt"), "utf8")).toBe("outside original\n");

    const root2 = makeWorkspace({ "sub/keep.txt": "x\n" });
    const create = registry(root2, "suggest", () => {
      renameSync(join(root2, "sub"), join(root2, "sub-moved"));
      symlinkSync(outside, join(root2, "sub"));
      return { kind: "allow_once" };
    });
    const created = await call(create.reg, "write_file", { path: "sub/new.txt", content: "pwned\n" });
    expect(created.isError).toBe(true);
    expect(existsSync(join(outside, "new.txt"))).toBe(false);
  });

  test("the target itself swapped for a symlink after approval is not followed", async () => {
    const outside = makeOutsideDir({ "victim.txt": "same\n" });
    const root = makeWorkspace({ "a.txt": "same\n" });
    const { reg } = registry(root, "suggest", () => {
      renameSync(join(root, "a.txt"), join(root, "a.bak"));
      symlinkSync(join(outside, "victim.txt"), join(root, "a.txt"));
      return { kind: "allow_once" };
    });
    const outcome = await call(reg, "write_file", { path: "a.txt", content: "pwned\n" });
    expect(outcome.isError).toBe(true);
    expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("same\n");
  });

  test(".git/ and .valarmind/ are protected at any depth and in any letter case", async () => {
    const root = makeWorkspace({ "vendor/lib/.git/config": "[core]\n", "README.md": "x\n" });
    const { reg } = registry(root, "full-auto");
    for (const path of ["vendor/lib/.git/config", ".GIT/hooks/pre-commit", ".Git/config", "sub/.VALARMIND/memory/state.json"]) {
      const outcome = await call(reg, "write_file", { path, content: "pwned\n" });
      expect(outcome.isError).toBe(true);
      expect(outcome.forModel).toContain("which tools may not write");
    }
    expect(readFileSync(join(root, "vendor/lib/.git/config"), "utf8")).toBe("[core]\n");
  });

  test("in auto-edit, instruction files, git hooks and CI workflows still ask; ordinary files do not", async () => {
    const root = makeWorkspace({ "AGENTS.md": "rules\n" });
    const { reg, asked } = registry(root, "auto-edit", () => ({ kind: "deny" }));
    for (const path of ["AGENTS.md", "pkg/CLAUDE.md", "VALARMIND.md", ".husky/pre-commit", ".github/workflows/ci.yml", ".envrc"]) {
      const outcome = await call(reg, "write_file", { path, content: "changed\n" });
      expect(outcome.denied).toBe(true);
    }
    expect(asked.map((a) => JSON.stringify(a))).toHaveLength(6);
    expect(JSON.stringify(asked[3])).toContain("git hook");
    const ordinary = await call(reg, "write_file", { path: "src/a.ts", content: "ok\n" });
    expect(ordinary.denied).toBe(false);
    expect(asked).toHaveLength(6);
    const fullAuto = registry(root, "full-auto");
    expect((await call(fullAuto.reg, "write_file", { path: ".husky/pre-commit", content: "x\n" })).denied).toBe(false);
  });
});

describe("instruction files", () => {
  test("a symlink leaving the workspace, a FIFO, a hard link, a binary or oversized file is refused, never read", async () => {
    const outside = makeOutsideDir({ "notes.md": "OUTSIDE NOTES\n" });
    const cases: Array<[string, (root: string) => void, string]> = [
      ["environ", (root) => symlinkSync("/proc/self/environ", join(root, "VALARMIND.md")), "outside the workspace"],
      ["outside file", (root) => symlinkSync(join(outside, "notes.md"), join(root, "VALARMIND.md")), "outside the workspace"],
      ["fifo", (root) => mkfifo(join(root, "VALARMIND.md")), "FIFO"],
      ["hard link", (root) => linkSync(join(outside, "notes.md"), join(root, "VALARMIND.md")), "hard links"],
      ["binary", (root) => writeFileSync(join(root, "VALARMIND.md"), Buffer.from([0x41, 0, 0x42])), "binary"],
      ["oversized", (root) => writeFileSync(join(root, "VALARMIND.md"), "x".repeat(70 * 1024)), "over the cap"],
    ];
    for (const [name, make, reason] of cases) {
      const root = makeWorkspace();
      make(root);
      const files = await readInstructionFiles(workspacePaths(root));
      expect(files.project, name).toBeUndefined();
      expect(files.refused.map((r) => r.id), name).toEqual(["project_instructions"]);
      expect(files.refused[0]?.reason, name).toContain(reason);
    }
    const root = makeWorkspace({ "VALARMIND.md": "# rules\n", "docs/real.md": "# local rules\n" });
    symlinkSync("docs/real.md", join(root, "VALARMIND.local.md"));
    const fine = await readInstructionFiles(workspacePaths(root));
    expect(fine.project?.text).toBe("# rules\n");
    expect(fine.personal?.text).toBe("# local rules\n");
    expect(fine.refused).toEqual([]);
  });
});
