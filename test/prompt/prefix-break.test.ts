/** The manifest's prefix record: where a request stops repeating the previous one (src/prompt/prefix-break.ts). */
import { describe, expect, test } from "bun:test";
import { cacheableTokens, comparePrefix, type PrefixPiece } from "../../src/prompt/prefix-break.ts";

const count = (text: string) => Math.ceil(text.length / 4);
const piece = (id: string, region: string, wire: string, tokens = count(wire)): PrefixPiece => ({ id, region, wire, tokens });

const history = [piece("tools", "tools", "T".repeat(4000)), piece("core_rules", "core", "C".repeat(2000)), piece("summary", "summary", "S".repeat(800)), piece("turn:4", "conversation", '{"role":"user","content":"four"}')];

describe("comparePrefix", () => {
  test("nothing to compare with: first", () => {
    expect(comparePrefix(undefined, history, count)).toMatchObject({ kind: "first", reused_tokens: 0, predicted_cached_tokens: 0 });
  });

  test("the previous message entered the window: an append, its message counted as reused", () => {
    const previous = { label: "turn 5 step 1", pieces: [...history, piece("task:message", "task", '{"role":"user","content":"five"}'), piece("volatile_context", "context", "time: 12:00")] };
    const next = [...history, piece("turn:5", "conversation", '{"role":"user","content":"five"}\n{"role":"assistant","content":"done"}'), piece("task:message", "task", '{"role":"user","content":"six"}')];
    const record = comparePrefix(previous, next, count);
    expect(record.kind).toBe("append");
    expect(record.first_changed).toBeUndefined();
    const base = history.reduce((n, p) => n + p.tokens, 0);
    expect(record.reused_tokens).toBe(base + count('{"role":"user","content":"five"}'));
    expect(record.predicted_cached_tokens).toBe(cacheableTokens(record.reused_tokens));
    expect(record.compared_with).toBe("turn 5 step 1");
  });

  test("a fold rewrote the summary: a break naming the summary, cached tokens up to it", () => {
    const previous = { label: "turn 9 step 2", pieces: history };
    const next = [history[0] as PrefixPiece, history[1] as PrefixPiece, piece("summary", "summary", "S".repeat(400) + "X".repeat(500))];
    const record = comparePrefix(previous, next, count);
    expect(record).toMatchObject({ kind: "break", first_changed: { id: "summary", region: "summary", previous_id: "summary", reason: "the rolling summary changed: turns were folded into it" } });
    expect(record.reused_tokens).toBe(1000 + 500 + 100);
    expect(record.predicted_cached_tokens).toBe(1536);
  });

  test("below 1024 tokens nothing is cached; above, in steps of 128", () => {
    expect(cacheableTokens(1023)).toBe(0);
    expect(cacheableTokens(1024)).toBe(1024);
    expect(cacheableTokens(1300)).toBe(1280);
  });
});
