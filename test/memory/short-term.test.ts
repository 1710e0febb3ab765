import { describe, expect, test } from "bun:test";
import { ShortTermMemory, type ShortTermOptions } from "../../src/memory/short-term.ts";
import { ExtractiveSummarizer } from "../../src/memory/summary.ts";
import type { NewRecord, TranscriptRecord } from "../../src/session/transcript-schema.ts";

const options: ShortTermOptions = { shortBufferTurns: 20, windowBlockTurns: 5, workingSetTokens: 1000, overflowPolicy: "fifo", countTokens: (t) => t.length };

function stamp(records: NewRecord[]): TranscriptRecord[] {
  return records.map((r) => ({ v: 1, ts: "2026-01-31T12:00:00.000Z", ...r }) as TranscriptRecord);
}

function turnRecords(turn: number, finished = true): NewRecord[] {
  const records: NewRecord[] = [
    { kind: "user", turn, text: `ask ${turn} about src/f${turn}.ts` },
    { kind: "tool_call", turn, step: 1, call_id: `c${turn}`, name: "read_file", arguments: `{"path":"src/f${turn}.ts"}`, output: `FULL OUTPUT ${turn}`, summary: `summary ${turn}`, is_error: false },
    { kind: "assistant", turn, step: 2, text: `answer ${turn}` },
  ];
  if (finished) records.push({ kind: "turn_end", turn, steps: 2, stop_reason: "completed" });
  return records;
}

describe("ShortTermMemory", () => {
  test("rebuilds window, summary and working set from a transcript; the window carries tool summaries", () => {
    const records = stamp([
      ...[1, 2, 3, 4, 5, 6, 7].flatMap((n) => turnRecords(n)),
      { kind: "summary", from_turn: 1, through_turn: 5, text: "T1..T5 summary", summarizer: "extractive", reason: "window_full" },
      { kind: "working_set", turn: 7, items: [{ id: "ws-1", content: "snippet", source: "read_file", priority: 0.5, tags: [], tokens: 7, added_turn: 7, accessed_turn: 7, added_at: "2026-01-31T12:00:00.000Z", accessed_at: "2026-01-31T12:00:00.000Z" }] },
    ]);
    const memory = ShortTermMemory.fromRecords(records, options);
    expect(memory.window.turns.map((t) => t.turn)).toEqual([6, 7]);
    expect(memory.summary).toEqual({ text: "T1..T5 summary", fromTurn: 1, throughTurn: 5 });
    expect(memory.workingSet.items().map((i) => i.id)).toEqual(["ws-1"]);
    expect(memory.window.turns[0]?.items[0]).toMatchObject({ kind: "tool", output: "summary 6" });
    expect(memory.lastTurn).toBe(7);
    expect(memory.pending).toBeUndefined();
    expect(memory.touched.list("file").map((e) => e.name)).toContain("src/f7.ts");
    expect(memory.view().events).toEqual([]);
  });

  test("in a later process, a long read kept whole in the window is held back again: it enters the working set when its turn folds", async () => {
    const body = "export const x = 1;\n".repeat(40); // over the 600 bytes kept inline, under the 1000-token working set
    const records = stamp([
      { kind: "user", turn: 1, text: "read src/x.ts" },
      { kind: "tool_call", turn: 1, step: 1, call_id: "r1", name: "read_file", arguments: '{"path":"src/x.ts"}', output: body, summary: body, is_error: false },
      { kind: "assistant", turn: 1, step: 2, text: "read it" },
      { kind: "turn_end", turn: 1, steps: 2, stop_reason: "completed" },
      ...turnRecords(2),
    ]);
    const memory = ShortTermMemory.fromRecords(records, options);
    expect(memory.workingSet.items()).toEqual([]);
    memory.workingSet.setTurn(3);
    await memory.slide(new ExtractiveSummarizer(), undefined, () => ({ fold: 1, reason: "cost", rent: 0, cost: 0, why: "test" }));
    expect(memory.workingSet.items().map((i) => [i.source, i.tags, i.content === body])).toEqual([["read_file src/x.ts", ["src/x.ts"], true]]);
  });

  test("an unfinished last turn is pending (with full outputs); an unfinished middle turn enters the window as an error", () => {
    const memory = ShortTermMemory.fromRecords(stamp([...turnRecords(1, false), ...turnRecords(2), ...turnRecords(3, false)]), options);
    expect(memory.window.turns.map((t) => [t.turn, t.stopReason])).toEqual([
      [1, "error"],
      [2, "completed"],
    ]);
    expect(memory.pending?.turn).toBe(3);
    expect(memory.pending?.items[0]).toMatchObject({ kind: "tool", output: "FULL OUTPUT 3" });
  });

  test("without a cost decision, slide folds all but the last windowBlockTurns turns once finished turns reach SHORT_BUFFER_TURNS, and returns the summary record", async () => {
    const memory = ShortTermMemory.fromRecords(stamp([...Array.from({ length: 19 }, (_, i) => turnRecords(i + 1)).flat()]), options);
    expect(await memory.slide(new ExtractiveSummarizer())).toBeUndefined();
    memory.endTurn({ turn: 20, user: "one more", items: [] });
    const record = await memory.slide(new ExtractiveSummarizer());
    expect(record).toMatchObject({ kind: "summary", from_turn: 1, through_turn: 15, summarizer: "extractive", reason: "window_full" });
    expect(memory.window.span()).toEqual({ first: 16, last: 20 });
    expect(memory.summary?.text).toContain("T1 user: ask 1");
    expect(memory.view().events).toEqual([{ type: "window_folded", fromTurn: 1, throughTurn: 15, reason: "window_full", summarizer: "extractive" }]);
  });

  test("apply makes a build's budget changes real and returns the records that persist them", () => {
    const memory = ShortTermMemory.fromRecords(stamp([1, 2, 3].flatMap((n) => turnRecords(n))), options);
    memory.workingSet.add({ content: "keep", source: "s", id: "keep" });
    memory.workingSet.add({ content: "drop", source: "s", id: "drop" });
    memory.view();
    const records = memory.apply(
      {
        fold: { summary: { text: "folded", fromTurn: 1, throughTurn: 2 }, throughTurn: 2, summarizer: "extractive" },
        workingSet: { items: memory.workingSet.snapshot().filter((i) => i.id === "keep"), events: [] },
      },
      4,
    );
    expect(records.map((r) => r.kind)).toEqual(["summary", "working_set"]);
    expect(records[0]).toMatchObject({ reason: "budget", through_turn: 2 });
    expect(memory.window.turns.map((t) => t.turn)).toEqual([3]);
    expect(memory.workingSet.items().map((i) => i.id)).toEqual(["keep"]);
    expect(memory.workingSetRecord(4)).toBeUndefined();
  });
});
