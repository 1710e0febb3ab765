/**
 * The fake Responses server itself: wire format, scripting, recording. Other suites rely on it.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createOpenAIClient } from "../../src/model/openai-client.ts";
import type { ModelRequest, ModelStreamEvent } from "../../src/model/types.ts";
import {
  buildResponseStream,
  fixtureError,
  fixtureStream,
  lastInputItem,
  lastUserText,
  parseSse,
  parseSseData,
  readFixture,
  startFakeResponsesServer,
  textStream,
  toolCallStream,
  toolOutputsThisTurn,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";

let server: FakeResponsesServer;
beforeEach(() => {
  server = startFakeResponsesServer();
});
afterEach(async () => {
  await server.close();
});

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-test" },
    body: JSON.stringify(body),
  });
}

type Raw = { type: string; sequence_number?: number; output_index?: number; item_id?: string; item?: { id?: string; type?: string }; delta?: string; text?: string; arguments?: string; response?: Record<string, unknown> };

describe("wire format", () => {
  test("a recorded fixture is served byte-for-byte as text/event-stream", async () => {
    server.enqueue(fixtureStream("reasoning_stream.sse"));
    const response = await post("/v1/responses", { model: "m", input: "x", stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
    expect(await response.text()).toBe(readFixture("reasoning_stream.sse"));
  });

  test("a built text stream has the recorded shape: framing, sequence numbers, ids, echoed request", async () => {
    const request = { model: "gpt-5.5", instructions: "Be brief.", input: "hi", tools: [], prompt_cache_key: "k1", store: false };
    const body = buildResponseStream({ text: "Hello there, friend.", request, usage: { input_tokens: 50 } });
    const frames = parseSse(body);
    expect(frames.every((f) => f.event === (JSON.parse(f.data) as Raw).type)).toBe(true);
    const events = parseSseData(body) as Raw[];
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      ...Array(3).fill("response.output_text.delta"),
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const deltas = events.filter((e) => e.type === "response.output_text.delta");
    expect(deltas.map((e) => e.delta).join("")).toBe("Hello there, friend.");
    const itemId = events[2]?.item?.id ?? "";
    expect(itemId).toMatch(/^msg_[0-9a-f]{50}$/);
    expect(deltas.every((e) => e.item_id === itemId && e.output_index === 0 && typeof (e as { obfuscation?: unknown }).obfuscation === "string")).toBe(true);
    const final = events.at(-1)?.response ?? {};
    expect(final).toMatchObject({ status: "completed", model: "gpt-5.5", instructions: "Be brief.", prompt_cache_key: "k1", store: false });
    expect(final.usage).toMatchObject({ input_tokens: 50, input_tokens_details: { cached_tokens: 0 } });
    expect(String(final.id)).toBe(String(events[0]?.response?.id));
  });

  test("a built tool-call stream: commentary message at index 0, parallel calls after it", () => {
    const body = buildResponseStream({
      text: "Reading both files.",
      toolCalls: [
        { name: "read_file", arguments: { path: "src/a.ts" } },
        { name: "read_file", arguments: { path: "src/b.ts" }, callId: "call_fixed" },
      ],
    });
    const events = parseSseData(body) as Raw[];
    const added = events.filter((e) => e.type === "response.output_item.added");
    expect(added.map((e) => [e.item?.type, e.output_index])).toEqual([["message", 0], ["function_call", 1], ["function_call", 2]]);
    for (const index of [1, 2]) {
      const deltas = events.filter((e) => e.type === "response.function_call_arguments.delta" && e.output_index === index);
      const done = events.find((e) => e.type === "response.function_call_arguments.done" && e.output_index === index);
      expect(deltas.map((e) => e.delta).join("")).toBe(done?.arguments ?? "?");
    }
    const output = events.at(-1)?.response?.output as Array<{ type: string; phase?: string; call_id?: string }>;
    expect(output.map((o) => o.phase ?? o.type)).toEqual(["commentary", "function_call", "function_call"]);
    expect(output[2]?.call_id).toBe("call_fixed");
  });

  test("a non-stream request gets the final response object as JSON", async () => {
    server.enqueue(fixtureStream("text_stream.sse"));
    const response = await post("/v1/responses", { model: "m", input: "x" });
    expect(response.headers.get("content-type")).toBe("application/json");
    const json = (await response.json()) as { status: string; output: unknown[] };
    expect(json.status).toBe("completed");
    expect(json.output).toHaveLength(1);
  });

  test("HTTP errors carry the fixture body and headers, overrides added", async () => {
    server.enqueue(fixtureError("error_429", { headers: { "retry-after": "1" } }));
    const response = await post("/v1/responses", { model: "m", input: "x", stream: true });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(response.headers.get("openai-version")).toBe("2020-10-01");
    expect(await response.text()).toBe(readFixture("error_429.json"));
  });

  test("input_tokens answers the recorded body by default", async () => {
    const response = await post("/v1/responses/input_tokens", { model: "m", input: "x" });
    expect(await response.text()).toBe(readFixture("input_tokens.json"));
    expect(server.tokenCountRequests).toHaveLength(1);
    expect(server.requests).toHaveLength(0);
  });
});

describe("scripting", () => {
  test("an empty script answers 400 fake_script_exhausted and records the problem", async () => {
    const response = await post("/v1/responses", { model: "m", input: "x", stream: true });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("fake_script_exhausted");
    expect(server.problems).toEqual([expect.stringContaining("no scripted response left for /v1/responses request #0")]);
  });

  test("unknown routes are 404 and recorded as problems", async () => {
    const response = await post("/v1/chat/completions", {});
    expect(response.status).toBe(404);
    expect(server.problems).toEqual(["unexpected POST /v1/chat/completions"]);
  });

  test("a responder drives a tool loop from what the client sent; the queue goes first", async () => {
    server.enqueue(textStream("queued first"));
    server.setResponder((body) => {
      if (toolOutputsThisTurn(body).length > 0) return textStream(`The file says: ${lastInputItem(body)?.output ?? "?"}`);
      return toolCallStream([{ name: "read_file", arguments: { path: lastUserText(body) } }], { request: body });
    });
    const client = createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL });
    const base: ModelRequest = { model: "gpt-5.5", instructions: "", input: [], tools: [], prompt_cache_key: "k", store: false };
    const run = async (input: ModelRequest["input"]) => {
      const events: ModelStreamEvent[] = [];
      for await (const event of client.stream({ ...base, input })) events.push(event);
      const done = events.at(-1);
      if (done?.type !== "completed") throw new Error(JSON.stringify(done));
      return done;
    };
    expect((await run([{ type: "message", role: "user", content: "ignored" }])).text).toBe("queued first");
    const user = { type: "message" as const, role: "user" as const, content: "notes.md" };
    const first = await run([user]);
    const call = first.toolCalls[0];
    expect(call).toMatchObject({ name: "read_file", arguments: '{"path":"notes.md"}' });
    const second = await run([
      user,
      { type: "function_call", call_id: call?.callId ?? "", name: "read_file", arguments: call?.arguments ?? "" },
      { type: "function_call_output", call_id: call?.callId ?? "", output: "buy milk" },
    ]);
    expect(second.text).toBe("The file says: buy milk");
    expect(server.requests.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(server.requests[2]?.body.input).toHaveLength(3);
    expect(server.problems).toEqual([]);
  });

  test("a throwing responder gives a 500 the client does not retry, and a recorded problem", async () => {
    server.setResponder(() => {
      throw new Error("script bug");
    });
    const client = createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL });
    const events: ModelStreamEvent[] = [];
    for await (const event of client.stream({ model: "m", instructions: "", input: [], tools: [], prompt_cache_key: "k", store: false })) events.push(event);
    expect(events).toEqual([expect.objectContaining({ type: "error", kind: "server", status: 500 })]);
    expect(server.requests).toHaveLength(1);
    expect(server.problems[0]).toContain("script bug");
  });
});
