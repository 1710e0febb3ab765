/** `chat -p --output-format json`: the result object built from a run's events and its end. */
import { describe, expect, test } from "bun:test";
import type { AgentEvent } from "../../src/agent/events.ts";
import { createResultCollector } from "../../src/ui/print-result.ts";

function collect(events: AgentEvent[]) {
  const collector = createResultCollector();
  for (const event of events) collector.onEvent(event);
  return collector;
}

const manifest = { path: "m.json", totalTokens: 100, budgetTokens: 24000, stablePrefixTokens: 50 };

describe("createResultCollector", () => {
  test("the step limit: error_max_turns, the turn's error, the steps counted once per step", () => {
    const result = collect([
      { type: "turn_start", turn: 3, userText: "go on" },
      { type: "request_built", turn: 3, step: 1, manifest },
      { type: "usage", usage: { input: 100, cached: 40, output: 10, reasoning: 2 }, cachedShare: 0.4 },
      { type: "request_built", turn: 3, step: 2, manifest },
      { type: "request_built", turn: 3, step: 2, manifest }, // the same step again after an overflow fold
      { type: "usage", usage: { input: 120, cached: 100, output: 5, reasoning: 0 }, cachedShare: 0.83 },
      { type: "error", kind: "internal", message: "stopped after 2 model calls" },
      { type: "turn_end", turn: 3, text: "partly done", stopReason: "max_steps" },
    ]).finish({ exitCode: 1, sessionId: "abc123", durationMs: 12.6 });
    expect(result).toMatchObject({
      subtype: "error_max_turns",
      is_error: true,
      result: "partly done",
      stop_reason: "max_steps",
      error: { kind: "internal", message: "stopped after 2 model calls" },
      session_id: "abc123",
      turn: 3,
      num_turns: 2,
      duration_ms: 13,
      usage: { input_tokens: 220, cached_tokens: 140, output_tokens: 15, reasoning_tokens: 2, requests: 2 },
    });
  });

  test("an error from the settle step after a completed turn leaves the result a success", () => {
    const result = collect([
      { type: "turn_end", turn: 1, text: "done", stopReason: "completed" },
      { type: "error", kind: "internal", message: "the fold failed" },
    ]).finish({ exitCode: 0, sessionId: "s", durationMs: 1 });
    expect(result).toMatchObject({ subtype: "success", is_error: false, error: null, result: "done" });
  });

  test("a failure no event tells (a usage error, a signal) comes from finish", () => {
    const result = collect([]).finish({ exitCode: 2, sessionId: undefined, durationMs: 0, failure: { kind: "usage", message: "bad flag", hint: "Pass another." } });
    expect(result).toMatchObject({ is_error: true, subtype: "error_during_execution", stop_reason: null, session_id: null, turn: null, error: { kind: "usage", message: "bad flag", hint: "Pass another." } });
  });
});
