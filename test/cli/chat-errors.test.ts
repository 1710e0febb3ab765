/**
 * Model failures through the spawned CLI: each one exits 1 with a clear message on stderr (stdout
 * stays free of it), and the user's message is in the transcript. Retries the server asks for
 * (429 retry-after) end in success, exit 0.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { cleanupTempDirs } from "../support/cli.ts";
import {
  cutAfter,
  failedStream,
  fixtureError,
  fixtureStream,
  startFakeResponsesServer,
  textStream,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { makeGitWorkspace } from "../agent/support/agent-harness.ts";
import { chat, expectFailedChat, jsonEvents, latestRecords } from "../agent/support/cli-chat.ts";

let server: FakeResponsesServer;
let root: string;
beforeEach(async () => {
  server = startFakeResponsesServer();
  root = await makeGitWorkspace();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

describe("chat -p: every model error is exit 1 with a message, and the message is kept", () => {
  test("no API key against api.openai.com", async () => {
    const r = await chat(["-p", "hello"], { cwd: root });
    expectFailedChat(r, root, "hello");
    expect(r.stderr).toContain("error: OPENAI_API_KEY is not set; export it or set OPENAI_BASE_URL to a local Responses server");
    expect(r.stdout).toBe("");
  });

  test("401", async () => {
    server.enqueue(fixtureError("error_401", { status: 401 }));
    const r = await chat(["-p", "hello"], { cwd: root, server, env: { OPENAI_API_KEY: "sk-test-not-a-real-key" } });
    expectFailedChat(r, root, "hello");
    expect(r.stderr).toContain("Incorrect API key provided");
    expect(r.stderr).toContain("OPENAI_API_KEY");
    expect(server.requests).toHaveLength(1);
  });

  test("429 with retry-after: retried after the server's delay, then the answer (exit 0)", async () => {
    server.enqueue(fixtureError("error_429", { headers: { "retry-after-ms": "40" } }), textStream("after the wait"));
    const r = await chat(["-p", "hello", "--json"], { cwd: root, server });
    expect(r.code).toBe(0);
    const events = jsonEvents(r.stdout);
    expect(events.find((e) => e.type === "retry")).toMatchObject({ attempt: 1, delayMs: 40 });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", text: "after the wait", stopReason: "completed" });
    expect(server.requests).toHaveLength(2);
  });

  test("5xx until the retries run out", async () => {
    for (let i = 0; i < 4; i++) server.enqueue(fixtureError("error_500", { status: 500, headers: { "retry-after-ms": "0" } }));
    const r = await chat(["-p", "hello"], { cwd: root, server });
    expectFailedChat(r, root, "hello");
    expect(r.stderr).toContain("after 3 retries");
    expect(r.stderr.match(/retrying in/g)).toHaveLength(3);
    expect(server.requests).toHaveLength(4);
  });

  test("connection refused (a closed port)", async () => {
    const closed = startFakeResponsesServer();
    await closed.close();
    const r = await chat(["-p", "hello"], { cwd: root, server: closed });
    expectFailedChat(r, root, "hello");
    expect(r.stderr).toContain(`Could not reach ${closed.baseURL} (connection refused)`);
  });

  test("a stream cut before its terminal event: the partial text stays in the transcript", async () => {
    server.enqueue(cutAfter(textStream("The answer is forty two."), 6));
    const r = await chat(["-p", "hello"], { cwd: root, server });
    const list = expectFailedChat(r, root, "hello");
    expect(r.stderr).toMatch(/error: .*stream/i);
    expect(list.find((rec) => rec.kind === "assistant")).toMatchObject({ text: "The answer" });
  });

  test("context_length_exceeded once: the window is folded and the retry answers (exit 0)", async () => {
    server.enqueue(textStream("one"), textStream("two"));
    await chat(["-p", "first"], { cwd: root, server });
    await chat(["--continue", "-p", "second"], { cwd: root, server });
    server.enqueue(fixtureError("context_length_400"), textStream("fits now"));
    const r = await chat(["--continue", "-p", "third"], { cwd: root, server });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("fits now\n");
    expect(r.stderr).toContain("context window exceeded");
    expect(latestRecords(root).find((rec) => rec.kind === "summary")).toMatchObject({ reason: "budget", through_turn: 2 });
  });

  test("context_length_exceeded again after the fold (HTTP 400, then in-stream): exit 1", async () => {
    server.enqueue(textStream("one"));
    await chat(["-p", "first"], { cwd: root, server });
    server.enqueue(fixtureError("context_length_400"), fixtureStream("failed_event_context_length.sse"));
    const r = await chat(["--continue", "-p", "too long"], { cwd: root, server });
    expectFailedChat(r, root, "too long");
    expect(r.stderr).toMatch(/error: .*context/i);
    expect(server.requests).toHaveLength(3);
  });

  test("--json: the error is an event line, exit 1 (a server_error before any output is retried first)", async () => {
    for (let i = 0; i < 4; i++) server.enqueue(failedStream("server_error", "The server had an error while processing your request."));
    const r = await chat(["-p", "hello", "--json"], { cwd: root, server });
    expect(r.code).toBe(1);
    const events = jsonEvents(r.stdout);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(3);
    expect(server.requests).toHaveLength(4);
    expect(events.find((e) => e.type === "error")).toMatchObject({ message: expect.stringContaining("server had an error") });
    expect(events.at(-1)).toMatchObject({ type: "turn_end", stopReason: "error" });
  });
});
