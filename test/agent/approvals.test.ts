/**
 * Tools as the model meets them through the agent: path escapes refused with a message the model
 * can act on, and approvals in each mode — headless (refused unless the mode allows it) and
 * interactive (an `approval_request` answered by its id).
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import type { AgentEvent, ApprovalDecision } from "../../src/agent/events.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import {
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  toolOutputsThisTurn,
  type FakeResponsesServer,
  type FakeToolCall,
} from "../support/fake-responses-server.ts";
import { makeGitWorkspace, openAgent, recordsOf, runTurn } from "./support/agent-harness.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const SECRET = "TOP-SECRET-VALUE-4242";

/** The function_call_output the model got for the single call of the turn's first step. */
function outputSeenByModel(requestIndex = 1): string {
  const outputs = toolOutputsThisTurn(server.requests[requestIndex]?.body ?? {});
  expect(outputs).toHaveLength(1);
  return outputs[0]?.output ?? "";
}

function oneCallThenAnswer(call: FakeToolCall): void {
  server.enqueue(toolCallStream([call]), textStream("done"));
}

function toolEnd(events: readonly AgentEvent[]): Extract<AgentEvent, { type: "tool_call_end" }> | undefined {
  return events.find((e): e is Extract<AgentEvent, { type: "tool_call_end" }> => e.type === "tool_call_end");
}

describe("path escapes through the agent", () => {
  const cases: Array<[string, (outside: string) => FakeToolCall]> = [
    ["a ../ path", (outside) => ({ name: "read_file", arguments: { path: `../${outside.split("/").at(-1)}/secret.txt` } })],
    ["an absolute path", (outside) => ({ name: "read_file", arguments: { path: join(outside, "secret.txt") } })],
    ["a symlink pointing outside", () => ({ name: "read_file", arguments: { path: "link/secret.txt" } })],
    ["grep through a symlink", () => ({ name: "grep", arguments: { pattern: "SECRET", path: "link" } })],
  ];
  for (const [what, makeCall] of cases) {
    test(`${what}: refused, the model is told why, the secret never leaves`, async () => {
      const outside = await makeGitWorkspace({ "secret.txt": `${SECRET}\n` });
      const root = await makeGitWorkspace({ "src/a.ts": "export const a = 1;\n" });
      symlinkSync(outside, join(root, "link"));
      oneCallThenAnswer(makeCall(outside));
      const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
      const turn = await runTurn(session, "read the secret");

      expect(turn.stopReason).toBe("completed");
      expect(toolEnd(turn.events)).toMatchObject({ isError: true, denied: false });
      const output = outputSeenByModel();
      expect(output).toMatch(/outside the workspace/);
      for (const request of server.requests) expect(request.raw).not.toContain(SECRET);
      expect(recordsOf(session, "tool_call")[0]?.output).not.toContain(SECRET);
    });
  }

  test("write_file to ../ is refused even in full-auto; nothing is written", async () => {
    const root = await makeGitWorkspace();
    oneCallThenAnswer({ name: "write_file", arguments: { path: "../escaped.txt", content: "x" } });
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    await runTurn(session, "write outside");
    expect(outputSeenByModel()).toContain("outside the workspace");
    expect(existsSync(join(root, "..", "escaped.txt"))).toBe(false);
  });
});

describe("headless approvals", () => {
  const write: FakeToolCall = { name: "write_file", arguments: { path: "notes.md", content: "# notes\n" } };
  const shell: FakeToolCall = { name: "run_shell", arguments: { command: "echo ran > shell-ran.txt" } };

  test("suggest: write_file is refused, naming the flag that allows it", async () => {
    const root = await makeGitWorkspace();
    oneCallThenAnswer(write);
    const { session } = await openAgent(root, server);
    const turn = await runTurn(session, "write notes");
    expect(turn.stopReason).toBe("completed");
    expect(toolEnd(turn.events)).toMatchObject({ denied: true, isError: true });
    expect(outputSeenByModel()).toContain("--approvals auto-edit");
    expect(existsSync(join(root, "notes.md"))).toBe(false);
  });

  test("suggest: run_shell is refused, naming --approvals full-auto / --yes", async () => {
    const root = await makeGitWorkspace();
    oneCallThenAnswer(shell);
    const { session } = await openAgent(root, server);
    await runTurn(session, "run it");
    const output = outputSeenByModel();
    expect(output).toContain("--approvals full-auto");
    expect(output).toContain("--yes");
    expect(existsSync(join(root, "shell-ran.txt"))).toBe(false);
  });

  test("auto-edit: write_file runs, run_shell is still refused", async () => {
    const root = await makeGitWorkspace();
    server.enqueue(toolCallStream([write]), toolCallStream([shell]), textStream("done"));
    const { session } = await openAgent(root, server, { settings: { approvals: "auto-edit" } });
    const turn = await runTurn(session, "write and run");
    expect(readFileSync(join(root, "notes.md"), "utf8")).toBe("# notes\n");
    expect(existsSync(join(root, "shell-ran.txt"))).toBe(false);
    const ends = turn.events.filter((e) => e.type === "tool_call_end");
    expect(ends.map((e) => e.type === "tool_call_end" && [e.name, e.denied])).toEqual([
      ["write_file", false],
      ["run_shell", true],
    ]);
  });

  test("full-auto: run_shell runs", async () => {
    const root = await makeGitWorkspace();
    oneCallThenAnswer(shell);
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto" } });
    await runTurn(session, "run it");
    expect(readFileSync(join(root, "shell-ran.txt"), "utf8")).toBe("ran\n");
  });
});

describe("interactive approvals through approval_request", () => {
  async function askedTurn(decide: (event: Extract<AgentEvent, { type: "approval_request" }>) => ApprovalDecision, calls: FakeToolCall[]) {
    const root = await makeGitWorkspace({ "notes.md": "old\n" });
    server.enqueue(...calls.map((call) => toolCallStream([call])), textStream("done"));
    const { session } = await openAgent(root, server, { interactive: true });
    const asked: Array<Extract<AgentEvent, { type: "approval_request" }>> = [];
    const turn = await runTurn(session, "change the notes", {
      onEvent: (event, answer) => {
        if (event.type !== "approval_request") return;
        asked.push(event);
        answer(event.id, decide(event));
      },
    });
    return { root, turn, asked };
  }

  const edit = (content: string): FakeToolCall => ({ name: "write_file", arguments: { path: "notes.md", content } });

  test("allow_once: the write happens; the next write asks again", async () => {
    const { root, turn, asked } = await askedTurn(() => ({ kind: "allow_once" }), [edit("first\n"), edit("second\n")]);
    expect(turn.stopReason).toBe("completed");
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatchObject({ name: "write_file" });
    expect(asked[0]?.diff).toContain("+first");
    expect(readFileSync(join(root, "notes.md"), "utf8")).toBe("second\n");
  });

  test("allow_session: the event says the tool is remembered; asked once, the second write goes through", async () => {
    const { root, asked } = await askedTurn(() => ({ kind: "allow_session", scope: "tool" }), [edit("first\n"), edit("second\n")]);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.remember).toEqual({ kind: "tool", tool: "write_file" });
    expect(readFileSync(join(root, "notes.md"), "utf8")).toBe("second\n");
  });

  test("deny with a note: nothing is written and the note reaches the model", async () => {
    const { root, turn } = await askedTurn(() => ({ kind: "deny", note: "keep notes.md as it is, write NOTES.txt instead" }), [edit("new\n")]);
    expect(turn.stopReason).toBe("completed");
    expect(toolEnd(turn.events)).toMatchObject({ denied: true });
    expect(readFileSync(join(root, "notes.md"), "utf8")).toBe("old\n");
    const output = outputSeenByModel();
    expect(output).toContain("Denied");
    expect(output).toContain("keep notes.md as it is, write NOTES.txt instead");
  });

  test("aborting while the approval is open ends the turn; the write never happens", async () => {
    const root = await makeGitWorkspace({ "notes.md": "old\n" });
    server.enqueue(toolCallStream([edit("new\n")]), textStream("never sent"));
    const { session } = await openAgent(root, server, { interactive: true });
    const abort = new AbortController();
    const turn = await runTurn(session, "change it", {
      signal: abort.signal,
      onEvent: (event) => {
        if (event.type === "approval_request") abort.abort();
      },
    });
    expect(turn.stopReason).toBe("aborted");
    expect(readFileSync(join(root, "notes.md"), "utf8")).toBe("old\n");
    expect(server.requests).toHaveLength(1);
    expect(session.tools.approvals.pending()).toHaveLength(1);

    // Left unanswered, the confirmation expires after 3 turns, and the user is told.
    const notices: string[][] = [];
    for (const text of ["turn two", "turn three", "turn four"]) {
      server.enqueue(textStream("ok"));
      const next = await runTurn(session, text);
      notices.push(next.events.flatMap((e) => (e.type === "notice" ? [e.message] : [])));
    }
    expect(notices[0]).toEqual([]);
    expect(notices[1]).toEqual([]);
    expect(notices[2]).toEqual([expect.stringContaining("expired after 3 turns")]);
    expect(session.tools.approvals.pending()).toEqual([]);
  });
});
