/**
 * `valarmind undo` and `valarmind redo` (ADR 0081), spawned for real after real `chat -p` turns
 * against the fake Responses server: what a turn's file tools changed is given back (a created
 * file removed) and written again, turn by turn; a file changed since refuses the whole undo
 * unless --force; shell commands are named as not undone; undo never writes through a symlink
 * out of the workspace; each undo and redo is in the transcript.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupTempDirs, makeTempDir, runCli, type CliResult } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, chatEnv, latestRecords } from "../agent/support/cli-chat.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import { latestSession } from "../../src/session/transcript.ts";
import { lastUserText } from "../support/request-view.ts";
import { lockSession, releaseSessionLock } from "../../src/session/session-lock.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "src/app.ts": "export const port = 4173;\n", "README.md": "# demo\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const read = (rel: string): string => readFileSync(join(root, rel), "utf8");
const undo = (...args: string[]): Promise<CliResult> => runCli(["undo", ...args], { cwd: root, env: chatEnv({}) });
const redo = (...args: string[]): Promise<CliResult> => runCli(["redo", ...args], { cwd: root, env: chatEnv({}) });

/** One headless turn that runs `calls` (all in one step) with every approval given. */
async function turn(calls: Parameters<typeof toolCallStream>[0], message = "change things", extra: string[] = []): Promise<void> {
  server.enqueue(toolCallStream(calls), textStream("done"));
  const continuing = existsSync(join(root, ".valarmind", "sessions")) ? ["--continue"] : [];
  const r = await chat([...continuing, "-p", message, "--yes", ...extra], { cwd: root, server });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.not.stringContaining("not written") });
}

const editWriteCreate = [
  { name: "edit_file", arguments: { path: "src/app.ts", old_string: "4173", new_string: "8080" } },
  { name: "write_file", arguments: { path: "README.md", content: "# demo, rewritten\n" } },
  { name: "write_file", arguments: { path: "src/new/util.ts", content: "export const util = 1;\n" } },
];

describe("undo and redo of one turn", () => {
  test("an edit, an overwrite and a new file: undo gives all three back (the new file removed), redo writes them again; both are in the transcript", async () => {
    await turn(editWriteCreate);
    expect(read("src/app.ts")).toBe("export const port = 8080;\n");

    const undone = await undo();
    expect(undone.stderr).toBe("");
    expect(undone.code).toBe(0);
    expect(undone.stdout).toMatch(/^undid turn 1 of session [a-z0-9]+:\n/);
    expect(undone.stdout).toContain("  src/app.ts: restored\n");
    expect(undone.stdout).toContain("  README.md: restored\n");
    expect(undone.stdout).toContain("  src/new/util.ts: removed (turn 1 created it)\n");
    expect(read("src/app.ts")).toBe("export const port = 4173;\n");
    expect(read("README.md")).toBe("# demo\n");
    expect(existsSync(join(root, "src/new/util.ts"))).toBe(false);
    expect(latestRecords(root).at(-1)).toMatchObject({ kind: "undo", of_turn: 1, files: ["src/app.ts", "README.md", "src/new/util.ts"] });

    const redone = await redo();
    expect(redone.code).toBe(0);
    expect(redone.stdout).toContain("  src/new/util.ts: created again\n");
    expect(redone.stdout).toContain("  src/app.ts: rewritten\n");
    expect(read("src/app.ts")).toBe("export const port = 8080;\n");
    expect(read("README.md")).toBe("# demo, rewritten\n");
    expect(read("src/new/util.ts")).toBe("export const util = 1;\n");
    expect(latestRecords(root).at(-1)).toMatchObject({ kind: "redo", of_turn: 1 });

    // Nothing more to redo: exit 1 with what to know.
    const again = await redo();
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("nothing to redo in session");
    // `sessions show` prints both records.
    const show = await runCli(["sessions", "show", latestId()], { cwd: root, env: chatEnv({}) });
    expect(show.stdout).toContain("— undo of turn 1: src/app.ts, README.md, src/new/util.ts");
    expect(show.stdout).toContain("— redo of turn 1:");
  });

  test("two turns: two undos go back two turns, redo gives them back oldest first; a new turn after an undo drops the redo", async () => {
    await turn([{ name: "edit_file", arguments: { path: "src/app.ts", old_string: "4173", new_string: "5000" } }], "first");
    await turn([{ name: "edit_file", arguments: { path: "src/app.ts", old_string: "5000", new_string: "6000" } }], "second");
    expect(read("src/app.ts")).toContain("6000");

    expect((await undo()).stdout).toContain("undid turn 2");
    expect(read("src/app.ts")).toContain("5000");
    expect((await undo()).stdout).toContain("undid turn 1");
    expect(read("src/app.ts")).toContain("4173");
    const none = await undo();
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("every turn that changed files with valarmind's file tools is undone already");

    expect((await redo()).stdout).toContain("redid turn 1");
    expect(read("src/app.ts")).toContain("5000");

    // A new message after an undo: turn 2 stays undone and can no longer be redone.
    server.enqueue(textStream("ok"));
    const next = await chat(["--continue", "-p", "never mind"], { cwd: root, server });
    expect(next.code).toBe(0);
    // The model is told what changed on disk since turn 2 (two undos and a redo, in order), once, in the message.
    const told = lastUserText(server.requests.at(-1)?.body ?? {});
    expect(told).toStartWith("never mind\n\n[valarmind: before this message the user changed files outside the conversation. ");
    expect(told).toContain("/undo gave back the files turn 2 changed as they were before it (src/app.ts); what turn 2 wrote to them is no longer on disk. /undo gave back the files turn 1 changed");
    expect(told).toContain("/redo wrote the files of turn 1 again as that turn left them (src/app.ts).");
    expect(latestRecords(root).findLast((r) => r.kind === "user")).toMatchObject({ turn: 3, text: told });
    server.enqueue(textStream("ok"));
    expect((await chat(["--continue", "-p", "and now?"], { cwd: root, server })).code).toBe(0);
    expect(lastUserText(server.requests.at(-1)?.body ?? {})).toBe("and now?");
    const dropped = await redo();
    expect(dropped.code).toBe(1);
    expect(dropped.stderr).toContain("nothing to redo");
    expect(read("src/app.ts")).toContain("5000");
    // The next undo goes to turn 1 (turn 2 is undone already).
    expect((await undo()).stdout).toContain("undid turn 1");
    expect(read("src/app.ts")).toContain("4173");
  });

  test("a turn that writes a file twice: undo gives back what was there before the first write", async () => {
    server.enqueue(
      toolCallStream([{ name: "edit_file", arguments: { path: "src/app.ts", old_string: "4173", new_string: "1" } }]),
      toolCallStream([{ name: "edit_file", arguments: { path: "src/app.ts", old_string: "= 1;", new_string: "= 2;" } }]),
      textStream("done"),
    );
    expect((await chat(["-p", "twice", "--yes"], { cwd: root, server })).code).toBe(0);
    expect(read("src/app.ts")).toBe("export const port = 2;\n");
    expect((await undo()).code).toBe(0);
    expect(read("src/app.ts")).toBe("export const port = 4173;\n");
  });
});

describe("undo refuses what it would overwrite", () => {
  test("a file changed after the turn: undo names it, changes nothing (the other files neither), exit 1; --force overwrites", async () => {
    await turn(editWriteCreate);
    writeFileSync(join(root, "README.md"), "# my own words\n");

    const refused = await undo();
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain("cannot undo turn 1: this file was changed after turn 1 (by you or another program): README.md; nothing was changed");
    expect(refused.stderr).toContain("Commit or move your change first");
    expect(refused.stderr).toContain("--force");
    // All or nothing: the files nobody touched are still as the turn left them.
    expect(read("src/app.ts")).toBe("export const port = 8080;\n");
    expect(read("src/new/util.ts")).toBe("export const util = 1;\n");
    expect(read("README.md")).toBe("# my own words\n");
    expect(latestRecords(root).some((r) => r.kind === "undo")).toBe(false);

    const forced = await undo("--force");
    expect(forced.code).toBe(0);
    expect(read("README.md")).toBe("# demo\n");
    expect(read("src/app.ts")).toBe("export const port = 4173;\n");
    expect(existsSync(join(root, "src/new/util.ts"))).toBe(false);
    expect(latestRecords(root).at(-1)).toMatchObject({ kind: "undo", of_turn: 1, forced: true });
  });

  test("a created file's directory replaced by a symlink out of the workspace: undo refuses and touches nothing outside", async () => {
    await turn([{ name: "write_file", arguments: { path: "out/new.txt", content: "made\n" } }]);
    const outside = await makeTempDir("valarmind-outside-");
    writeFileSync(join(outside, "new.txt"), "made\n");
    renameSync(join(root, "out"), join(root, "out-moved"));
    symlinkSync(outside, join(root, "out"));

    const r = await undo("--force");
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("cannot undo turn 1");
    expect(r.stderr).toContain("outside the workspace");
    expect(readFileSync(join(outside, "new.txt"), "utf8")).toBe("made\n");
  });
});

describe("what undo cannot take back, and when there is nothing to undo", () => {
  test("a turn that also ran a shell command (sandbox allows writes): the note names it, the file tools' writes are still undone", async () => {
    await turn([
      { name: "run_shell", arguments: { command: "echo ran > shell.txt" } },
      { name: "write_file", arguments: { path: "notes.md", content: "hello\n" } },
    ]);
    expect(read("shell.txt")).toBe("ran\n");
    const r = await undo();
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("notes.md: removed (turn 1 created it)");
    expect(r.stderr).toContain("valarmind: turn 1 also ran shell commands that may have changed files; those changes are not undone: `echo ran > shell.txt`");
    expect(existsSync(join(root, "notes.md"))).toBe(false);
    expect(read("shell.txt")).toBe("ran\n");
  });

  test("a read-only sandbox: the shell command is not named", async () => {
    await turn(
      [
        { name: "run_shell", arguments: { command: "cat README.md" } },
        { name: "write_file", arguments: { path: "notes.md", content: "hello\n" } },
      ],
      "look",
      ["--sandbox", "read-only"],
    );
    const r = await undo();
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
  });

  test("no session, a session whose turns changed no file, an unknown --session: clear messages, nothing written", async () => {
    const none = await undo();
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("nothing to undo: this workspace has no session yet");

    server.enqueue(textStream("hi"));
    expect((await chat(["-p", "hello"], { cwd: root, server })).code).toBe(0);
    const nothing = await undo();
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain("no turn of it changed files with valarmind's file tools");
    expect(latestRecords(root).map((r) => r.kind)).not.toContain("undo");

    const unknown = await undo("--session", "zzzz9999");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no session 'zzzz9999'");
  });

  test("a session another valarmind holds (a REPL): undo refuses, pointing to /undo there, and changes nothing", async () => {
    await turn([{ name: "write_file", arguments: { path: "notes.md", content: "hello\n" } }]);
    const held = await lockSession(workspacePaths(root), latestId(), { waitMs: 0 });
    if (held.kind !== "held") throw new Error("could not take the session's lock");
    try {
      const r = await undo();
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`session ${latestId()} is in use by another valarmind (pid ${process.pid}`);
      expect(r.stderr).toContain("Type /undo in that session");
      expect(read("notes.md")).toBe("hello\n");
    } finally {
      await releaseSessionLock(held.lock);
    }
  });

  test("--session picks an older session; the latest is left alone", async () => {
    await turn([{ name: "write_file", arguments: { path: "first.md", content: "1\n" } }]);
    const firstId = latestId();
    server.enqueue(toolCallStream([{ name: "write_file", arguments: { path: "second.md", content: "2\n" } }]), textStream("done"));
    expect((await chat(["-p", "new session", "--yes"], { cwd: root, server })).code).toBe(0);

    const r = await undo("--session", firstId);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`undid turn 1 of session ${firstId}`);
    expect(existsSync(join(root, "first.md"))).toBe(false);
    expect(read("second.md")).toBe("2\n");
  });
});

function latestId(): string {
  const ref = latestSession(workspacePaths(root));
  if (!ref) throw new Error(`no session under ${root}`);
  return ref.id;
}
