/**
 * `valarmind chat -p` spawned for real against a Chat Completions server (VALARMIND_WIRE_API=chat):
 * a tool-call round trip, usage into the manifest, and the 404 hint when the default Responses
 * wire meets a server without /v1/responses.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { cleanupTempDirs } from "../support/cli.ts";
import {
  chatMessages,
  chatTextStream,
  chatToolCallStream,
  chatToolResultsThisTurn,
  lastChatUserText,
  startFakeChatServer,
  type FakeChatServer,
} from "../support/fake-chat-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, jsonEvents, latestRecords } from "../agent/support/cli-chat.ts";

let server: FakeChatServer;
let root: string;
beforeEach(async () => {
  server = startFakeChatServer();
  root = await makeGitWorkspace({ "src/app.ts": "export const port = 4173;\n", "README.md": "# demo\n" });
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

const onChatWire = () => ({ OPENAI_BASE_URL: server.baseURL, VALARMIND_WIRE_API: "chat" });

/** Reads src/app.ts first, answers once the tool result is in the request. */
function portConversation(): void {
  server.setResponder((body) =>
    chatToolResultsThisTurn(body).length === 0
      ? chatToolCallStream([{ name: "read_file", arguments: { path: "src/app.ts" } }], { text: "Reading the file." })
      : chatTextStream("Port 4173.", { usage: { prompt: 2100, cached: 1920, completion: 5 } }),
  );
}

describe("chat -p over Chat Completions", () => {
  test("a tool-call round trip: the call runs, its result goes back as a tool message, the answer is printed", async () => {
    portConversation();
    const r = await chat(["-p", "which port?"], { cwd: root, env: onChatWire() });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Port 4173.\n");
    expect(server.notFound).toEqual([]);
    expect(server.requests.map((q) => q.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"]);

    const first = chatMessages(server.requests[0]?.body ?? {});
    expect(first[0]?.role).toBe("system");
    expect(lastChatUserText(server.requests[0]?.body ?? {})).toContain("which port?");
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect((server.requests[0]?.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name)).toContain("read_file");

    const second = chatMessages(server.requests[1]?.body ?? {});
    const asked = second.find((m) => m.role === "assistant" && m.tool_calls.length > 0);
    expect(asked?.content).toBe("Reading the file.");
    expect(asked?.tool_calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([["read_file", { path: "src/app.ts" }]]);
    const [result] = chatToolResultsThisTurn(server.requests[1]?.body ?? {});
    expect(result?.tool_call_id).toBe(asked?.tool_calls[0]?.id);
    expect(result?.content).toContain("export const port = 4173;");
    // What strict chat templates demand: no two user or two assistant messages in a row.
    const pairs = second.slice(1).map((m, i) => `${second[i]?.role}>${m.role}`);
    expect(pairs.filter((p) => p === "user>user" || p === "assistant>assistant")).toEqual([]);

    expect(latestRecords(root).map((rec) => rec.kind)).toEqual(["user", "state_snapshot", "turn_context", "assistant", "tool_call", "assistant", "turn_end"]);
  });

  test("--json: the usage event carries the cached tokens, and the manifest records the server's usage", async () => {
    portConversation();
    const r = await chat(["-p", "which port?", "--json"], { cwd: root, env: onChatWire() });
    expect(r.code).toBe(0);
    const events = jsonEvents(r.stdout);
    const usages = events.filter((e) => e.type === "usage");
    expect(usages.at(-1)).toMatchObject({ usage: { input: 2100, cached: 1920, output: 5, reasoning: 0 } });
    const manifests = events.flatMap((e) => (e.type === "request_built" && typeof e.manifest === "object" && e.manifest !== null ? [(e.manifest as { path: string }).path] : []));
    expect(manifests).toHaveLength(2);
    const last = JSON.parse(readFileSync(manifests[1] ?? "", "utf8")) as { usage?: unknown; items: Array<{ type: string }> };
    expect(last.usage).toEqual({ input: 2100, cached: 1920, output: 5, reasoning: 0 });
    expect(last.items.some((item) => item.type === "tool")).toBe(true);
  });

  test("reasoning deltas reach --json as reasoning_delta events", async () => {
    server.enqueue(chatTextStream("Four.", { reasoning: "Two plus two is four." }));
    const r = await chat(["-p", "2+2?", "--json"], { cwd: root, env: onChatWire() });
    expect(r.code).toBe(0);
    const reasoning = jsonEvents(r.stdout).flatMap((e) => (e.type === "reasoning_delta" && typeof e.delta === "string" ? [e.delta] : []));
    expect(reasoning.join("")).toBe("Two plus two is four.");
  });
});

describe("the default Responses wire against a chat-only server", () => {
  test("exit 1; stderr says there is no /responses and names wireApi and VALARMIND_WIRE_API", async () => {
    const r = await chat(["-p", "hello"], { cwd: root, env: { OPENAI_BASE_URL: server.baseURL } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the server at ${server.baseURL} has no /responses endpoint (File Not Found)`);
    expect(r.stderr).toContain('"wireApi": "chat"');
    expect(r.stderr).toContain("VALARMIND_WIRE_API=chat");
    expect(server.notFound).toEqual(["POST /v1/responses"]);
    expect(server.requests).toEqual([]);
  });

  test("an unknown VALARMIND_WIRE_API is a usage error naming the variable and the allowed values", async () => {
    const r = await chat(["-p", "hello"], { cwd: root, env: { OPENAI_BASE_URL: server.baseURL, VALARMIND_WIRE_API: "completions" } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('VALARMIND_WIRE_API="completions"');
    expect(r.stderr).toContain('must be one of "responses", "chat"');
    expect(server.notFound).toEqual([]);
  });
});
