import { describe, expect, test } from "bun:test";
import { countTokens, loadTokenizer } from "../../src/tokens/tokenizer.ts";
import * as ops from "../../src/state/ops.ts";
import { projectState, STATE_TOKEN_CAP } from "../../src/state/projection.ts";
import { emptyState, type WorkingState } from "../../src/state/schema.ts";
import { encodeStateToon, renderToon } from "../../src/state/toon.ts";
import { state20x30, stress500 } from "./state-fixtures.ts";

const at = new Date("2026-04-02T15:30:00.000Z");

function small(): WorkingState {
  let s = emptyState(at);
  s = ops.setGoal(s, "ship").state;
  s = ops.addTask(s, "done one", {}, at).state;
  s = ops.completeTask(s, "T-1", at).state;
  s = ops.addTask(s, "open one", {}, at).state;
  s = ops.addDecision(s, "use TOON", "fewer tokens", at).state;
  return s;
}

describe("projectState", () => {
  test("keeps what helps the next decision and drops bookkeeping", async () => {
    const { projection, omitted } = await encodeStateToon(small());
    expect(projection).toEqual({
      goal: "ship",
      now: "",
      decisions_recent: [{ id: "ADR-0001", title: "use TOON", date: "2026-04-02", why: "fewer tokens" }],
      tasks_open: [{ id: "T-2", title: "open one", status: "open" }],
      blockers: [],
      conventions: {},
    });
    expect(omitted).toEqual([]);
  });

  test("a blocked task's note is not repeated when its blocker says the same", async () => {
    let s = ops.addTask(emptyState(at), "deploy", {}, at).state;
    s = ops.blockTask(s, "T-1", "no credentials", at).state;
    const { projection, toon } = await encodeStateToon(s);
    expect(projection.tasks_open).toEqual([{ id: "T-1", title: "deploy", status: "blocked" }]);
    expect(toon.split("no credentials")).toHaveLength(2);
  });

  test("the 20-decision/30-task state fits the cap, keeps open work, and lists what it left out", async () => {
    const state = state20x30();
    const { tokens, omitted, projection, toon } = await encodeStateToon(state);
    expect(tokens).toBeLessThanOrEqual(STATE_TOKEN_CAP);
    expect(tokens).toBe(await countTokens(toon));
    const live = state.tasks_open.filter((t) => t.status !== "done").map((t) => t.id);
    expect(projection.tasks_open.map((t) => t.id)).toEqual(live);
    expect(projection.blockers).toHaveLength(state.blockers.length);
    // Newest decisions stay; the omitted ones are all older than every kept one.
    const kept = projection.decisions_recent.map((d) => d.id);
    expect(kept).toContain("ADR-0020");
    const dropped = omitted.filter((o) => o.startsWith("ADR-"));
    expect(dropped.length + kept.length).toBe(20);
    for (const d of dropped) for (const k of kept) expect(d < k).toBe(true);
    expect(omitted[0]).toBe("decisions_recent.why");
  });

  test("the TOON of the 20+30 state is at most 0.7× its compact JSON", async () => {
    const state = state20x30();
    const { tokens } = await encodeStateToon(state);
    const uncapped = await encodeStateToon(state, { maxTokens: 1_000_000 });
    const json = await countTokens(JSON.stringify(state));
    expect(tokens / json).toBeLessThanOrEqual(0.7);
    expect(uncapped.omitted).toEqual([]);
    expect(uncapped.tokens / json).toBeLessThanOrEqual(0.7);
  });

  test("a 500-item state is cut to the cap, active work first", async () => {
    const state = stress500();
    const { tokens, omitted, projection } = await encodeStateToon(state);
    expect(tokens).toBeLessThanOrEqual(STATE_TOKEN_CAP);
    expect(tokens).toBeGreaterThan(STATE_TOKEN_CAP - 60);
    expect(omitted.length).toBeGreaterThan(300);
    expect(projection.blockers).toHaveLength(state.blockers.length);
    // Nothing open is kept while an in-progress or blocked task is left out.
    const keptOpen = projection.tasks_open.filter((t) => t.status === "open");
    const droppedActive = state.tasks_open.filter((t) => (t.status === "in_progress" || t.status === "blocked") && omitted.includes(t.id));
    expect(keptOpen.length === 0 || droppedActive.length === 0).toBe(true);
  });

  test("a huge goal is cut and reported; everything stays exact under a tiny cap", () => {
    const s = { ...small(), goal: "g".repeat(5000) };
    const r = projectState(s, { maxTokens: 200, countTokens: (t) => t.length, render: renderToon });
    // Counting a character as a token: 30% of the cap (60), the "…" included.
    expect(r.projection.goal).toHaveLength(60);
    expect(r.omitted).toContain("goal (cut)");
    expect(r.tokens).toBe(renderToon(r.projection).length);
    // Under a roomy cap the 600-character limit is what cuts.
    expect(projectState(s, { maxTokens: 10_000, countTokens: (t) => t.length, render: renderToon }).projection.goal).toHaveLength(601);
  });

  test("a cut never splits an emoji, and text dense in tokens (Japanese) is cut by tokens, so the state fits its cap", async () => {
    const count = await loadTokenizer();
    const emoji = projectState({ ...small(), goal: `a${"👍".repeat(400)}` }, { countTokens: count });
    expect(emoji.omitted).toContain("goal (cut)");
    expect(emoji.projection.goal).toBe(`${emoji.projection.goal.slice(0, -1)}…`);
    expect(() => encodeURIComponent(emoji.projection.goal)).not.toThrow(); // no lone surrogate
    const japanese = "日本語の文章はトークンが多い。".repeat(45);
    const r = projectState({ ...small(), goal: japanese, now: japanese }, { countTokens: count });
    expect(r.tokens).toBeLessThanOrEqual(STATE_TOKEN_CAP);
    expect(r.omitted).toEqual(expect.arrayContaining(["goal (cut)", "now (cut)"]));
    expect(count(r.projection.goal)).toBeLessThanOrEqual(Math.floor(STATE_TOKEN_CAP * 0.3));
  });

  test("kept items stay in id order, so adding one never reorders the rest", () => {
    let s = emptyState(at);
    for (let i = 0; i < 12; i++) s = ops.addTask(s, `task ${i}`, {}, new Date(at.getTime() - i * 60_000)).state;
    const r = projectState(s, { countTokens: (t) => t.length, render: renderToon });
    expect(r.projection.tasks_open.map((t) => t.id)).toEqual(s.tasks_open.map((t) => t.id));
  });

  test("with the tokenizer loaded, the defaults are TOON and exact o200k counts", async () => {
    await loadTokenizer();
    const r = projectState(state20x30());
    expect(r.tokens).toBe(await countTokens(renderToon(r.projection)));
    const encoded = await encodeStateToon(state20x30());
    expect({ projection: r.projection, omitted: r.omitted, tokens: r.tokens }).toEqual({
      projection: encoded.projection,
      omitted: encoded.omitted,
      tokens: encoded.tokens,
    });
  });
});
