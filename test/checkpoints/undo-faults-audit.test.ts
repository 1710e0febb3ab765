/**
 * Fault-finding pass over undo/redo (ADR 0081, docs/undo.md). A comment marked "Was" says what a
 * fixed defect did.
 * CLI tests spawn the real `valarmind` after real `chat -p` turns against the fake Responses
 * server; the rest drive the registry's recorder and `undoTurn` in process.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, closeSync, existsSync, linkSync, lstatSync, mkdirSync, readFileSync, readlinkSync, openSync, statSync, symlinkSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheckpointStore } from "../../src/checkpoints/checkpoint-store.ts";
import { TurnCheckpoints } from "../../src/checkpoints/turn-checkpoints.ts";
import { undoTurn, type UndoAction } from "../../src/checkpoints/undo.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import type { TranscriptRecord } from "../../src/session/transcript-schema.ts";
import { lockSession, releaseSessionLock } from "../../src/session/session-lock.ts";
import { latestSession } from "../../src/session/transcript.ts";
import { BUN_FLAGS, CLI_ENTRY, cleanupTempDirs, makeTempDir, runCli, type CliResult } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, chatEnv, latestRecords } from "../agent/support/cli-chat.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "../tools/temp-workspace.ts";

afterAll(() => {
  removeWorkspaces();
  return cleanupTempDirs();
});

const SESSION = "feed1234";
const ts = "2026-01-01T00:00:00.000Z";
const user = (turn: number): TranscriptRecord => ({ v: 1, kind: "user", ts, turn, text: `turn ${turn}` });
const undoIn = (root: string, action: UndoAction, records: readonly TranscriptRecord[], force = false) =>
  undoTurn({ action, root, paths: workspacePaths(root), sessionId: SESSION, records, force });

/** A workspace and one turn (turn 1 of SESSION) of real file-tool calls through the registry. */
async function turnInProcess(files: Record<string, string>, calls: Array<[string, unknown]>, prepare?: (root: string) => void) {
  const root = makeWorkspace(files);
  prepare?.(root);
  const store = new CheckpointStore(workspacePaths(root), SESSION);
  const checkpoints = new TurnCheckpoints(store, root);
  const registry = registryFor(root, { checkpoints });
  checkpoints.beginTurn(1);
  for (const [name, args] of calls) expect((await call(registry, name, args)).isError).toBe(false);
  return { root, store };
}

describe("CLI: undo against real turns", () => {
  let server: FakeResponsesServer;
  let root: string;
  beforeEach(async () => {
    server = startFakeResponsesServer();
    root = await makeGitWorkspace({ "src/app.ts": "export const port = 4173;\n", "README.md": "# demo\n" });
  });
  afterEach(async () => {
    await server.close();
  });

  const read = (rel: string): string => readFileSync(join(root, rel), "utf8");
  const cli = (...args: string[]): Promise<CliResult> => runCli(args, { cwd: root, env: chatEnv({}) });
  async function turn(calls: Parameters<typeof toolCallStream>[0], extra: string[] = []): Promise<void> {
    server.enqueue(toolCallStream(calls), textStream("done"));
    const continuing = existsSync(join(root, ".valarmind", "sessions")) ? ["--continue"] : [];
    const r = await chat([...continuing, "-p", "change things", "--yes", ...extra], { cwd: root, server });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining("not written") });
  }
  const latestId = (): string => latestSession(workspacePaths(root))?.id ?? "";

  // Was: the turn's own shell command changed a file its file tools wrote; undo blames "you or
  // another program" and never names the command (the shell note is only printed on success).
  test("a file the turn's write_file made and its own run_shell then changed: the refusal names the shell command", async () => {
    await turn([
      { name: "write_file", arguments: { path: "notes.md", content: "hello\n" } },
      { name: "run_shell", arguments: { command: "echo more >> notes.md" } },
    ]);
    expect(read("notes.md")).toBe("hello\nmore\n");
    const r = await cli("undo");
    expect(r.code).toBe(1);
    expect(read("notes.md")).toBe("hello\nmore\n");
    expect(r.stderr).toContain("notes.md");
    expect(r.stderr).toContain("echo more >> notes.md");
    // --force takes the file back to before the turn (removed) and names the command.
    const forced = await cli("undo", "--force");
    expect(forced.code).toBe(0);
    expect(existsSync(join(root, "notes.md"))).toBe(false);
    expect(forced.stderr).toContain("those changes are not undone: `echo more >> notes.md`");
  });

  test("run_shell before edit_file in the same turn: undo gives back the file as the shell left it, and says so", async () => {
    await turn([
      { name: "run_shell", arguments: { command: "sed -i s/4173/5000/ src/app.ts" } },
      { name: "edit_file", arguments: { path: "src/app.ts", old_string: "5000", new_string: "6000" } },
    ]);
    const r = await cli("undo");
    expect(r.code).toBe(0);
    expect(read("src/app.ts")).toBe("export const port = 5000;\n");
    expect(r.stderr).toContain("those changes are not undone: `sed -i s/4173/5000/ src/app.ts`");
  });

  // Was: a fork looks up its own turns' checkpoints under the parent session too. The parent
  // went on with the same turn number (its REPL was mid-turn when the fork was made): undo in the
  // fork takes back a turn the fork never had, and tells the user it undid the fork's turn 2.
  test("a fork whose turn 2 wrote nothing does not undo the parent's own turn 2", async () => {
    await turn([{ name: "write_file", arguments: { path: "first.md", content: "1\n" } }]);
    const parent = latestId();
    const paths = workspacePaths(root);
    const held = await lockSession(paths, parent, { waitMs: 0 });
    if (held.kind !== "held") throw new Error("could not take the session's lock");
    try {
      // The parent's REPL runs turn 2, which writes parent-only.md.
      const parentTurn = new TurnCheckpoints(new CheckpointStore(paths, parent), root);
      parentTurn.beginTurn(2);
      await parentTurn.beforeWrite(["parent-only.md"]);
      writeFileSync(join(root, "parent-only.md"), "the parent's work\n");
      await parentTurn.afterWrite(["parent-only.md"]);
      // Meanwhile `chat --continue -p` forks (the session is busy); its turn 2 only talks.
      server.enqueue(textStream("just talking"));
      const forked = await chat(["--continue", "-p", "a question"], { cwd: root, server, env: { VALARMIND_SESSION_WAIT_MS: "0" } });
      expect(forked.code).toBe(0);
      expect(forked.stderr).toContain("forked from it");
    } finally {
      await releaseSessionLock(held.lock);
    }
    const fork = latestId();
    expect(fork).not.toBe(parent);
    expect(latestRecords(root).filter((r) => r.kind === "user").map((r) => r.kind === "user" && r.turn)).toEqual([1, 2]);

    const r = await cli("undo", "--session", fork);
    expect(r.stdout).toBe(`undid turn 1 of session ${fork}:\n  first.md: removed (turn 1 created it)\n`);
    expect(read("parent-only.md")).toBe("the parent's work\n");
    expect(existsSync(join(root, "first.md"))).toBe(false);
  });

  // Was: a file that grew past what undo reads (16 MB) was refused, --force or not, with advice
  // about symlinks and .git/. It is still refused (putting it back would mean holding it whole), but
  // the message says it changed and how big it is, and the hint says what to do; after that the
  // undo works.
  test("a file the user replaced with 50 MB of output: refused with what it is and what to do, untouched; once moved, undo restores", async () => {
    await turn([{ name: "write_file", arguments: { path: "out.log", content: "small\n" } }]);
    writeFileSync(join(root, "out.log"), Buffer.alloc(50 * 1024 * 1024, 0x61));
    for (const args of [["undo"], ["undo", "--force"]]) {
      const refused = await cli(...args);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`out.log was changed since and is now ${50 * 1024 * 1024} bytes, more than undo handles`);
      expect(refused.stderr).toContain("Move or remove out.log yourself");
      expect(refused.stderr).not.toContain("symlink");
      expect(statSync(join(root, "out.log")).size).toBe(50 * 1024 * 1024);
    }
    unlinkSync(join(root, "out.log"));
    const undone = await cli("undo");
    expect(undone.code).toBe(0);
    expect(existsSync(join(root, "out.log"))).toBe(false);
  }, 20_000);

  // Was: undo writes the files first and the transcript record after (cli/actions/undo.ts,
  // agent/session-undo.ts). When the record cannot be written (a full disk; here a file-size limit,
  // which kills the process with SIGXFSZ) the files stay undone and nothing knows it: the next undo
  // blames the user for the change, redo has nothing to redo.
  test("the undo record cannot be written: the files are put back, or the undo is still recorded", async () => {
    await turn(editWriteCreate);
    expect(statSync(latestSession(workspacePaths(root))?.file ?? "").size).toBeGreaterThan(1024);
    const child = Bun.spawn(["sh", "-c", 'ulimit -f 1 && exec "$@"', "sh", process.execPath, ...BUN_FLAGS, CLI_ENTRY, "undo"], {
      cwd: root,
      env: envFor(),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await child.exited).not.toBe(0);
    const recorded = latestRecords(root).some((r) => r.kind === "undo");
    const untouched = read("src/app.ts") === "export const port = 8080;\n" && read("README.md") === "# demo, rewritten\n" && existsSync(join(root, "src/new/util.ts"));
    const next = await cli("undo");
    expect({ recorded, untouched, next: next.stderr }).toEqual({ recorded, untouched, next: expect.not.stringContaining("by you or another program") });
    expect(recorded || untouched).toBe(true);
  });

  test("a file replaced by a symlink to a file outside: refused even with --force; nothing outside or inside is written", async () => {
    await turn(editWriteCreate);
    const outside = await makeTempDir("valarmind-outside-");
    writeFileSync(join(outside, "secret.txt"), "outside\n");
    unlinkSync(join(root, "README.md"));
    symlinkSync(join(outside, "secret.txt"), join(root, "README.md"));
    for (const args of [["undo"], ["undo", "--force"], ["redo", "--force"]]) {
      const r = await cli(...args);
      expect(r.code).toBe(1);
    }
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("outside\n");
    expect(readlinkSync(join(root, "README.md"))).toBe(join(outside, "secret.txt"));
    expect(read("src/app.ts")).toBe("export const port = 8080;\n");
    expect(read("src/new/util.ts")).toBe("export const util = 1;\n");
    // A dangling link, and a link inside the workspace, are refused the same way.
    unlinkSync(join(root, "README.md"));
    symlinkSync(join(outside, "gone.txt"), join(root, "README.md"));
    expect((await cli("undo", "--force")).code).toBe(1);
    expect(existsSync(join(outside, "gone.txt"))).toBe(false);
    unlinkSync(join(root, "README.md"));
    symlinkSync("src/app.ts", join(root, "README.md"));
    const inside = await cli("undo", "--force");
    expect(inside.code).toBe(1);
    expect(inside.stderr).toContain("symlink");
    expect(read("src/app.ts")).toBe("export const port = 8080;\n");
    expect(latestRecords(root).some((r) => r.kind === "undo")).toBe(false);
  });

  test("a directory where the turn's file was: refused with --force, nothing changed", async () => {
    await turn(editWriteCreate);
    unlinkSync(join(root, "README.md"));
    mkdirSync(join(root, "README.md"));
    writeFileSync(join(root, "README.md", "keep.txt"), "keep\n");
    const r = await cli("undo", "--force");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("README.md is a directory");
    expect(read("README.md/keep.txt")).toBe("keep\n");
    expect(read("src/app.ts")).toBe("export const port = 8080;\n");
  });

  test("two `valarmind undo` at once on one session: one undo, one record, files consistent", async () => {
    await turn(editWriteCreate);
    const [a, b] = await Promise.all([cli("undo"), cli("undo")]);
    expect([a.code, b.code].sort()).toEqual([0, 1]);
    expect((a.code === 1 ? a : b).stderr).toMatch(/in use by another valarmind|nothing to undo/);
    expect(latestRecords(root).filter((r) => r.kind === "undo")).toHaveLength(1);
    expect(read("src/app.ts")).toBe("export const port = 4173;\n");
    expect(read("README.md")).toBe("# demo\n");
    expect(existsSync(join(root, "src/new/util.ts"))).toBe(false);
  });

  test("a file given another hard link after the turn: refused, and files already written are put back", async () => {
    await turn(editWriteCreate);
    const outside = await makeTempDir("valarmind-outside-");
    linkSync(join(root, "README.md"), join(outside, "alias.md"));
    const r = await cli("undo", "--force");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("README.md");
    expect(r.stderr).toContain("hard links");
    expect(r.stderr).toContain("src/app.ts was put back as before");
    expect(readFileSync(join(outside, "alias.md"), "utf8")).toBe("# demo, rewritten\n");
    expect(read("src/app.ts")).toBe("export const port = 8080;\n");
    expect(read("src/new/util.ts")).toBe("export const util = 1;\n");
  });
});

const editWriteCreate = [
  { name: "edit_file", arguments: { path: "src/app.ts", old_string: "4173", new_string: "8080" } },
  { name: "write_file", arguments: { path: "README.md", content: "# demo, rewritten\n" } },
  { name: "write_file", arguments: { path: "src/new/util.ts", content: "export const util = 1;\n" } },
];

function envFor(): Record<string, string> {
  const merged: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", XDG_CONFIG_HOME: join(tmpdir(), `valarmind-audit-config-${process.pid}`), ...chatEnv({}) };
  return Object.fromEntries(Object.entries(merged).filter((e): e is [string, string] => e[1] !== undefined));
}

describe("in process: contents, modes, blobs", () => {
  test("an empty file, a binary replacement, the executable bit, a file the user deleted: undo --force gives back exact bytes and modes", async () => {
    const { root } = await turnInProcess(
      { "empty.txt": "", "run.sh": "#!/bin/sh\necho 1\n", "data.txt": "text\n" },
      [
        ["write_file", { path: "empty.txt", content: "now full\n" }],
        ["edit_file", { path: "run.sh", old_string: "echo 1", new_string: "echo 2" }],
        ["write_file", { path: "data.txt", content: "changed\n" }],
        ["write_file", { path: "made-empty.txt", content: "" }],
      ],
      (r) => chmodSync(join(r, "run.sh"), 0o755),
    );
    expect(statSync(join(root, "run.sh")).mode & 0o777).toBe(0o755);
    writeFileSync(join(root, "data.txt"), Buffer.from([0, 255, 1, 254]));
    unlinkSync(join(root, "run.sh"));
    await expect(undoIn(root, "undo", [user(1)])).rejects.toThrow("these files were changed after turn 1");
    const outcome = await undoIn(root, "undo", [user(1)], true);
    expect(outcome.record).toMatchObject({ forced: true });
    expect(readFileSync(join(root, "empty.txt"), "utf8")).toBe("");
    expect(readFileSync(join(root, "run.sh"), "utf8")).toBe("#!/bin/sh\necho 1\n");
    expect(statSync(join(root, "run.sh")).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(root, "data.txt"), "utf8")).toBe("text\n");
    expect(existsSync(join(root, "made-empty.txt"))).toBe(false);

    const redone = await undoIn(root, "redo", [user(1), { v: 1, kind: "undo", ts, of_turn: 1, files: [] }]);
    expect(redone.files.map((f) => f.did)).toEqual(["rewritten", "rewritten", "rewritten", "created again"]);
    expect(readFileSync(join(root, "made-empty.txt"), "utf8")).toBe("");
    expect(readFileSync(join(root, "data.txt"), "utf8")).toBe("changed\n");
  });

  test("a blob missing or damaged: a clear error naming it, and no file is half-restored", async () => {
    const { root, store } = await turnInProcess({ "a.txt": "a0\n", "b.txt": "b0\n" }, [
      ["write_file", { path: "a.txt", content: "a1\n" }],
      ["write_file", { path: "b.txt", content: "b1\n" }],
    ]);
    const checkpoint = await store.read(1);
    const bBefore = checkpoint?.files[1]?.before;
    if (!bBefore?.exists) throw new Error("no blob for b.txt");
    const blob = join(store.dir, "blobs", bBefore.sha256);
    writeFileSync(blob, "tampered\n");
    await expect(undoIn(root, "undo", [user(1)], true)).rejects.toThrow(`${blob} is damaged`);
    unlinkSync(blob);
    await expect(undoIn(root, "undo", [user(1)], true)).rejects.toThrow(`the checkpoint of turn 1 lacks ${blob}`);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a1\n");
    expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("b1\n");
  });

  test("undo, redo, undo, redo of a turn over a file it created and one it edited: byte for byte every time", async () => {
    const { root } = await turnInProcess({ "a.txt": "one\n" }, [
      ["edit_file", { path: "a.txt", old_string: "one", new_string: "two" }],
      ["write_file", { path: "dir/new.txt", content: "new\n" }],
    ]);
    const records: TranscriptRecord[] = [user(1)];
    for (const action of ["undo", "redo", "undo", "redo"] as const) {
      const outcome = await undoIn(root, action, records);
      records.push({ v: 1, ...outcome.record, ts } as TranscriptRecord);
      const undone = action === "undo";
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe(undone ? "one\n" : "two\n");
      expect(existsSync(join(root, "dir/new.txt"))).toBe(!undone);
    }
    await expect(undoIn(root, "redo", records)).rejects.toThrow("nothing to redo");
    expect(lstatSync(join(root, "dir")).isDirectory()).toBe(true);
  });

  test("a checkpoint edited to name a path outside the workspace or in .git/: refused even with --force, nothing written", async () => {
    const { root, store } = await turnInProcess({ "a.txt": "a0\n" }, [["write_file", { path: "a.txt", content: "a1\n" }]]);
    const checkpoint = await store.read(1);
    if (!checkpoint?.files[0]) throw new Error("no checkpoint");
    const hash = await store.putBlob(Buffer.from("planted\n"));
    const planted = { exists: true as const, sha256: hash, size: 8, mode: 0o755 };
    for (const path of ["../escape.txt", ".git/hooks/pre-commit", ".valarmind/state.json"]) {
      await store.write({ ...checkpoint, files: [...checkpoint.files, { path, before: planted, after: { exists: false } }] });
      await expect(undoIn(root, "undo", [user(1)], true)).rejects.toThrow("nothing was changed");
      expect(existsSync(join(root, path))).toBe(false);
    }
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a1\n");
  });

  const canMount = process.getuid?.() === 0 && Bun.spawnSync(["sh", "-c", "command -v mount && command -v umount"]).exitCode === 0;
  test.skipIf(!canMount)("a full disk halfway through an undo: the failing file is left whole, the file already written is put back", async () => {
    const root = makeWorkspace();
    if (Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", root]).exitCode !== 0) return; // no CAP_SYS_ADMIN
    expect(readFileSync("/proc/mounts", "utf8")).toContain(` ${root} tmpfs`);
    try {
      writeFileSync(join(root, "a.txt"), "a0\n");
      writeFileSync(join(root, "b.txt"), "b".repeat(600_000));
      const store = new CheckpointStore(workspacePaths(root), SESSION);
      const checkpoints = new TurnCheckpoints(store, root);
      const registry = registryFor(root, { checkpoints });
      checkpoints.beginTurn(1);
      expect((await call(registry, "write_file", { path: "a.txt", content: "a1\n" })).isError).toBe(false);
      expect((await call(registry, "write_file", { path: "b.txt", content: "tiny\n" })).isError).toBe(false);
      const fd = openSync(join(root, "filler"), "w");
      try {
        for (const size of [65536, 4096, 1]) {
          try {
            for (;;) writeSync(fd, Buffer.alloc(size));
          } catch {
            // full at this chunk size; go on with a smaller one
          }
        }
      } finally {
        closeSync(fd);
      }
      await expect(undoIn(root, "undo", [user(1)])).rejects.toThrow(/cannot undo turn 1: b\.txt could not be written \(.*ENOSPC.*\); it was put back as it was; a\.txt was put back as before/);
      expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("a1\n");
      expect(readFileSync(join(root, "b.txt"), "utf8")).toBe("tiny\n");
    } finally {
      Bun.spawnSync(["umount", "-l", root]);
    }
  });
});
