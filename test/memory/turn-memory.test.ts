/** What a finished turn leaves in short-term memory (src/memory/turn-memory.ts). */
import { describe, expect, test } from "bun:test";
import { recordTurnInMemory } from "../../src/memory/turn-memory.ts";
import type { ToolMemory } from "../../src/memory/tool-memory.ts";
import { ShortTermMemory } from "../../src/memory/short-term.ts";
import { ExtractiveSummarizer } from "../../src/memory/summary.ts";
import type { Turn } from "../../src/memory/turn.ts";

const options = { shortBufferTurns: 20, windowBlockTurns: 5, workingSetTokens: 5000, overflowPolicy: "priority" as const, countTokens: (t: string) => t.length };

function readCall(id: string, path: string) {
  return { kind: "tool" as const, callId: id, name: "read_file", arguments: JSON.stringify({ path }), output: `FULL ${path}`, isError: false };
}
function editCall(id: string, path: string) {
  return { kind: "tool" as const, callId: id, name: "edit_file", arguments: JSON.stringify({ path: `./${path}`, old_string: "a", new_string: "b" }), output: "Edited", isError: false };
}
function wsFor(path: string, content: string): ToolMemory {
  return { promptSummary: `read ${path} [in the working set]`, workingSetItem: { content, source: `read_file ${path}`, priority: 0.6, tags: [path] } };
}

/** Folds the window's turns up to `through` (offline), as the session's settle step does. */
async function foldThrough(memory: ShortTermMemory, through: number): Promise<void> {
  await memory.slide(new ExtractiveSummarizer(), undefined, (turns) => ({ fold: turns.filter((t) => t.turn <= through).length, reason: "cost", rent: 0, cost: 0, why: "test" }));
}

describe("recordTurnInMemory", () => {
  test("the window gets the summaries; reads are held back until their turn folds, then enter the working set; an edit of the file makes its read stale", async () => {
    const memory = new ShortTermMemory(options);
    const turn: Turn = { turn: 1, user: "fix a", items: [readCall("r1", "src/a.ts"), editCall("e1", "src/a.ts"), readCall("r2", "src/b.ts")] };
    const summaries = new Map([
      ["r1", wsFor("src/a.ts", "old a")],
      ["r2", wsFor("src/b.ts", "b body")],
    ]);
    recordTurnInMemory(memory, turn, summaries, { ttlTurns: 3 });
    expect(memory.window.turns[0]?.items.map((i) => (i.kind === "tool" ? i.output : i.text))).toEqual(["read src/a.ts [in the working set]", "Edited", "read src/b.ts [in the working set]"]);
    // While the turn is in the window, its outputs are there: the working set does not repeat them.
    expect(memory.workingSet.items()).toEqual([]);
    memory.workingSet.setTurn(2);
    await foldThrough(memory, 1);
    // src/a.ts was read, then edited (./src/a.ts names the same file): its read is stale and never enters.
    expect(memory.workingSet.items().map((w) => w.content)).toEqual(["b body"]);
  });

  test("the working set changes only at folds: expiry after the TTL and staleness wait for the next fold; naming the file keeps an item alive", async () => {
    const memory = new ShortTermMemory(options);
    memory.workingSet.setTurn(1);
    recordTurnInMemory(memory, { turn: 1, user: "read", items: [readCall("r1", "src/a.ts"), readCall("r2", "src/b.ts"), readCall("r3", "src/c.ts")] }, new Map([["r1", wsFor("src/a.ts", "a")], ["r2", wsFor("src/b.ts", "b")], ["r3", wsFor("src/c.ts", "c")]]), { ttlTurns: 3 });
    memory.workingSet.setTurn(2);
    recordTurnInMemory(memory, { turn: 2, user: "chat", items: [] }, new Map(), { ttlTurns: 3 });
    await foldThrough(memory, 1);
    expect(memory.workingSet.items().map((w) => w.content)).toEqual(["a", "b", "c"]);
    for (let n = 3; n <= 6; n++) {
      memory.workingSet.setTurn(n);
      const items = n === 4 ? [editCall("e4", "src/c.ts")] : [];
      recordTurnInMemory(memory, { turn: n, user: n === 5 ? "look again at src/b.ts" : "chat", items }, new Map(), { ttlTurns: 3 });
    }
    // Turn 6: src/a.ts is past its TTL and src/c.ts was edited, but no fold has happened: nothing changed.
    expect(memory.workingSet.items().map((w) => w.content)).toEqual(["a", "b", "c"]);
    await foldThrough(memory, 5);
    // At the fold: src/a.ts (unused since turn 2) expires, src/c.ts is stale; src/b.ts was named in turn 5.
    expect(memory.workingSet.items().map((w) => w.content)).toEqual(["b"]);
  });
});
