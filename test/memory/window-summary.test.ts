import { describe, expect, test } from "bun:test";
import { ExtractiveSummarizer, foldTurns } from "../../src/memory/summary.ts";
import type { Turn } from "../../src/memory/turn.ts";
import { ConversationWindow } from "../../src/memory/window.ts";

function turn(n: number, extra: Partial<Turn> = {}): Turn {
  return { turn: n, user: `Please fix bug ${n} in src/mod${n}.ts. It crashes on empty input.`, items: [{ kind: "assistant", text: `Fixed bug ${n}. The guard was missing.` }], ...extra };
}

describe("ConversationWindow", () => {
  test("full at SHORT_BUFFER_TURNS: all but the last windowBlockTurns turns fold; nothing before", () => {
    const window = new ConversationWindow({ shortBufferTurns: 20, windowBlockTurns: 5 });
    for (let n = 1; n <= 19; n++) window.push(turn(n));
    expect(window.overflowBlock()).toEqual([]);
    window.push(turn(20));
    expect(window.overflowBlock().map((t) => t.turn)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(window.dropThrough(15).length).toBe(15);
    expect(window.span()).toEqual({ first: 16, last: 20 });
    // Fifteen more turns fit before the window is full again.
    for (let n = 21; n <= 34; n++) {
      window.push(turn(n));
      expect(window.overflowBlock()).toEqual([]);
    }
    window.push(turn(35));
    expect(window.overflowBlock().map((t) => t.turn)).toEqual(Array.from({ length: 15 }, (_, i) => i + 16));
  });

  test("only grows forward and validates its block size", () => {
    const window = new ConversationWindow({ shortBufferTurns: 20, windowBlockTurns: 4 }, [turn(5)]);
    expect(() => window.push(turn(5))).toThrow(RangeError);
    expect(() => new ConversationWindow({ shortBufferTurns: 20, windowBlockTurns: 21 })).toThrow(RangeError);
  });
});

describe("ExtractiveSummarizer", () => {
  test("one line per turn with the request, tools and files, and the answer", async () => {
    const summarizer = new ExtractiveSummarizer();
    const t = turn(3, {
      items: [
        { kind: "tool", callId: "c1", name: "read_file", arguments: '{"path":"src/a.ts"}', output: "read src/a.ts", isError: false },
        { kind: "tool", callId: "c2", name: "edit_file", arguments: '{"path":"src/a.ts","old":"x","new":"y"}', output: "edited", isError: true },
        { kind: "assistant", text: "Changed the guard. Tests pass now." },
      ],
    });
    const text = await summarizer.summarize("", [t]);
    expect(text).toBe("T3 user: Please fix bug 3 in src/mod3.ts. | tools: read_file(src/a.ts), edit_file(src/a.ts)! | answer: Changed the guard.");
  });

  test("folds into the previous summary and condenses the oldest lines past its cap, keeping files and tools", async () => {
    const summarizer = new ExtractiveSummarizer({ maxChars: 600 });
    let summary = await foldTurns(undefined, [1, 2, 3].map((n) => turn(n, { items: [{ kind: "tool", callId: `c${n}`, name: "read_file", arguments: `{"path":"src/f${n}.ts"}`, output: "", isError: false }] })), summarizer);
    expect(summary).toMatchObject({ fromTurn: 1, throughTurn: 3 });
    for (let block = 1; block < 6; block++) {
      summary = await foldTurns(summary, [1, 2, 3].map((n) => turn(block * 3 + n)), summarizer);
    }
    expect(summary).toMatchObject({ fromTurn: 1, throughTurn: 18 });
    expect(summary.text.length).toBeLessThanOrEqual(600);
    const lines = summary.text.split("\n");
    expect(lines[0]).toMatch(/^Turns 1–\d+ \(condensed\): files src\/f1\.ts, src\/f2\.ts, src\/f3\.ts; tools read_file×3/);
    expect(lines.at(-1)).toStartWith("T18 user:");
  });

  test("below its cap a fold only appends (the old text stays a prefix); past it, the summary is condensed to half the cap", async () => {
    const summarizer = new ExtractiveSummarizer({ maxChars: 600 });
    let summary = await foldTurns(undefined, [turn(1)], summarizer);
    const rewrites: number[] = [];
    for (let n = 2; n <= 30; n++) {
      const next = await foldTurns(summary, [turn(n)], summarizer);
      if (next.text.startsWith(summary.text)) expect(next.text.length).toBeLessThanOrEqual(600);
      else {
        rewrites.push(n);
        expect(next.text.length).toBeLessThanOrEqual(300);
      }
      summary = next;
    }
    // One rewrite every few folds, not one per fold once the cap is reached.
    expect(rewrites.length).toBeGreaterThanOrEqual(2);
    expect(rewrites.length).toBeLessThanOrEqual(29 / 4);
  });

  test("is deterministic and honours abort", async () => {
    const summarizer = new ExtractiveSummarizer();
    const turns = [turn(1), turn(2)];
    expect(await summarizer.summarize("", turns)).toBe(await summarizer.summarize("", turns));
    const controller = new AbortController();
    controller.abort();
    await expect(summarizer.summarize("", turns, controller.signal)).rejects.toThrow();
  });
});
