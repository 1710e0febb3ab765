import { describe, expect, test } from "bun:test";
import { WorkingSet, type WorkingSetEvent } from "../../src/memory/working-set.ts";
import { effectivePriority, evictionOrder, type OverflowPolicy } from "../../src/memory/working-set-policy.ts";

// One token per word keeps the arithmetic readable; the builder uses exact o200k counts.
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

function set(policy: OverflowPolicy, budget = 10) {
  const ws = new WorkingSet({ budgetTokens: budget, policy, countTokens: words, now: () => new Date("2026-01-31T12:00:00Z") });
  const events: WorkingSetEvent[] = [];
  ws.on((e) => events.push(e));
  return { ws, events };
}

const four = (tag: string) => `${tag} one two three`;

describe("WorkingSet overflow policies", () => {
  test("FIFO evicts the oldest added", () => {
    const { ws, events } = set("fifo");
    ws.setTurn(1);
    ws.add({ content: four("a"), source: "read_file", id: "a" });
    ws.setTurn(2);
    ws.add({ content: four("b"), source: "read_file", id: "b" });
    ws.access("a");
    ws.setTurn(3);
    ws.add({ content: four("c"), source: "read_file", id: "c" });
    expect(ws.items().map((i) => i.id)).toEqual(["b", "c"]);
    expect(events.filter((e) => e.type === "evicted").map((e) => e.type === "evicted" && e.id)).toEqual(["a"]);
  });

  test("LRU evicts the least recently accessed", () => {
    const { ws } = set("lru");
    ws.setTurn(1);
    ws.add({ content: four("a"), source: "s", id: "a" });
    ws.setTurn(2);
    ws.add({ content: four("b"), source: "s", id: "b" });
    ws.setTurn(3);
    ws.access("a");
    ws.add({ content: four("c"), source: "s", id: "c" });
    expect(ws.items().map((i) => i.id).sort()).toEqual(["a", "c"]);
  });

  test("PRIORITY evicts the lowest effective priority; decay lowers idle items, attention boosts the task's files", () => {
    const { ws, events } = set("priority", 12);
    ws.setTurn(1);
    ws.add({ content: four("old"), source: "s", id: "old", priority: 0.6 });
    ws.setTurn(10);
    ws.add({ content: four("low"), source: "s", id: "low", priority: 0.5 });
    ws.add({ content: four("tagged"), source: "s", id: "tagged", priority: 0.2, tags: ["src/parser.ts"] });
    ws.setAttention(["src/parser.ts"]);
    const items = ws.items();
    const old = items.find((i) => i.id === "old");
    const tagged = items.find((i) => i.id === "tagged");
    if (!old || !tagged) throw new Error("items missing");
    // 0.6 - 0.02 * 9 idle turns = 0.42; 0.2 + 0.3 attention boost = 0.5
    expect(effectivePriority(old, ws.attentionContext())).toBeCloseTo(0.42, 5);
    expect(effectivePriority(tagged, ws.attentionContext())).toBeCloseTo(0.5, 5);
    ws.add({ content: four("new"), source: "s", id: "new", priority: 0.9 });
    expect(ws.items().map((i) => i.id)).toEqual(["low", "tagged", "new"]);
    const evicted = events.find((e) => e.type === "evicted");
    expect(evicted).toMatchObject({ type: "evicted", id: "old", policy: "priority" });
  });

  test("SUMMARIZE condenses the oldest items into one summary item instead of dropping them", () => {
    const { ws, events } = set("summarize", 250);
    const long = (name: string) => [`${name} line one of the snippet`, ...Array.from({ length: 19 }, (_, i) => `line ${i + 2} of ${name} here`)].join("\n");
    ws.setTurn(1);
    ws.add({ content: long("alpha"), source: "read_file", id: "alpha", tags: ["src/a.ts"] });
    ws.add({ content: long("beta"), source: "grep", id: "beta", tags: ["src/b.ts"] });
    ws.setTurn(2);
    ws.add({ content: long("gamma"), source: "read_file", id: "gamma" });
    const ids = ws.items().map((i) => i.id);
    expect(ids).not.toContain("alpha");
    expect(ids).not.toContain("beta");
    const summary = ws.items().find((i) => i.source === "summary");
    expect(summary?.content).toContain("alpha line one of the snippet");
    expect(summary?.content).toContain("beta line one of the snippet");
    expect(summary?.tags).toEqual(["src/a.ts", "src/b.ts"]);
    expect(ws.used()).toBeLessThanOrEqual(250);
    expect(events.find((e) => e.type === "summarized")).toMatchObject({ from: ["alpha", "beta"] });
  });

  test("eviction order is a pure function of the items", () => {
    const { ws } = set("fifo", 100);
    ws.add({ content: "x y", source: "s", id: "x" });
    ws.add({ content: "y z", source: "s", id: "y" });
    const before = ws.snapshot();
    expect(evictionOrder(before, "fifo", { turn: 0, attention: [] }).map((i) => i.id)).toEqual(["x", "y"]);
    expect(ws.snapshot()).toEqual(before);
  });
});

describe("WorkingSet items and events", () => {
  test("emits added/removed/cleared with totals; same content keeps one item", () => {
    const { ws, events } = set("fifo", 100);
    const a = ws.add({ content: "same content", source: "s" });
    const b = ws.add({ content: "same content", source: "s", priority: 0.9 });
    expect(a?.id).toBe(b?.id ?? "");
    expect(ws.items().length).toBe(1);
    expect(ws.items()[0]?.priority).toBe(0.9);
    ws.remove(a?.id ?? "");
    ws.add({ content: "other", source: "s" });
    ws.clear();
    expect(events.map((e) => e.type)).toEqual(["added", "added", "removed", "added", "cleared"]);
    expect(events[0]).toMatchObject({ total: 2, budget: 100 });
  });

  test("an item larger than the budget is rejected with an event, not added", () => {
    const { ws, events } = set("fifo", 3);
    expect(ws.add({ content: "one two three four", source: "s" })).toBeUndefined();
    expect(ws.items()).toEqual([]);
    expect(events[0]?.type).toBe("rejected");
  });

  test("snapshot and restore round-trip without events; setBudget evicts by policy", () => {
    const { ws, events } = set("fifo", 100);
    ws.add({ content: four("a"), source: "s", id: "a" });
    ws.add({ content: four("b"), source: "s", id: "b" });
    const snap = ws.snapshot();
    const { ws: other, events: otherEvents } = set("fifo", 100);
    other.restore(snap);
    expect(other.snapshot()).toEqual(snap);
    expect(otherEvents).toEqual([]);
    other.setBudget(5);
    expect(other.items().map((i) => i.id)).toEqual(["b"]);
    expect(otherEvents.map((e) => e.type)).toEqual(["evicted"]);
    expect(events.length).toBe(2);
  });
});
