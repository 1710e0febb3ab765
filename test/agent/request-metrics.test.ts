/**
 * The arithmetic behind bench/agent.bench.ts: the full-history baseline rebuilt from a transcript,
 * the model calls of a session, and the shared-prefix measure.
 */
import { describe, expect, test } from "bun:test";
import { exactCounter } from "../../src/prompt/builder.ts";
import type { TranscriptRecord } from "../../src/session/transcript-schema.ts";
import { cacheOrderText, callsOf, fullHistoryInput, requestShape, requestTokens, sharedPrefix, type RequestShape } from "./support/request-metrics.ts";

const ts = "2026-01-31T12:00:00.000Z";
const RECORDS: TranscriptRecord[] = [
  { v: 1, ts, kind: "user", turn: 1, text: "read a.ts" },
  { v: 1, ts, kind: "assistant", turn: 1, step: 1, text: "Reading." },
  { v: 1, ts, kind: "tool_call", turn: 1, step: 1, call_id: "c1", name: "read_file", arguments: '{"path":"a.ts"}', output: "FULL OUTPUT", summary: "short", is_error: false },
  { v: 1, ts, kind: "assistant", turn: 1, step: 2, text: "It exports a." },
  { v: 1, ts, kind: "turn_end", turn: 1, steps: 2, stop_reason: "completed" },
  { v: 1, ts, kind: "working_set", turn: 1, items: [] },
  { v: 1, ts, kind: "user", turn: 2, text: "and b?" },
  { v: 1, ts, kind: "tool_call", turn: 2, step: 1, call_id: "c2", name: "read_file", arguments: '{"path":"b.ts"}', output: "B OUTPUT", summary: "b", is_error: false },
  { v: 1, ts, kind: "assistant", turn: 2, step: 2, text: "It exports b." },
  { v: 1, ts, kind: "turn_end", turn: 2, steps: 2, stop_reason: "completed" },
];

describe("full-history baseline", () => {
  test("callsOf lists each turn's steps in order", () => {
    expect(callsOf(RECORDS)).toEqual([
      { turn: 1, step: 1 },
      { turn: 1, step: 2 },
      { turn: 2, step: 1 },
      { turn: 2, step: 2 },
    ]);
  });

  test("the first call of a turn: every earlier turn verbatim (full tool outputs), then the user message", () => {
    expect(fullHistoryInput(RECORDS, { turn: 2, step: 1 })).toEqual([
      { type: "message", role: "user", content: "read a.ts" },
      { type: "message", role: "assistant", content: "Reading." },
      { type: "function_call", call_id: "c1", name: "read_file", arguments: '{"path":"a.ts"}' },
      { type: "function_call_output", call_id: "c1", output: "FULL OUTPUT" },
      { type: "message", role: "assistant", content: "It exports a." },
      { type: "message", role: "user", content: "and b?" },
    ]);
  });

  test("a later step adds this turn's earlier steps, not its own answer", () => {
    const items = fullHistoryInput(RECORDS, { turn: 2, step: 2 });
    expect(items.slice(-3)).toEqual([
      { type: "message", role: "user", content: "and b?" },
      { type: "function_call", call_id: "c2", name: "read_file", arguments: '{"path":"b.ts"}' },
      { type: "function_call_output", call_id: "c2", output: "B OUTPUT" },
    ]);
    expect(JSON.stringify(items)).not.toContain("It exports b.");
  });
});

describe("shared prefix", () => {
  const base: RequestShape = {
    instructions: "<core_rules>\nBe brief.\n</core_rules>\n",
    tools: [{ type: "function", name: "read_file", description: "Read a file.", parameters: { type: "object" }, strict: true }],
    input: [
      { type: "message", role: "user", content: "first question about the parser and its error recovery" },
      { type: "message", role: "assistant", content: "The parser recovers at statement boundaries." },
    ],
  };

  test("an identical request is all prefix; none without a previous one", async () => {
    const count = await exactCounter();
    const same = sharedPrefix(base, base, count);
    expect(same.prefix).toBe(same.total);
    expect(same.total).toBe(count(cacheOrderText(base)));
    expect(sharedPrefix(undefined, base, count).prefix).toBe(0);
  });

  test("appending keeps the old request as the prefix; an early change breaks it there", async () => {
    const count = await exactCounter();
    const grown: RequestShape = { ...base, input: [...base.input, { type: "message", role: "user", content: "and the lexer?" }] };
    const appended = sharedPrefix(base, grown, count);
    expect(appended.prefix).toBeGreaterThanOrEqual(count(cacheOrderText(base)) - 1);
    expect(appended.prefix).toBeLessThan(appended.total);
    const changed: RequestShape = { ...grown, instructions: "<core_rules>\nBe thorough.\n</core_rules>\n" };
    const broken = sharedPrefix(grown, changed, count);
    expect(broken.prefix).toBeLessThan(count(cacheOrderText({ ...base, input: [] })));
  });

  test("requestShape reads a recorded body; requestTokens counts tools, instructions, items and framing", async () => {
    const count = await exactCounter();
    const body = JSON.parse(JSON.stringify({ model: "m", ...base, store: false })) as Record<string, unknown>;
    const shape = requestShape(body);
    expect(shape).toEqual(base);
    expect(requestTokens(shape, count)).toBeGreaterThan(count(cacheOrderText(base)) - 20);
    expect(() => requestShape({ input: [{ type: "message", role: "user" }] })).toThrow("content");
  });
});
