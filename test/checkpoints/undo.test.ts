/**
 * Checkpoints and undo in process (ADR 0081): /undo and /redo through the REPL's controller, what
 * the registry stores before a write (and that a failed snapshot stops the write), an ADR file,
 * a deleted file recreated with its mode, a failure halfway put back, checkpoints private and
 * verbatim, and the undo history read from transcript records.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CheckpointStore } from "../../src/checkpoints/checkpoint-store.ts";
import { TurnCheckpoints } from "../../src/checkpoints/turn-checkpoints.ts";
import { undoTurn, type UndoAction } from "../../src/checkpoints/undo.ts";
import { undoHistory } from "../../src/checkpoints/undo-history.ts";
import { SessionChatController } from "../../src/cli/chat/chat-controller.ts";
import { workspacePaths } from "../../src/config/paths.ts";
import type { TranscriptRecord } from "../../src/session/transcript-schema.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { lastUserText } from "../support/request-view.ts";
import { startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { fakeModel, makeGitWorkspace, testSettings } from "../agent/support/agent-harness.ts";
import { latestRecords } from "../agent/support/cli-chat.ts";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "../tools/temp-workspace.ts";

afterAll(() => {
  removeWorkspaces();
  return cleanupTempDirs();
});

const SESSION = "abcd1234";
const ts = "2026-01-01T00:00:00.000Z";
const userRecord = (turn: number): TranscriptRecord => ({ v: 1, kind: "user", ts, turn, text: `turn ${turn}` });

function recorderFor(root: string): { store: CheckpointStore; checkpoints: TurnCheckpoints } {
  const store = new CheckpointStore(workspacePaths(root), SESSION);
  return { store, checkpoints: new TurnCheckpoints(store, root) };
}

const undoIn = (root: string, action: UndoAction, records: readonly TranscriptRecord[], force = false) =>
  undoTurn({ action, root, paths: workspacePaths(root), sessionId: SESSION, records, force });

describe("/undo and /redo in the REPL's controller", () => {
  let server: FakeResponsesServer;
  beforeEach(() => {
    server = startFakeResponsesServer();
  });
  afterEach(async () => {
    await server.close();
  });

  test("undo gives back the turn's files, redo writes them again, a second redo has nothing to do; both are recorded", async () => {
    const root = await makeGitWorkspace({ "src/a.ts": "const a = 1;\n" });
    const controller = await SessionChatController.open({
      root,
      settings: testSettings({ approvals: "auto-edit" }),
      model: fakeModel(server),
      interactive: true,
      resume: { kind: "new" },
      warnings: [],
    });
    try {
      const early = await controller.runCommand("undo", "");
      expect(early).toMatchObject({ title: "/undo", isError: true });
      expect(early.lines[0]).toBe("nothing to undo: this session has no turn yet");

      server.enqueue(
        toolCallStream([
          { name: "edit_file", arguments: { path: "src/a.ts", old_string: "1", new_string: "2" } },
          { name: "write_file", arguments: { path: "src/b.ts", content: "const b = 1;\n" } },
        ]),
        textStream("done"),
      );
      for await (const event of controller.submit("change a, add b", new AbortController().signal)) void event;
      expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe("const a = 2;\n");

      const sessionId = controller.status().sessionId;
      const undone = await controller.runCommand("undo", "");
      expect(undone).toEqual({ title: `undid turn 1 of session ${sessionId}`, lines: ["src/a.ts: restored", "src/b.ts: removed (turn 1 created it)"] });
      expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe("const a = 1;\n");
      expect(existsSync(join(root, "src/b.ts"))).toBe(false);

      const redone = await controller.runCommand("redo", "");
      expect(redone.title).toBe(`redid turn 1 of session ${sessionId}`);
      expect(readFileSync(join(root, "src/b.ts"), "utf8")).toBe("const b = 1;\n");
      expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe("const a = 2;\n");

      const again = await controller.runCommand("redo", "");
      expect(again.isError).toBe(true);
      expect(again.lines[0]).toContain("nothing to redo");
      expect(latestRecords(root).filter((r) => r.kind === "undo" || r.kind === "redo")).toMatchObject([
        { kind: "undo", of_turn: 1, files: ["src/a.ts", "src/b.ts"] },
        { kind: "redo", of_turn: 1, files: ["src/a.ts", "src/b.ts"] },
      ]);
      expect(await controller.runCommand("undo", "please")).toMatchObject({ isError: true, lines: ["usage: /undo [--force]"] });

      // The user edits b after the redo: /undo refuses, /undo --force overwrites.
      writeFileSync(join(root, "src/b.ts"), "mine\n");
      const refused = await controller.runCommand("undo", "");
      expect(refused.isError).toBe(true);
      expect(refused.lines[0]).toContain("changed after turn 1 (by you or another program): src/b.ts; nothing was changed");
      expect(refused.lines[1]).toContain("/undo --force");
      expect(readFileSync(join(root, "src/a.ts"), "utf8")).toBe("const a = 2;\n");
      expect((await controller.runCommand("undo", "--force")).isError).toBeUndefined();
      expect(existsSync(join(root, "src/b.ts"))).toBe(false);

      // The next message tells the model what the three rewinds did (the UI shows the user's words and a notice).
      server.enqueue(textStream("noted"));
      const events = [];
      for await (const event of controller.submit("what now?", new AbortController().signal)) events.push(event);
      const sent = lastUserText(server.requests.at(-1)?.body ?? {});
      expect(sent).toStartWith("what now?\n\n[valarmind: before this message the user changed files outside the conversation. /undo gave back the files turn 1 changed");
      expect(sent.match(/\/undo gave back/g)).toHaveLength(2);
      expect(sent).toContain("/redo wrote the files of turn 1 again as that turn left them (src/a.ts, src/b.ts).");
      expect(events).toContainEqual(expect.objectContaining({ type: "turn_start", userText: "what now?" }));
      expect(events).toContainEqual(expect.objectContaining({ type: "notice", message: "told the model what changed on disk since the last turn: /undo of turn 1 (2 files), /redo of turn 1 (2 files), /undo of turn 1 (2 files)" }));
    } finally {
      await controller.close();
    }
  });
});

describe("what the registry keeps before a write", () => {
  test("write_file and an ADR of memory_record_decision are checkpointed; undo takes both back; the checkpoint is private and verbatim", async () => {
    const secret = "GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345";
    const root = makeWorkspace({ ".env": `${secret}\n` });
    const { store, checkpoints } = recorderFor(root);
    const registry = registryFor(root, { checkpoints });
    checkpoints.beginTurn(1);
    expect((await call(registry, "write_file", { path: ".env", content: "EMPTY=1\n" })).isError).toBe(false);
    const adr = await call(registry, "memory_record_decision", { title: "Use JSONL", why: "append-only", write_adr: true });
    expect(adr.isError).toBe(false);
    const adrFile = readdirSync(join(root, "docs/adr"))[0] ?? "";

    const checkpoint = await store.read(1);
    expect(checkpoint?.files.map((f) => [f.path, f.before.exists, f.after?.exists])).toEqual([
      [".env", true, true],
      [`docs/adr/${adrFile}`, false, true],
    ]);
    expect(statSync(store.turnDir(1)).mode & 0o777).toBe(0o700);
    expect(statSync(store.file(1)).mode & 0o777).toBe(0o600);
    for (const blob of readdirSync(join(store.dir, "blobs"))) expect(statSync(join(store.dir, "blobs", blob)).mode & 0o777).toBe(0o600);

    const outcome = await undoIn(root, "undo", [userRecord(1)]);
    expect(outcome.files).toEqual([
      { path: ".env", did: "restored" },
      { path: `docs/adr/${adrFile}`, did: "removed (turn 1 created it)" },
    ]);
    // Given back byte for byte: checkpoints are not redacted, or undo would damage the file.
    expect(readFileSync(join(root, ".env"), "utf8")).toBe(`${secret}\n`);
    expect(existsSync(join(root, "docs/adr", adrFile))).toBe(false);
  });

  test("a snapshot that cannot be taken stops the write: nothing is written, the model is told why", async () => {
    const root = makeWorkspace({ "a.txt": "one\n" });
    const { checkpoints } = recorderFor(root);
    const registry = registryFor(root, { checkpoints });
    // No turn begun: the recorder refuses, as it would on a full disk.
    const outcome = await call(registry, "write_file", { path: "a.txt", content: "two\n" });
    expect(outcome.isError).toBe(true);
    expect(outcome.forModel).toContain("could not save a checkpoint of a.txt before writing");
    expect(outcome.forModel).toContain("nothing was written");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("one\n");
  });

  test("a call that changed nothing (refused by the file's own check) leaves no checkpoint", async () => {
    const root = makeWorkspace({ "a.txt": "one\n" });
    const { store, checkpoints } = recorderFor(root);
    checkpoints.beginTurn(1);
    const registry = registryFor(root, { checkpoints });
    expect((await call(registry, "edit_file", { path: "a.txt", old_string: "missing", new_string: "x" })).isError).toBe(true);
    expect(await store.read(1)).toBeUndefined();
    expect(existsSync(store.turnDir(1))).toBe(false);
  });
});

describe("restoring", () => {
  test("a file the turn deleted is recreated with its mode; redo removes it again", async () => {
    const root = makeWorkspace({ "bin/run.sh": "#!/bin/sh\necho hi\n" });
    chmodSync(join(root, "bin/run.sh"), 0o750);
    const { checkpoints } = recorderFor(root);
    checkpoints.beginTurn(1);
    await checkpoints.beforeWrite(["bin/run.sh"]);
    unlinkSync(join(root, "bin/run.sh"));
    await checkpoints.afterWrite(["bin/run.sh"]);

    const outcome = await undoIn(root, "undo", [userRecord(1)]);
    expect(outcome.files).toEqual([{ path: "bin/run.sh", did: "recreated (turn 1 deleted it)" }]);
    expect(readFileSync(join(root, "bin/run.sh"), "utf8")).toBe("#!/bin/sh\necho hi\n");
    expect(statSync(join(root, "bin/run.sh")).mode & 0o777).toBe(0o750);

    const records: TranscriptRecord[] = [userRecord(1), { v: 1, kind: "undo", ts, of_turn: 1, files: ["bin/run.sh"] }];
    const redone = await undoIn(root, "redo", records);
    expect(redone.files).toEqual([{ path: "bin/run.sh", did: "removed again" }]);
    expect(existsSync(join(root, "bin/run.sh"))).toBe(false);
  });

  test("a write that fails halfway puts back the files already written and says so", async () => {
    const root = makeWorkspace({ "a.txt": "before\n", "dir/x.txt": "x\n" });
    const { checkpoints } = recorderFor(root);
    checkpoints.beginTurn(1);
    await checkpoints.beforeWrite(["a.txt", "dir/x.txt"]);
    writeFileSync(join(root, "a.txt"), "after\n");
    unlinkSync(join(root, "dir/x.txt"));
    await checkpoints.afterWrite(["a.txt", "dir/x.txt"]);
    // Someone replaces dir/ with a file: dir/x.txt cannot be recreated.
    rmSync(join(root, "dir"), { recursive: true });
    writeFileSync(join(root, "dir"), "a file now\n");

    await expect(undoIn(root, "undo", [userRecord(1)])).rejects.toThrow(/cannot undo turn 1: dir\/x\.txt: dir is not a directory.*a\.txt was put back as before/);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("after\n");
  });

  test("a damaged checkpoint is named and nothing changes", async () => {
    const root = makeWorkspace({ "a.txt": "one\n" });
    const { store, checkpoints } = recorderFor(root);
    checkpoints.beginTurn(1);
    await checkpoints.beforeWrite(["a.txt"]);
    writeFileSync(join(root, "a.txt"), "two\n");
    await checkpoints.afterWrite(["a.txt"]);
    writeFileSync(store.file(1), "{ not json");
    await expect(undoIn(root, "undo", [userRecord(1)])).rejects.toThrow(`the checkpoint ${store.file(1)} is damaged`);
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("two\n");
  });
});

describe("the undo history, from the transcript", () => {
  const undo = (turn: number): TranscriptRecord => ({ v: 1, kind: "undo", ts, of_turn: turn, files: ["a"] });
  const redo = (turn: number): TranscriptRecord => ({ v: 1, kind: "redo", ts, of_turn: turn, files: ["a"] });

  test("undos stack, redo pops, a new turn empties the redo stack but keeps turns undone", () => {
    expect(undoHistory([userRecord(1), userRecord(2), undo(2), undo(1)])).toMatchObject({ turns: [1, 2], redoStack: [2, 1] });
    const redone = undoHistory([userRecord(1), userRecord(2), undo(2), undo(1), redo(1)]);
    expect([...redone.undone]).toEqual([2]);
    expect(redone.redoStack).toEqual([2]);
    const moved = undoHistory([userRecord(1), userRecord(2), undo(2), userRecord(3)]);
    expect(moved.redoStack).toEqual([]);
    expect([...moved.undone]).toEqual([2]);
  });

  test("a fork finds its copied turns' checkpoints under the sessions it came from, nearest first, each up to the turn it copied", () => {
    const note = (text: string): TranscriptRecord => ({ v: 1, kind: "note", ts, what: "forked_from", text });
    expect(undoHistory([note("aaaa1111: busy"), userRecord(1), note("bbbb2222: it was in use"), userRecord(2)]).forkedFrom).toEqual([
      { id: "bbbb2222", throughTurn: 1 },
      { id: "aaaa1111", throughTurn: 0 },
    ]);
  });
});
