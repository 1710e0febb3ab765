/** What a finished turn leaves in short-term memory (src/memory/turn-memory.ts). */
import { describe, expect, test } from "bun:test";
import { recordTurnInMemory } from "../../src/memory/turn-memory.ts";
import type { ToolMemory } from "../../src/memory/tool-memory.ts";
import { ShortTermMemory } from "../../src/memory/short-term.ts";
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

describe("recordTurnInMemory", () => {
  test("the window gets summaries; reads enter the working set; a later edit of the same file removes them", () => {
    const memory = new ShortTermMemory(options);
    const turn: Turn = { turn: 1, user: "fix a", items: [readCall("r1", "src/a.ts"), editCall("e1", "src/a.ts"), readCall("r2", "src/b.ts")] };
    const summaries = new Map([
      ["r1", wsFor("src/a.ts", "old a")],
      ["r2", wsFor("src/b.ts", "b body")],
    ]);
    recordTurnInMemory(memory, turn, summaries, { ttlTurns: 3 });
    expect(memory.window.turns[0]?.items.map((i) => (i.kind === "tool" ? i.output : i.text))).toEqual(["read src/a.ts [in the working set]", "Edited", "read src/b.ts [in the working set]"]);
    // src/a.ts was read, then edited (./src/a.ts names the same file): its read is stale and gone.
    expect(memory.workingSet.items().map((w) => w.content)).toEqual(["b body"]);
  });

  test("items expire after the TTL, but only when a block settles; naming the file keeps an item alive", () => {
    const memory = new ShortTermMemory(options);
    memory.workingSet.setTurn(1);
    recordTurnInMemory(memory, { turn: 1, user: "read", items: [readCall("r1", "src/a.ts"), readCall("r2", "src/b.ts")] }, new Map([["r1", wsFor("src/a.ts", "a")], ["r2", wsFor("src/b.ts", "b")]]), { ttlTurns: 3 });
    for (let n = 2; n <= 4; n++) {
      memory.workingSet.setTurn(n);
      recordTurnInMemory(memory, { turn: n, user: n === 3 ? "look again at src/b.ts" : "chat", items: [] }, new Map(), { ttlTurns: 3 });
    }
    // Turn 4: src/a.ts is past its TTL, but no block has settled yet (4 turns in the window).
    expect(memory.workingSet.items().map((w) => w.content)).toEqual(["a", "b"]);
    memory.workingSet.setTurn(5);
    recordTurnInMemory(memory, { turn: 5, user: "chat", items: [] }, new Map(), { ttlTurns: 3 });
    // Turn 5 settles the first block: src/a.ts (unused since turn 1) expires; src/b.ts was named in turn 3.
    expect(memory.workingSet.items().map((w) => w.content)).toEqual(["b"]);
  });
});
