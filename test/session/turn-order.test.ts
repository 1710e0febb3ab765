/** Turns two processes wrote at once (before writers were serialized) are renumbered, not fatal. */
import { describe, expect, test } from "bun:test";
import { ShortTermMemory } from "../../src/memory/short-term.ts";
import type { TranscriptRecord } from "../../src/session/transcript-schema.ts";
import { orderTurns } from "../../src/session/turn-order.ts";

const ts = "2026-01-01T00:00:00.000Z";
const user = (turn: number, text: string): TranscriptRecord => ({ v: 1, ts, kind: "user", turn, text });
const said = (turn: number, text: string): TranscriptRecord => ({ v: 1, ts, kind: "assistant", turn, step: 1, text });
const end = (turn: number): TranscriptRecord => ({ v: 1, ts, kind: "turn_end", turn, steps: 1, stop_reason: "completed" });
const memoryOptions = { shortBufferTurns: 20, windowBlockTurns: 4, workingSetTokens: 2000, overflowPolicy: "lru" as const, countTokens: (t: string) => t.length };

describe("orderTurns", () => {
  test("a transcript in order is returned as it is", () => {
    const records = [user(1, "a"), said(1, "A"), end(1), user(2, "b"), said(2, "B"), end(2)];
    expect(orderTurns(records)).toEqual({ records, renumbered: [] });
  });

  test("two interleaved turn 2s: the second becomes turn 3, answers go to their writers in order, and the window rebuilds", () => {
    const interleaved = [user(1, "a"), said(1, "A"), end(1), user(2, "from p"), user(2, "from q"), said(2, "P"), said(2, "Q"), end(2), end(2)];
    // As it was: the reader could never open this session again.
    expect(() => ShortTermMemory.fromRecords(interleaved, memoryOptions)).toThrow(/turn 2 pushed after turn 2/);
    const { records, renumbered } = orderTurns(interleaved);
    expect(renumbered).toEqual([{ from: 2, to: 3 }]);
    const memory = ShortTermMemory.fromRecords(records, memoryOptions);
    expect(memory.window.turns.map((t) => [t.turn, t.user, t.items.map((i) => (i.kind === "assistant" ? i.text : ""))])).toEqual([
      [1, "a", ["A"]],
      [2, "from p", ["P"]],
      [3, "from q", ["Q"]],
    ]);
    expect(memory.lastTurn).toBe(3);
  });

  test("renumbering is stable: turns appended after it keep their numbers", () => {
    const file = [user(1, "a"), user(1, "b"), end(1), end(1), user(3, "c"), said(3, "C"), end(3)];
    const first = orderTurns(file);
    expect(first.renumbered).toEqual([{ from: 1, to: 2 }]);
    expect(first.records.filter((r) => r.kind === "user").map((r) => r.turn)).toEqual([1, 2, 3]);
    expect(orderTurns(file)).toEqual(first);
    expect(() => ShortTermMemory.fromRecords(first.records, memoryOptions)).not.toThrow();
  });
});
