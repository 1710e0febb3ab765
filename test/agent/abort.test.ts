/**
 * Aborting a turn through its AbortSignal: mid-stream (the server holds the stream on a gate),
 * during a running shell command, and before anything was sent. The turn ends with stopReason
 * "aborted", what streamed so far is kept, and nothing keeps running.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { cleanupTempDirs } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, toolCallStream, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { errorEvents, gatedBefore, makeGitWorkspace, openAgent, records, recordsOf, runTurn } from "./support/agent-harness.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("abort", () => {
  test("mid-stream: stopReason aborted, the partial text kept in the transcript, the HTTP stream closed", async () => {
    const root = await makeGitWorkspace();
    const partial = "Here is the first half of a long answer";
    const { response, gate } = gatedBefore(textStream(partial), "response.output_text.done");
    server.enqueue(response);
    const { session } = await openAgent(root, server);
    const abort = new AbortController();
    let streamed = "";
    const turn = await runTurn(session, "write a long answer", {
      signal: abort.signal,
      onEvent: (event) => {
        if (event.type !== "text_delta") return;
        streamed += event.delta;
        if (streamed === partial) abort.abort();
      },
    });

    expect(turn.stopReason).toBe("aborted");
    expect(errorEvents(turn.events)).toEqual([]);
    expect(await server.outcome(0)).toBe("client_gone");
    gate.release();
    expect(recordsOf(session, "assistant").map((r) => r.text)).toEqual([partial]);
    expect(recordsOf(session, "turn_end")).toEqual([expect.objectContaining({ turn: 1, stop_reason: "aborted", steps: 1 })]);
    // The aborted turn is in the window: the next request shows what the user saw.
    server.enqueue(textStream("ok"));
    await runTurn(session, "go on");
    expect(JSON.stringify(server.requests[1]?.body.input)).toContain(partial);
  });

  test("during a running shell command: the command's process group is killed and the turn ends", async () => {
    const root = await makeGitWorkspace();
    const fifo = join(root, "ready.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    server.enqueue(toolCallStream([{ name: "run_shell", arguments: { command: "echo $$ > ready.fifo; sleep 30; echo fini\"\"shed" } }]));
    // Unsandboxed: the process-group kill is what this checks, and `$$` must be a host pid (in the
    // sandbox it is the PID namespace's; test/security/shell-sandbox.test.ts covers that lifetime).
    const { session } = await openAgent(root, server, { settings: { approvals: "full-auto", sandbox: "off" } });
    const abort = new AbortController();
    // The command writes its shell's pid into the FIFO once it runs; reading it blocks until then.
    const shellPid = readFile(fifo, "utf8").then((text) => Number(text.trim()));
    const turnDone = runTurn(session, "run the slow thing", { signal: abort.signal });
    const pid = await shellPid;
    expect(isAlive(pid)).toBe(true);
    abort.abort();
    const turn = await turnDone;

    expect(turn.stopReason).toBe("aborted");
    expect(isAlive(pid)).toBe(false);
    const end = turn.events.find((e) => e.type === "tool_call_end");
    expect(end).toMatchObject({ name: "run_shell", isError: true });
    const call = recordsOf(session, "tool_call")[0];
    expect(call?.output).toContain("aborted");
    expect(call?.output).not.toContain("finished");
    expect(server.requests).toHaveLength(1);
    expect(recordsOf(session, "turn_end").at(-1)).toMatchObject({ stop_reason: "aborted" });
  });

  test("an already aborted signal: nothing is sent, the message is still saved", async () => {
    const root = await makeGitWorkspace();
    const { session } = await openAgent(root, server);
    const abort = new AbortController();
    abort.abort();
    const turn = await runTurn(session, "never mind", { signal: abort.signal });
    expect(turn.stopReason).toBe("aborted");
    expect(server.requests).toHaveLength(0);
    // The state snapshot (ADR 0063) is taken with the turn's sources, before the first request.
    expect(records(session).map((r) => r.kind)).toEqual(["user", "state_snapshot", "turn_end"]);
  });
});
