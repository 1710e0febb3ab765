/**
 * The core's slash-command dispatcher reads the same catalogue as /help and completion: every
 * command the catalogue gives to the core is carried out by the real controller, /help is the
 * catalogue's one /help, and a name outside the catalogue points to /help.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { helpOutput, SLASH_CATALOG, unknownCommandOutput } from "../../src/agent/slash-catalog.ts";
import { SessionChatController } from "../../src/cli/chat/chat-controller.ts";
import { fakeModel, makeGitWorkspace, testSettings } from "../agent/support/agent-harness.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace({ "README.md": "# demo\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

/** Arguments that make each core command do its work rather than print its usage. */
const ARGS: Record<string, string> = { goal: "ship v1", now: "wiring", decide: "Use JSONL -- append-only", task: "add Write docs", model: "gpt-other", approvals: "auto-edit" };

test("every core command of the catalogue is carried out; /help is the catalogue's; unknown names point to /help", async () => {
  const controller = await SessionChatController.open({
    root,
    settings: testSettings(),
    model: fakeModel(server),
    interactive: true,
    resume: { kind: "new" },
    warnings: [],
  });
  try {
    expect(controller.commands()).toBe(SLASH_CATALOG);
    for (const command of SLASH_CATALOG.filter((entry) => entry.runs === "core")) {
      const output = await controller.runCommand(command.name, ARGS[command.name] ?? "");
      expect({ name: command.name, title: output.title }).not.toEqual({ name: command.name, title: `Unknown command /${command.name}` });
      // /resume has no other session to go to here, /undo and /redo nothing to undo: their own errors, not an unknown command.
      if (!["resume", "undo", "redo"].includes(command.name)) expect({ name: command.name, isError: output.isError ?? false }).toEqual({ name: command.name, isError: false });
    }
    expect(controller.status().model).toBe("gpt-other");
    expect(controller.status().goal).toBe("ship v1");
    expect(await controller.runCommand("help", "")).toEqual(helpOutput(SLASH_CATALOG));
    expect(await controller.runCommand("frobnicate", "x")).toEqual(unknownCommandOutput("frobnicate"));
    expect((await controller.runCommand("exit", "")).isError).toBe(true);
    expect(server.requests).toHaveLength(0);
  } finally {
    await controller.close();
  }
});

test("/sessions lists each session on one line, whatever its first message holds (newlines, an attached file's note)", async () => {
  const controller = await SessionChatController.open({ root, settings: testSettings(), model: fakeModel(server), interactive: true, resume: { kind: "new" }, warnings: [] });
  try {
    server.enqueue(textStream("ok"));
    await Bun.write(`${root}/notes.md`, "line one\nline two\n");
    for await (const _ of controller.submit("read this\n\n@notes.md\nplease", new AbortController().signal)) void _;
    const output = await controller.runCommand("sessions", "");
    expect(output.lines).toHaveLength(1);
    expect(output.lines[0]).toMatch(/ 1 turns {2}read this/);
    expect(output.lines[0]).not.toContain("\n");
  } finally {
    await controller.close();
  }
});
