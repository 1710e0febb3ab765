/**
 * MCP tools through an interactive AgentSession (what the REPL drives): even in full-auto a call
 * asks, the approval request offers to remember the tool, and once remembered the next call runs
 * unasked. A server that failed to start is among the session's opening notices, told once.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { resolve } from "node:path";
import { AgentSession } from "../../src/agent/session.ts";
import type { AgentEvent } from "../../src/agent/events.ts";
import { startMcpServers, type McpToolSet } from "../../src/mcp/start-servers.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { startFakeResponsesServer, textStream, toolCallStream, toolOutputsThisTurn, type FakeResponsesServer } from "../support/fake-responses-server.ts";
import { fakeModel, makeGitWorkspace, runTurn, testSettings } from "../agent/support/agent-harness.ts";

const ECHO_SERVER = resolve(import.meta.dir, "../fixtures/mcp/echo-server.ts");

let server: FakeResponsesServer;
let mcp: McpToolSet | undefined;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await mcp?.close();
  await server.close();
});
afterAll(cleanupTempDirs);

test("in full-auto an MCP call still asks; 'allow for this session' covers that tool's later calls", async () => {
  const root = await makeGitWorkspace({ "README.md": "# demo\n" });
  const settings = testSettings({
    approvals: "full-auto",
    mcpServers: { echo: { command: process.execPath, args: [ECHO_SERVER] }, gone: { command: "valarmind-no-such-mcp-server" } },
  });
  mcp = await startMcpServers(settings, root);
  const session = await AgentSession.open({ root, settings, model: fakeModel(server), interactive: true, resume: { kind: "new" }, mcp });
  try {
    expect(session.openNoticeEvents).toEqual([expect.objectContaining({ code: "mcp_server_failed", message: expect.stringContaining('MCP server "gone" did not start') })]);
    expect(mcp.takeNotices()).toEqual([]);

    server.enqueue(
      toolCallStream([{ name: "mcp__echo__echo", arguments: { text: "one" } }]),
      toolCallStream([{ name: "mcp__echo__echo", arguments: { text: "two" } }]),
      textStream("done"),
    );
    const asked: Array<Extract<AgentEvent, { type: "approval_request" }>> = [];
    const turn = await runTurn(session, "echo twice", {
      onEvent: (event, answer) => {
        if (event.type !== "approval_request") return;
        asked.push(event);
        answer(event.id, { kind: "allow_session", scope: "tool" });
      },
    });
    expect(turn.stopReason).toBe("completed");
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ name: "mcp__echo__echo", description: 'mcp echo: echo {"text":"one"}', remember: { kind: "tool", tool: "mcp__echo__echo" } });
    expect(toolOutputsThisTurn(server.requests[1]?.body ?? {}).map((o) => o.output)).toEqual(["echo: one"]);
    expect(toolOutputsThisTurn(server.requests[2]?.body ?? {}).map((o) => o.output)).toEqual(["echo: one", "echo: two"]);
    expect(session.tools.approvals.sessionAllowances()).toEqual(["mcp__echo__echo: every call (except calls with a warning)"]);
  } finally {
    await session.close();
  }
});
