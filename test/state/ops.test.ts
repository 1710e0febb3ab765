import { describe, expect, test } from "bun:test";
import { UsageError } from "../../src/errors.ts";
import * as ops from "../../src/state/ops.ts";
import { emptyState, type WorkingState } from "../../src/state/schema.ts";
import { validateState } from "../../src/state/validate.ts";

const at = new Date("2026-02-01T10:00:00.000Z");

function chain(state: WorkingState, ...steps: ((s: WorkingState) => ops.OpResult)[]): WorkingState {
  return steps.reduce((s, step) => step(s).state, state);
}

describe("state ops", () => {
  test("ids run in order and survive gaps", () => {
    let s = emptyState(at);
    s = chain(s, (x) => ops.addTask(x, "one", {}, at), (x) => ops.addTask(x, "two", {}, at));
    expect(s.tasks_open.map((t) => t.id)).toEqual(["T-1", "T-2"]);
    s = { ...s, tasks_open: s.tasks_open.filter((t) => t.id !== "T-1") };
    expect(ops.addTask(s, "three", {}, at).state.tasks_open.at(-1)?.id).toBe("T-3");
    s = chain(s, (x) => ops.addDecision(x, "a", "why a", at), (x) => ops.addDecision(x, "b", "why b", at));
    expect(s.decisions_recent.map((d) => d.id)).toEqual(["ADR-0001", "ADR-0002"]);
  });

  test("ops never mutate their input and results validate", () => {
    const s = emptyState(at);
    const frozen = JSON.stringify(s);
    const r = ops.addTask(s, "write tests", { note: "start with ops", files: ["src/state/ops.ts"] }, at);
    expect(JSON.stringify(s)).toBe(frozen);
    expect(r.change).toBe("added task T-1 (open): write tests");
    expect(validateState(r.state, "state.json").ok).toBe(true);
  });

  test("unknown ids are a usage error naming the id", () => {
    const s = emptyState(at);
    expect(() => ops.updateTask(s, "T-9", { status: "done" }, at)).toThrow(UsageError);
    expect(() => ops.completeTask(s, "9", at)).toThrow("no task with id T-9");
    expect(() => ops.blockTask(s, "t-4", "x", at)).toThrow("no task with id T-4");
    expect(() => ops.clearBlocker(s, "B-2", at)).toThrow("no blocker with id B-2");
    expect(() => ops.unsetConvention(s, "style")).toThrow('no convention named "style"');
  });

  test("empty titles are refused", () => {
    expect(() => ops.addTask(emptyState(at), "   ", {}, at)).toThrow("must not be empty");
    expect(() => ops.addDecision(emptyState(at), "", "why", at)).toThrow("must not be empty");
  });

  test("blocking records a blocker; completing the task clears it", () => {
    let s = ops.addTask(emptyState(at), "deploy", {}, at).state;
    const blocked = ops.blockTask(s, "T-1", "waiting for credentials", at);
    expect(blocked.change).toBe("task T-1: status open → blocked; added blocker B-1: waiting for credentials");
    s = blocked.state;
    expect(s.blockers).toEqual([{ id: "B-1", text: "waiting for credentials", ts: at.toISOString(), task: "T-1" }]);
    const done = ops.completeTask(s, "1", at);
    expect(done.change).toBe("task T-1: status blocked → done; cleared blocker B-1 (deploy)");
    expect(done.state.blockers).toEqual([]);
    expect(ops.completeTask(done.state, "T-1", at).change).toBe("task T-1 was already done");
  });

  test("clearing the last blocker of a task reopens it", () => {
    let s = ops.addTask(emptyState(at), "deploy", {}, at).state;
    s = ops.addBlocker(s, "no credentials", { task: "T-1" }, at).state;
    s = ops.addBlocker(s, "CI is red", {}, at).state;
    const cleared = ops.clearBlocker(s, "b-1", at);
    expect(cleared.change).toBe("cleared blocker B-1: no credentials; task T-1: status blocked → open");
    expect(cleared.state.tasks_open[0]?.status).toBe("open");
    expect(cleared.state.blockers.map((b) => b.id)).toEqual(["B-2"]);
  });

  test("updateTask reports each changed field and leaves an unchanged task alone", () => {
    const s = ops.addTask(emptyState(at), "draft", { note: "n" }, at).state;
    const r = ops.updateTask(s, "T-1", { title: "final", status: "in_progress", note: "", files: ["a.ts"] }, at);
    expect(r.change).toBe('task T-1: title "draft" → "final"; status open → in_progress; note "n" → (empty); files [] → [a.ts]');
    expect(r.state.tasks_open[0]).toEqual({ id: "T-1", title: "final", status: "in_progress", updated_at: at.toISOString(), files: ["a.ts"] });
    const same = ops.updateTask(s, "T-1", { title: "draft" }, at);
    expect(same.state).toBe(s);
    expect(same.change).toBe("task T-1 unchanged");
  });

  test("goal, now and conventions describe the change", () => {
    let r = ops.setGoal(emptyState(at), "  ship  ");
    expect(r.change).toBe('goal: (empty) → "ship"');
    r = ops.setNow(r.state, "testing");
    r = ops.setConvention(r.state, "testing", "bun test");
    expect(r.change).toBe('convention testing: set to "bun test"');
    r = ops.setConvention(r.state, "testing", "bun test --bail");
    expect(r.change).toBe('convention testing: "bun test" → "bun test --bail"');
    r = ops.unsetConvention(r.state, "testing");
    expect(r.state.conventions).toEqual({});
    expect(r.state.now).toBe("testing");
  });

  test("a convention named __proto__ is an ordinary key", () => {
    const r = ops.setConvention(emptyState(at), "__proto__", "x");
    expect(Object.keys(r.state.conventions)).toEqual(["__proto__"]);
    expect(ops.unsetConvention(r.state, "__proto__").state.conventions).toEqual({});
  });
});
