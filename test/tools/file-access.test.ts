/**
 * A file the file system refuses reaches the model as "permission denied" (naming the path and that
 * the user can fix it), never as "does not exist".
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileAccessProblem, permissionProblem } from "../../src/tools/file-access-problem.ts";
import { makeWorkspace, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

function fsError(code: string, path?: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: synthetic, open '${path ?? "?"}'`);
  error.code = code;
  if (path !== undefined) error.path = path;
  return error;
}

describe("fileAccessProblem", () => {
  test("EACCES and EPERM say permission denied, name the path and that the user can fix it", () => {
    for (const code of ["EACCES", "EPERM"]) {
      const problem = fileAccessProblem(fsError(code), "src/secret.ts");
      expect(problem?.kind).toBe("permission");
      expect(problem?.message).toContain("permission denied");
      expect(problem?.message).toContain("src/secret.ts");
      expect(problem?.message).toContain("the user can change its permissions");
      expect(problem?.message).not.toContain("does not exist");
    }
  });

  test("ENOENT and ENOTDIR still say does not exist; other errors are not claimed", () => {
    expect(fileAccessProblem(fsError("ENOENT"), "a.txt")).toEqual({ kind: "missing", message: "a.txt does not exist" });
    expect(fileAccessProblem(fsError("ENOTDIR"), "a.txt/b")).toEqual({ kind: "missing", message: "a.txt/b does not exist" });
    expect(fileAccessProblem(fsError("EIO"), "a.txt")).toBeUndefined();
    expect(fileAccessProblem(new Error("no code"), "a.txt")).toBeUndefined();
    expect(fileAccessProblem("a string", "a.txt")).toBeUndefined();
  });

  test("permissionProblem names the refused path relative to the workspace, and only for permission errors", () => {
    expect(permissionProblem(fsError("EACCES", "/work/ws/locked/inner"), "/work/ws")?.message).toContain("access to locked/inner (EACCES)");
    expect(permissionProblem(fsError("ENOENT", "/work/ws/gone"), "/work/ws")).toBeUndefined();
  });
});

/**
 * Root reads any file whatever its mode; with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped
 * (setpriv) the mode bits apply to it too. undefined: no way to be refused here.
 */
function refusableCommand(): string[] | undefined {
  if (process.getuid?.() !== 0) return [];
  const setpriv = Bun.which("setpriv");
  if (!setpriv) return undefined;
  const caps = "-dac_override,-dac_read_search";
  return [setpriv, `--inh-caps=${caps}`, `--bounding-set=${caps}`];
}

const prefix = refusableCommand();

describe.skipIf(prefix === undefined)("file tools on files the file system refuses", () => {
  test("read_file, list_files, grep and write_file say permission denied; missing paths still do not exist", () => {
    const root = makeWorkspace({ "secret.txt": "x marks the spot\n", "locked/inner/a.txt": "x\n" });
    chmodSync(join(root, "secret.txt"), 0o000);
    symlinkSync("locked/inner", join(root, "link"));
    chmodSync(join(root, "locked"), 0o000);
    try {
      const probe = Bun.spawnSync([...(prefix ?? []), process.execPath, join(import.meta.dir, "denied-access-probe.ts"), root], { stderr: "pipe" });
      expect(probe.stderr.toString()).toBe("");
      expect(probe.exitCode).toBe(0);
      const outcomes = JSON.parse(probe.stdout.toString()) as Record<string, { forModel: string; summary: string; isError: boolean }>;

      const denied: Array<[string, string]> = [
        ["readDenied", "secret.txt"],
        // A symlink whose target cannot be resolved for lack of permission was once "a target that does not exist".
        ["readViaLink", "link"],
        ["listDenied", "locked"],
        ["listBehindDenied", "locked/inner"],
        ["grepDenied", "secret.txt"],
        ["writeDenied", "secret.txt"],
      ];
      for (const [name, rel] of denied) {
        const outcome = outcomes[name];
        expect({ name, isError: outcome?.isError }).toEqual({ name, isError: true });
        expect(outcome?.forModel).toStartWith("Error: permission denied");
        expect(outcome?.forModel).toContain(`access to ${rel} (EACCES)`);
        expect(outcome?.forModel).toContain("the user can change its permissions");
        expect(outcome?.forModel).not.toContain("does not exist");
        expect(outcome?.summary).toEndWith("permission denied");
      }
      expect(outcomes.readMissing?.forModel).toBe("Error: missing.txt does not exist. Use list_files or grep to find the right path.");
      expect(outcomes.listMissing?.forModel).toBe("Error: nowhere does not exist.");
      expect(outcomes.grepMissing?.forModel).toBe("Error: nowhere does not exist.");
    } finally {
      chmodSync(join(root, "locked"), 0o755);
      chmodSync(join(root, "secret.txt"), 0o644);
    }
  });
});
