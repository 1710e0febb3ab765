/**
 * The working state in two parts (ADR 0063): the snapshot in the cached part, the changes since
 * near the end; no changes, no second piece.
 */
import { describe, expect, test } from "bun:test";
import { buildRequest } from "../../src/prompt/builder.ts";
import * as ops from "../../src/state/ops.ts";
import { emptyState } from "../../src/state/schema.ts";

const settings = { model: "gpt-5.5", maxContextTokens: 24000, toolOutputTokens: 2000, windowBlockTurns: 5, windowAnswerTokens: 80, reasoningEffort: "medium" } as const;
const at = new Date("2026-11-01T00:00:00Z");

function texts(input: readonly unknown[]): string[] {
  return input.map((item) => JSON.stringify(item));
}

describe("working state snapshot and changes", () => {
  const snapshot = ops.addTask(ops.setGoal(emptyState(at), "Ship v1").state, "Write the parser", {}, at).state;

  test("without changes: one working_state piece, no changes piece", async () => {
    const built = await buildRequest({ settings, sessionId: "s", turn: 4, sources: { state: snapshot, stateSnapshot: { turn: 2, state: snapshot } }, task: { userText: "go", items: [] } });
    const ids = built.manifest.items.map((i) => i.id);
    expect(ids).toContain("working_state");
    expect(ids).not.toContain("working_state_changes");
  });

  test("a change shows as a small piece after the user's message; the snapshot part stays byte-identical", async () => {
    const changed = ops.completeTask(ops.setNow(snapshot, "Testing the parser").state, "T-1", at).state;
    const before = await buildRequest({ settings, sessionId: "s", turn: 4, sources: { state: snapshot, stateSnapshot: { turn: 2, state: snapshot } }, task: { userText: "go", items: [] } });
    const after = await buildRequest({ settings, sessionId: "s", turn: 4, sources: { state: changed, stateSnapshot: { turn: 2, state: snapshot } }, task: { userText: "go", items: [] } });

    const item = after.manifest.items.find((i) => i.id === "working_state_changes");
    expect(item).toMatchObject({ region: "state_changes", format: "toon", reason: "working_state_changes", stable: false });
    const hashOf = (m: typeof before.manifest) => m.items.find((i) => i.id === "working_state")?.hash;
    expect(hashOf(after.manifest)).toBe(hashOf(before.manifest));

    const changeText = texts(after.request.input).find((t) => t.includes("working_state_changes")) ?? "";
    expect(changeText).toContain("since_turn");
    expect(changeText).toContain("Testing the parser");
    expect(changeText).toContain("T-1");
    // The changes come after the user's message, with this turn's data, right before the volatile context (ADR 0074).
    const regions = after.manifest.items.map((i) => i.region);
    expect(regions.indexOf("state_changes")).toBeGreaterThan(regions.indexOf("state"));
    expect(regions.indexOf("state_changes")).toBeGreaterThan(regions.indexOf("task"));
    expect(regions.indexOf("state_changes")).toBeLessThan(regions.indexOf("context"));
  });
});
