import { describe, expect, test } from "bun:test";
import { createStreamMapper, mapStreamEvents, mapUsage } from "../../src/model/stream-events.ts";
import type { ModelStreamEvent } from "../../src/model/types.ts";
import { buildResponseStream, parseSseData, readFixture } from "../support/sse-script.ts";

const ctx = { baseURL: "http://127.0.0.1:9/v1" };

function mapFixture(name: string): ModelStreamEvent[] {
  return mapStreamEvents(parseSseData(readFixture(name)), ctx);
}
const textOf = (events: ModelStreamEvent[]) =>
  events.flatMap((e) => (e.type === "text_delta" ? [e.delta] : [])).join("");
const reasoningOf = (events: ModelStreamEvent[]) =>
  events.flatMap((e) => (e.type === "reasoning_delta" ? [e.delta] : [])).join("");
const completedOf = (events: ModelStreamEvent[]) => {
  const done = events.find((e) => e.type === "completed");
  if (done?.type !== "completed") throw new Error(`no completed event in ${JSON.stringify(events.map((e) => e.type))}`);
  return done;
};
/** The `text` of every `*.done` event of a given type in a fixture. */
function doneTexts(name: string, type: string): string[] {
  return (parseSseData(readFixture(name)) as Array<{ type: string; text?: string }>)
    .filter((e) => e.type === type)
    .map((e) => e.text ?? "");
}

describe("text streams", () => {
  test("text_stream.sse: deltas add up to the done text, usage mapped, nothing after completed", () => {
    const events = mapFixture("text_stream.sse");
    expect(textOf(events)).toBe("The capital of PotatoLand is **Potato City**.");
    expect(doneTexts("text_stream.sse", "response.output_text.done")).toEqual([textOf(events)]);
    const done = completedOf(events);
    expect(done.text).toBe(textOf(events));
    expect(done.status).toBe("completed");
    expect(done.toolCalls).toEqual([]);
    expect(done.usage).toEqual({ input: 147, cached: 0, output: 16, reasoning: 0 });
    expect(done.responseId).toBe("resp_0fabc13af1ee0049006a691dffc71481a18c5ea1841dec14ce");
    expect(events.at(-1)).toBe(done);
    expect(events.filter((e) => e.type === "text_delta")).toHaveLength(12);
  });

  test("text_stream_legacy_2025-06.sse (older wire shape) maps the same way", () => {
    const events = mapFixture("text_stream_legacy_2025-06.sse");
    expect(textOf(events)).toBe(doneTexts("text_stream_legacy_2025-06.sse", "response.output_text.done")[0] ?? "?");
    expect(completedOf(events).usage).toEqual({ input: 10, cached: 0, output: 62, reasoning: 0 });
  });

  test("docs_example_stream.sse: the done text completes deltas that fell short", () => {
    const events = mapFixture("docs_example_stream.sse");
    expect(textOf(events)).toBe("Hi there! How can I assist you today?");
    expect(completedOf(events).text).toBe("Hi there! How can I assist you today?");
    // usage without input_tokens_details: cached counts as 0
    expect(completedOf(events).usage).toEqual({ input: 37, cached: 0, output: 11, reasoning: 0 });
  });
});

describe("function calls", () => {
  test("message_function_call_stream.sse: commentary text, then one call with streamed arguments", () => {
    const events = mapFixture("message_function_call_stream.sse");
    const callId = "call_LabG58Uhrq9kZvR52BYKjToD";
    expect(textOf(events)).toBe("I’ll check the capital lookup tool for “PotatoLand.”");
    const kinds = events.map((e) => e.type).filter((t) => t !== "text_delta");
    expect(kinds).toEqual(["tool_call_start", ...Array(7).fill("tool_call_arguments_delta"), "tool_call", "completed"]);
    expect(events.find((e) => e.type === "tool_call_start")).toEqual({ type: "tool_call_start", callId, name: "get_capital" });
    const args = events.flatMap((e) => (e.type === "tool_call_arguments_delta" ? [e.delta] : [])).join("");
    expect(args).toBe('{"country":"PotatoLand"}');
    const done = completedOf(events);
    expect(done.toolCalls).toEqual([{ callId, name: "get_capital", arguments: '{"country":"PotatoLand"}' }]);
    expect(done.usage).toEqual({ input: 63, cached: 0, output: 69, reasoning: 26 });
  });

  test("function_call_stream.sse: reasoning item skipped, call finished, reasoning tokens counted", () => {
    const events = mapFixture("function_call_stream.sse");
    expect(textOf(events)).toBe("");
    const done = completedOf(events);
    expect(done.toolCalls).toEqual([{ callId: "call_CWXgs68YprAjp6t0371hiPOI", name: "final_result", arguments: '{"result":6666}' }]);
    expect(done.usage).toEqual({ input: 53, cached: 0, output: 469, reasoning: 448 });
  });

  test("function_call_parallel_stream_2025-06.sse: two calls in output order, deltas per call", () => {
    const events = mapFixture("function_call_parallel_stream_2025-06.sse");
    const done = completedOf(events);
    expect(done.toolCalls.map((c) => c.name)).toEqual(["search", "weather"]);
    expect(done.toolCalls.map((c) => c.arguments)).toEqual(['{"query":"Detroit Tigers game time October 6, 2023"}', '{"city":"Detroit"}']);
    for (const call of done.toolCalls) {
      const deltas = events.flatMap((e) => (e.type === "tool_call_arguments_delta" && e.callId === call.callId ? [e.delta] : []));
      expect(deltas.join("")).toBe(call.arguments);
      expect(JSON.parse(call.arguments)).toBeObject();
    }
    expect(new Set(done.toolCalls.map((c) => c.callId)).size).toBe(2);
  });
});

describe("reasoning", () => {
  test("reasoning_stream.sse: summary deltas add up to the 4 summary parts, then the answer", () => {
    const events = mapFixture("reasoning_stream.sse");
    const summaries = doneTexts("reasoning_stream.sse", "response.reasoning_summary_text.done");
    expect(summaries).toHaveLength(4);
    expect(reasoningOf(events)).toBe(summaries.join("\n\n"));
    expect(textOf(events)).toBe(doneTexts("reasoning_stream.sse", "response.output_text.done")[0] ?? "?");
    const firstText = events.findIndex((e) => e.type === "text_delta");
    const lastReasoning = events.findLastIndex((e) => e.type === "reasoning_delta");
    expect(lastReasoning).toBeLessThan(firstText);
    expect(completedOf(events).usage).toEqual({ input: 13, cached: 0, output: 1680, reasoning: 1408 });
  });
});

describe("failures inside a 200 stream", () => {
  test("failed_stream.sse: the error event becomes one rate_limit error; response.failed adds nothing", () => {
    const events = mapFixture("failed_stream.sse");
    expect(events).toHaveLength(1);
    const [error] = events;
    expect(error).toMatchObject({ type: "error", kind: "rate_limit", retryable: true });
    expect(error?.type === "error" && error.message).toContain("Request too large for gpt-4o");
  });

  test("failed_stream_quota.sse: insufficient_quota is not retryable", () => {
    const events = mapFixture("failed_stream_quota.sse");
    expect(events).toEqual([expect.objectContaining({ type: "error", kind: "quota", retryable: false })]);
  });

  test("failed_event_context_length.sse: a lone response.failed with context_length_exceeded", () => {
    const [error, ...rest] = mapFixture("failed_event_context_length.sse");
    expect(rest).toEqual([]);
    expect(error).toMatchObject({ type: "error", kind: "context_length_exceeded", retryable: false });
    expect(error?.type === "error" && error.message).toContain("Compact the conversation");
  });

  test("an error event with the flat payload of the API reference", () => {
    const events = mapStreamEvents([{ type: "error", code: "server_error", message: "boom", param: null, sequence_number: 1 }], ctx);
    expect(events).toEqual([expect.objectContaining({ type: "error", kind: "server", retryable: true })]);
  });
});

describe("stream ends and odd events", () => {
  test("a stream that stops before its terminal event ends with stream_cut after what it had", () => {
    const raws = parseSseData(readFixture("text_stream.sse")).slice(0, 8);
    const events = mapStreamEvents(raws, ctx);
    expect(textOf(events)).toBe("The capital of Potato");
    const last = events.at(-1);
    expect(last).toMatchObject({ type: "error", kind: "stream_cut", retryable: true });
    expect(last?.type === "error" && last.message).toContain("8 events");
    expect(last?.type === "error" && last.message).toContain(ctx.baseURL);
  });

  test("keepalive, unknown types and non-objects are ignored; events after the end are dropped", () => {
    const mapper = createStreamMapper(ctx);
    expect(mapper.push({ type: "keepalive", sequence_number: 3 })).toEqual([]);
    expect(mapper.push({ type: "response.some_future_event", delta: "x" })).toEqual([]);
    expect(mapper.push("garbage")).toEqual([]);
    expect(mapper.push(null)).toEqual([]);
    expect(mapper.push({ type: "response.output_text.delta", item_id: "m", delta: "ok" })).toEqual([{ type: "text_delta", delta: "ok" }]);
    expect(mapper.push({ type: "response.completed", response: { id: "r", output: [] } })[0]).toMatchObject({ type: "completed", text: "ok" });
    expect(mapper.finished).toBe(true);
    expect(mapper.push({ type: "response.output_text.delta", item_id: "m", delta: "late" })).toEqual([]);
    expect(mapper.end()).toEqual([]);
  });

  test("response.incomplete gives completed with status incomplete and the reason", () => {
    const raws = parseSseData(buildResponseStream({ text: "Half an ans", status: "incomplete", incompleteReason: "max_output_tokens" }));
    const done = completedOf(mapStreamEvents(raws, ctx));
    expect(done).toMatchObject({ status: "incomplete", incompleteReason: "max_output_tokens", text: "Half an ans" });
  });

  test("output only in the final response (no item events) is still emitted", () => {
    const response = JSON.parse(readFixture("response_nonstream.json")) as Record<string, unknown>;
    const events = mapStreamEvents([{ type: "response.completed", response }], ctx);
    expect(events.map((e) => e.type)).toEqual(["text_delta", "tool_call_start", "tool_call", "completed"]);
    expect(completedOf(events)).toMatchObject({
      text: 'I\'ll check the capital lookup tool for "PotatoLand."',
      toolCalls: [{ callId: "call_ALAJMWK9buNN7RXxxXbECcHa", name: "get_capital", arguments: '{"country":"PotatoLand"}' }],
      usage: { input: 63, cached: 0, output: 72, reasoning: 29 },
    });
  });

  test("two messages in one response are separated by a blank line in deltas and text", () => {
    const events = mapStreamEvents(
      [
        { type: "response.output_text.delta", item_id: "m1", delta: "First." },
        { type: "response.output_text.delta", item_id: "m2", delta: "Second." },
        { type: "response.completed", response: { id: "r", output: [] } },
      ],
      ctx,
    );
    expect(textOf(events)).toBe("First.\n\nSecond.");
    expect(completedOf(events).text).toBe("First.\n\nSecond.");
  });

  test("usage with cached and reasoning tokens", () => {
    expect(
      mapUsage({ input_tokens: 4096, input_tokens_details: { cached_tokens: 3968 }, output_tokens: 300, output_tokens_details: { reasoning_tokens: 256 } }),
    ).toEqual({ input: 4096, cached: 3968, output: 300, reasoning: 256 });
    expect(mapUsage(null)).toBeUndefined();
  });
});
