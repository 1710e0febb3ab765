/**
 * The chat wire's stream mapper on the recorded Chat Completions streams in
 * test/fixtures/chat-completions/ (provenance: SOURCES.md there), without HTTP.
 */
import { describe, expect, test } from "bun:test";
import { createChatStreamMapper, mapChatStreamEvents, mapChatUsage } from "../../src/model/chat-stream-events.ts";
import type { ModelStreamEvent } from "../../src/model/types.ts";
import { buildChatStream, parseChatSse, readChatFixture } from "../support/fake-chat-server.ts";

const ctx = { baseURL: "http://127.0.0.1:9/v1" };

const mapFixture = (name: string): ModelStreamEvent[] => mapChatStreamEvents(parseChatSse(readChatFixture(name)), ctx);
const textOf = (events: ModelStreamEvent[]) => events.flatMap((e) => (e.type === "text_delta" ? [e.delta] : [])).join("");
const reasoningOf = (events: ModelStreamEvent[]) => events.flatMap((e) => (e.type === "reasoning_delta" ? [e.delta] : [])).join("");
const completedOf = (events: ModelStreamEvent[]) => {
  const done = events.at(-1);
  if (done?.type !== "completed") throw new Error(`the last event is not completed: ${JSON.stringify(events.slice(-3))}`);
  return done;
};

describe("text", () => {
  test("openai_text_stream.sse: 300 deltas add up to the text, the separate usage chunk is read", () => {
    const events = mapFixture("openai_text_stream.sse");
    const text = textOf(events);
    expect(events.filter((e) => e.type === "text_delta")).toHaveLength(300);
    expect(text.startsWith("**Holiday Name:** Harmony Day\n\n**Date:** Celebrated annually on the first Saturday of May")).toBe(true);
    expect(text).toHaveLength(1724);
    const done = completedOf(events);
    expect(done).toMatchObject({ status: "completed", text, toolCalls: [], responseId: "chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0" });
    expect(done.usage).toEqual({ input: 16, cached: 0, output: 300, reasoning: 0 });
    expect(events.some((e) => e.type === "reasoning_delta" || e.type === "tool_call")).toBe(false);
  });

  test("openai_refusal_stream.sse: refusal deltas are the answer's text", () => {
    const events = mapFixture("openai_refusal_stream.sse");
    expect(textOf(events)).toBe("I'm very sorry, but I can't assist with that request.");
    expect(completedOf(events)).toMatchObject({ status: "completed", text: "I'm very sorry, but I can't assist with that request." });
    expect(completedOf(events).usage).toEqual({ input: 17, cached: 0, output: 13, reasoning: 0 });
  });
});

describe("tool calls", () => {
  test("openai_parallel_tool_calls_stream.sse: two calls accumulated by index, emitted in order before completed", () => {
    const events = mapFixture("openai_parallel_tool_calls_stream.sse");
    expect(events.map((e) => e.type)).toEqual([
      "tool_call_start",
      "tool_call_arguments_delta",
      "tool_call_start",
      "tool_call_arguments_delta",
      "tool_call",
      "tool_call",
      "completed",
    ]);
    const calls = [
      { callId: "call_q2UyBRP7eXNTzAoR8lEhjc9Z", name: "get_country", arguments: "{}" },
      { callId: "call_b51ijcpFkDiTQG1bQzsrmtW5", name: "get_product_name", arguments: "{}" },
    ];
    expect(events.flatMap((e) => (e.type === "tool_call" ? [e.call] : []))).toEqual(calls);
    expect(completedOf(events)).toMatchObject({ status: "completed", text: "", toolCalls: calls });
    expect(completedOf(events).usage).toEqual({ input: 364, cached: 0, output: 40, reasoning: 0 });
  });

  test("deepseek_reasoning_tool_call_stream.sse: reasoning_content, then one call whose arguments arrive in 11 pieces", () => {
    const events = mapFixture("deepseek_reasoning_tool_call_stream.sse");
    expect(reasoningOf(events)).toBe(
      'The user is asking for the weather in San Francisco. I need to use the weather tool to get this information. Let me invoke the weather tool with the location parameter set to "San Francisco".',
    );
    const callId = "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF";
    const deltas = events.flatMap((e) => (e.type === "tool_call_arguments_delta" && e.callId === callId ? [e.delta] : []));
    expect(deltas.join("")).toBe('{"location": "San Francisco"}');
    expect(events.findIndex((e) => e.type === "tool_call_start")).toBeGreaterThan(events.findLastIndex((e) => e.type === "reasoning_delta"));
    const done = completedOf(events);
    expect(done.toolCalls).toEqual([{ callId, name: "weather", arguments: '{"location": "San Francisco"}' }]);
    // Usage rides on the finish chunk here; cached_tokens 320 of 339 prompt tokens.
    expect(done.usage).toEqual({ input: 339, cached: 320, output: 83, reasoning: 39 });
  });

  test("xai_reasoning_tool_call_cached_stream.sse: a whole call in one chunk, cached tokens from the last usage chunk", () => {
    const events = mapFixture("xai_reasoning_tool_call_cached_stream.sse");
    expect(reasoningOf(events).startsWith("First, the user is asking about the weather in San Francisco.")).toBe(true);
    expect(reasoningOf(events)).toHaveLength(1069);
    const done = completedOf(events);
    expect(done.toolCalls).toEqual([{ callId: "call_79382389", name: "weather", arguments: '{"location":"San Francisco"}' }]);
    expect(done.usage).toEqual({ input: 307, cached: 306, output: 26, reasoning: 227 });
  });

  test("a call without arguments gets {}; a server without index or ids still yields distinct calls", () => {
    const chunk = (delta: unknown, finish: string | null = null) => ({ id: "chatcmpl-x", choices: [{ index: 0, delta, finish_reason: finish }] });
    const events = mapChatStreamEvents(
      [
        chunk({ tool_calls: [{ function: { name: "list_dir", arguments: "" } }] }),
        chunk({ tool_calls: [{ id: "b", function: { name: "read_file", arguments: { path: "a.ts" } } }] }),
        chunk({}, "tool_calls"),
      ],
      ctx,
    );
    expect(completedOf(events).toolCalls).toEqual([
      { callId: "call_chatcmpl-x_0", name: "list_dir", arguments: "{}" },
      { callId: "b", name: "read_file", arguments: '{"path":"a.ts"}' },
    ]);
  });

  test("every call numbered 0 but with its own id (as some servers send) stays two calls", () => {
    const chunk = (delta: unknown, finish: string | null = null) => ({ id: "c", choices: [{ index: 0, delta, finish_reason: finish }] });
    const events = mapChatStreamEvents(
      [
        chunk({ tool_calls: [{ index: 0, id: "a", function: { name: "one", arguments: '{"x":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
        chunk({ tool_calls: [{ index: 0, id: "b", function: { name: "two", arguments: "{}" } }] }),
        chunk({}, "tool_calls"),
      ],
      ctx,
    );
    expect(completedOf(events).toolCalls).toEqual([
      { callId: "a", name: "one", arguments: '{"x":1}' },
      { callId: "b", name: "two", arguments: "{}" },
    ]);
  });
});

describe("reasoning", () => {
  test("openrouter_reasoning_stream.sse: `reasoning` deltas (reasoning_details ignored), SSE comments skipped", () => {
    const events = mapFixture("openrouter_reasoning_stream.sse");
    expect(reasoningOf(events)).toBe("This is a simple arithmetic question. 2+2 equals 4.");
    expect(textOf(events)).toBe("2 + 2 = 4");
    expect(events.findIndex((e) => e.type === "text_delta")).toBeGreaterThan(events.findLastIndex((e) => e.type === "reasoning_delta"));
    expect(completedOf(events).usage).toEqual({ input: 43, cached: 0, output: 36, reasoning: 13 });
  });

  test("a chunk carrying both reasoning_content and reasoning (vLLM during its rename) counts once", () => {
    const events = mapChatStreamEvents(
      [
        { id: "v", choices: [{ index: 0, delta: { reasoning_content: "Think.", reasoning: "Think." } }] },
        { id: "v", choices: [{ index: 0, delta: { content: "Done." }, finish_reason: "stop" }] },
      ],
      ctx,
    );
    expect(reasoningOf(events)).toBe("Think.");
    expect(completedOf(events).text).toBe("Done.");
  });
});

describe("usage", () => {
  test("cached tokens: prompt_tokens_details, else DeepSeek's prompt_cache_hit_tokens, else llama.cpp's timings.cache_n", () => {
    expect(mapChatUsage({ prompt_tokens: 1200, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 896 } })).toEqual({
      input: 1200,
      cached: 896,
      output: 40,
      reasoning: 0,
    });
    expect(mapChatUsage({ prompt_tokens: 339, completion_tokens: 83, prompt_cache_hit_tokens: 320 })?.cached).toBe(320);
    // llama.cpp's last chunk: usage without details, timings beside it (tools/server/server-task.cpp).
    expect(mapChatUsage({ completion_tokens: 61, prompt_tokens: 1350, total_tokens: 1411 }, { cache_n: 1100, prompt_n: 250 })).toEqual({
      input: 1350,
      cached: 1100,
      output: 61,
      reasoning: 0,
    });
    expect(mapChatUsage({ prompt_tokens: 10, completion_tokens: 2 })).toEqual({ input: 10, cached: 0, output: 2, reasoning: 0 });
    expect(mapChatUsage(null)).toBeUndefined();
  });

  test("no usage chunk (a server that ignores include_usage): completed with usage undefined", () => {
    const events = mapChatStreamEvents([{ id: "n", choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] }], ctx);
    expect(completedOf(events)).toMatchObject({ text: "hi", usage: undefined });
  });
});

describe("endings", () => {
  test("openrouter_stream_error.sse: the error chunk after finish_reason is an error event, and the last event", () => {
    const events = mapFixture("openrouter_stream_error.sse");
    expect(reasoningOf(events)).toBe("We need to respond to a greeting. The user");
    const last = events.at(-1);
    expect(last).toMatchObject({ type: "error", kind: "failed", retryable: false });
    expect(last?.type === "error" && last.message).toContain("Token limit reached");
    expect(events.some((e) => e.type === "completed")).toBe(false);
  });

  test("finish_reason length: incomplete (max_output_tokens), half-written tool calls dropped", () => {
    const events = mapChatStreamEvents(
      [
        { id: "l", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "t", function: { name: "write_file", arguments: '{"path":"a' } }] } }] },
        { id: "l", choices: [{ index: 0, delta: {}, finish_reason: "length" }] },
      ],
      ctx,
    );
    expect(completedOf(events)).toMatchObject({ status: "incomplete", incompleteReason: "max_output_tokens", toolCalls: [] });
    expect(events.some((e) => e.type === "tool_call")).toBe(false);
  });

  test("a stream that stops before any finish_reason is stream_cut, naming the chunks seen", () => {
    const chunks = parseChatSse(readChatFixture("openai_text_stream.sse")).slice(0, 40);
    const mapper = createChatStreamMapper(ctx);
    const events = chunks.flatMap((c) => mapper.push(c));
    const end = mapper.end();
    expect(textOf(events).length).toBeGreaterThan(0);
    expect(end).toHaveLength(1);
    expect(end[0]).toMatchObject({ type: "error", kind: "stream_cut", retryable: true });
    expect(end[0]?.type === "error" && end[0].message).toContain("40 events, no finish_reason");
    expect(mapper.push(chunks[0])).toEqual([]);
  });

  test("a 200 answer with no chunks at all is not a Chat Completions server", () => {
    const [event] = mapChatStreamEvents([], ctx);
    expect(event).toMatchObject({ type: "error", kind: "bad_request", retryable: false });
    expect(event?.type === "error" && event.message).toContain("http://127.0.0.1:9/v1/chat/completions answered, but not with a Chat Completions event stream");
  });

  test("the test builder's streams have the recorded shape: text, calls and usage read back", () => {
    const events = mapChatStreamEvents(
      parseChatSse(buildChatStream({ text: "Reading it.", toolCalls: [{ name: "read_file", arguments: { path: "src/app.ts" } }], usage: { prompt: 900, cached: 768, completion: 12 } })),
      ctx,
    );
    const done = completedOf(events);
    expect(done.text).toBe("Reading it.");
    expect(done.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([["read_file", { path: "src/app.ts" }]]);
    expect(done.usage).toEqual({ input: 900, cached: 768, output: 12, reasoning: 0 });
  });
});
