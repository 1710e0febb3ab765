/**
 * The turn loop over real HTTP: the model calls read_file, gets its output, then answers. What
 * the second request carries, what reaches the transcript and the manifests, and the request
 * fields that make valarmind stateless and cache-friendly.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { cleanupTempDirs } from "../support/cli.ts";
import {
  conversationMessages,
  inputItems,
  lastInputItem,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  toolNames,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { createUsageSimulator } from "../support/usage-simulation.ts";
import { eventShape, makeGitWorkspace, manifests, openAgent, records, runTurn } from "./support/agent-harness.ts";

const SOURCE = "export function add(a: number, b: number): number {\n  return a + b;\n}\n";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});
afterAll(cleanupTempDirs);

describe("a multi-step tool loop", () => {
  test("read_file, then an answer: the second request carries the call and its output", async () => {
    const root = await makeGitWorkspace({ "src/add.ts": SOURCE });
    server.enqueue(
      toolCallStream([{ name: "read_file", arguments: { path: "src/add.ts" }, callId: "call_read_1" }], { text: "Let me read it." }),
      textStream("`add` returns the sum of its two arguments."),
    );
    const { session } = await openAgent(root, server);
    const turn = await runTurn(session, "What does src/add.ts do?");

    expect(turn.stopReason).toBe("completed");
    expect(turn.text).toBe("`add` returns the sum of its two arguments.");
    expect(eventShape(turn.types)).toEqual([
      "session_start",
      "turn_start",
      "request_built",
      "text_delta",
      "usage",
      "tool_call_start",
      "tool_call_end",
      "request_built",
      "text_delta",
      "usage",
      "turn_end",
    ]);
    expect(server.requests).toHaveLength(2);

    const first = inputItems(server.requests[0]?.body ?? {});
    expect(conversationMessages(server.requests[0]?.body ?? {}).at(-1)).toEqual({ type: "message", role: "user", content: "What does src/add.ts do?" } as never);
    expect(first.some((i) => i.type === "function_call")).toBe(false);

    const second = inputItems(server.requests[1]?.body ?? {});
    const userAt = second.findLastIndex((i) => i.type === "message" && i.role === "user");
    const afterUser = second.slice(userAt + 1);
    expect(afterUser.map((i) => i.type)).toEqual(["message", "function_call", "function_call_output"]);
    expect(afterUser[0]).toMatchObject({ role: "assistant", content: "Let me read it." });
    expect(afterUser[1]).toMatchObject({ call_id: "call_read_1", name: "read_file", arguments: '{"path":"src/add.ts"}' });
    expect(afterUser[2]?.call_id).toBe("call_read_1");
    expect(afterUser[2]?.output).toContain("return a + b;");
    expect(lastInputItem(server.requests[1]?.body ?? {})?.type).toBe("function_call_output");
  });

  test("the transcript holds user, assistant, tool_call, assistant and turn_end records, in order", async () => {
    const root = await makeGitWorkspace({ "src/add.ts": SOURCE });
    server.enqueue(
      toolCallStream([{ name: "read_file", arguments: { path: "src/add.ts" }, callId: "call_r" }], { text: "Reading." }),
      textStream("It adds."),
    );
    const { session } = await openAgent(root, server);
    await runTurn(session, "explain src/add.ts");

    const list = records(session).filter((r) => r.kind !== "working_set");
    expect(list.map((r) => r.kind)).toEqual(["user", "state_snapshot", "turn_context", "assistant", "tool_call", "assistant", "turn_end"]);
    const [user, , context, commentary, call, answer, end] = list;
    expect(context).toMatchObject({ kind: "turn_context", turn: 1, state_changes: "" });
    expect((context as { context: string }).context).toContain("<volatile_context");
    expect(user).toMatchObject({ kind: "user", turn: 1, text: "explain src/add.ts" });
    expect(commentary).toMatchObject({ kind: "assistant", turn: 1, step: 1, text: "Reading." });
    expect(call).toMatchObject({ kind: "tool_call", turn: 1, step: 1, call_id: "call_r", name: "read_file", is_error: false });
    if (call?.kind !== "tool_call") throw new Error("expected a tool_call record");
    expect(call.output).toContain("return a + b;");
    expect(call.tokens?.output).toBeGreaterThan(0);
    expect(answer).toMatchObject({ kind: "assistant", turn: 1, step: 2, text: "It adds." });
    expect(end).toMatchObject({ kind: "turn_end", turn: 1, steps: 2, stop_reason: "completed" });
  });

  test("one manifest per model call, its usage recorded after the call and summed in turn_end", async () => {
    const root = await makeGitWorkspace({ "src/add.ts": SOURCE });
    server.enqueue(
      toolCallStream([{ name: "read_file", arguments: { path: "src/add.ts" } }], { usage: { input_tokens: 3100, cached_tokens: 0, output_tokens: 21 } }),
      textStream("Done.", { usage: { input_tokens: 3300, cached_tokens: 3072, output_tokens: 5, reasoning_tokens: 2 } }),
    );
    const { session } = await openAgent(root, server);
    await runTurn(session, "read src/add.ts");

    const list = await manifests(session);
    expect(list.map((m) => [m.turn, m.step, m.purpose])).toEqual([
      [1, 1, "turn"],
      [1, 2, "turn"],
    ]);
    expect(list[0]?.usage).toEqual({ input: 3100, cached: 0, output: 21, reasoning: 0 });
    expect(list[1]?.usage).toEqual({ input: 3300, cached: 3072, output: 5, reasoning: 2 });
    for (const manifest of list) {
      expect(manifest.total_tokens).toBeGreaterThan(0);
      expect(manifest.prompt_cache_key).toBe(`valarmind-${session.sessionId}`);
    }
    const end = records(session).find((r) => r.kind === "turn_end");
    expect(end).toMatchObject({ usage: { input: 6400, cached: 3072, output: 26, reasoning: 2 } });
    expect(session.lastRequest?.cachedShare).toBeCloseTo(3072 / 3300, 6);
  });

  test("stateless requests: store:false, no previous_response_id, the same prompt_cache_key on every turn", async () => {
    const root = await makeGitWorkspace({ "src/add.ts": SOURCE });
    server.enqueue(
      toolCallStream([{ name: "read_file", arguments: { path: "src/add.ts" } }]),
      textStream("first answer"),
      textStream("second answer"),
    );
    const { session } = await openAgent(root, server);
    await runTurn(session, "turn one");
    await runTurn(session, "turn two");

    expect(server.requests).toHaveLength(3);
    const keys = new Set(server.requests.map((r) => r.body.prompt_cache_key));
    expect([...keys]).toEqual([`valarmind-${session.sessionId}`]);
    for (const request of server.requests) {
      expect(request.body.store).toBe(false);
      expect(request.stream).toBe(true);
      expect("previous_response_id" in request.body).toBe(false);
      expect(toolNames(request.body)).toEqual(expect.arrayContaining(["read_file", "grep", "run_shell", "write_file", "memory_task"]));
    }
    // Turn two's request carries turn one again (the window), since nothing is stored server-side.
    const third = inputItems(server.requests[2]?.body ?? {});
    expect(third.filter((i) => i.type === "message" && i.role === "user").map((i) => i.content)).toEqual(
      expect.arrayContaining(["turn one", "turn two"]),
    );
    expect(third.find((i) => i.type === "message" && i.role === "assistant" && i.content === "first answer")).toBeDefined();
  });

  test("a later turn resends the earlier turn's tool call as it was, so the prefix stays cacheable", async () => {
    const root = await makeGitWorkspace({ "src/add.ts": SOURCE });
    const usage = createUsageSimulator();
    let calls = 0;
    server.setResponder(async (body) => {
      calls++;
      const spec = { request: body, usage: await usage(body) };
      if (calls === 1) return toolCallStream([{ name: "read_file", arguments: { path: "src/add.ts" }, callId: "call_a" }], spec);
      return textStream(`answer ${calls}`, spec);
    });
    const { session } = await openAgent(root, server);
    await runTurn(session, "look at src/add.ts");
    const second = await runTurn(session, "and now?");
    expect(second.stopReason).toBe("completed");

    const last = inputItems(server.requests[2]?.body ?? {});
    const call = last.find((i) => i.type === "function_call");
    expect(call).toMatchObject({ call_id: "call_a", name: "read_file" });
    // The turn's last request, as the usage simulator saw it: most of it was already sent.
    const usageEvent = second.events.find((e) => e.type === "usage");
    expect(usageEvent?.type === "usage" && usageEvent.usage.cached).toBeGreaterThan(1024);
  });
});
