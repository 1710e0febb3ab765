import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { call, makeWorkspace, registryFor, removeWorkspaces } from "./temp-workspace.ts";

afterAll(removeWorkspaces);

interface StateOnDisk {
  goal: string;
  now: string;
  decisions_recent: Array<{ id: string; title: string; why: string }>;
  tasks_open: Array<{ id: string; title: string; status: string; note?: string; files?: string[] }>;
  blockers: Array<{ id: string; text: string; task?: string }>;
  conventions: Record<string, string>;
}

const stateOf = (root: string): StateOnDisk => JSON.parse(readFileSync(join(root, ".valarmind/memory/state.json"), "utf8")) as StateOnDisk;

describe("memory tools change state.json on disk", () => {
  test("goal and now: the file changes and the result says what changed", async () => {
    const root = makeWorkspace();
    const registry = registryFor(root);
    const goal = await call(registry, "memory_set_goal", { goal: "ship v1 of the CLI" });
    expect(goal.isError).toBe(false);
    expect(goal.forModel).toBe('Working state updated: goal: (empty) → "ship v1 of the CLI".');
    expect(goal.memoryChange).toBe('goal: (empty) → "ship v1 of the CLI"');
    expect(stateOf(root).goal).toBe("ship v1 of the CLI");
    const now = await call(registry, "memory_set_now", { now: "writing the registry tests" });
    expect(now.summary).toBe('memory: now: (empty) → "writing the registry tests"');
    expect(stateOf(root).now).toBe("writing the registry tests");
  });

  test("a call that changes nothing reports it and leaves the file alone", async () => {
    const root = makeWorkspace();
    const registry = registryFor(root);
    await call(registry, "memory_task", { action: "add", title: "t" });
    const file = join(root, ".valarmind/memory/state.json");
    const before = readFileSync(file, "utf8");
    const unchanged = await call(registry, "memory_task", { action: "update", id: "T-1", title: "t" });
    expect(unchanged.forModel).toBe("Working state unchanged: task T-1 unchanged.");
    expect(unchanged.memoryChange).toBeUndefined();
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  test("tasks: add, update, block (with a blocker), done", async () => {
    const root = makeWorkspace();
    const registry = registryFor(root);
    const added = await call(registry, "memory_task", { action: "add", title: "fix the port", files: ["src/server.ts"] });
    expect(added.forModel).toBe("Working state updated: added task T-1 (open): fix the port.");
    await call(registry, "memory_task", { action: "update", id: "t-1", status: "in_progress", note: "halfway" });
    expect(stateOf(root).tasks_open[0]).toMatchObject({ id: "T-1", status: "in_progress", note: "halfway", files: ["src/server.ts"] });
    const blocked = await call(registry, "memory_task", { action: "block", id: "T-1", reason: "waiting for the API key" });
    expect(blocked.forModel).toBe("Working state updated: task T-1: status in_progress → blocked; added blocker B-1: waiting for the API key.");
    expect(stateOf(root).blockers).toMatchObject([{ id: "B-1", text: "waiting for the API key", task: "T-1" }]);
    const done = await call(registry, "memory_task", { action: "done", id: "1" });
    expect(done.memoryChange).toContain("task T-1: status blocked → done");
    expect(stateOf(root).tasks_open[0]?.status).toBe("done");
    expect(stateOf(root).blockers).toEqual([]);
  });

  test("task errors name what is missing or unknown, and list the tasks", async () => {
    const root = makeWorkspace();
    const registry = registryFor(root);
    await call(registry, "memory_task", { action: "add", title: "only task" });
    expect((await call(registry, "memory_task", { action: "add" })).forModel).toBe('Error: memory_task with action "add" needs "title". Call memory_task again with it.');
    expect((await call(registry, "memory_task", { action: "block", id: "T-1" })).forModel).toContain('needs "reason"');
    const unknown = await call(registry, "memory_task", { action: "done", id: "T-9" });
    expect(unknown.isError).toBe(true);
    expect(unknown.forModel).toContain("the working state was not changed: no task with id T-9 in the working state");
    expect(unknown.forModel).toContain("Tasks: T-1 (open) only task.");
  });

  test("conventions: set, change, remove", async () => {
    const root = makeWorkspace();
    const registry = registryFor(root);
    await call(registry, "memory_set_convention", { name: "port", rule: "the dev server listens on 4173" });
    const changed = await call(registry, "memory_set_convention", { name: "port", rule: "the dev server listens on 5173" });
    expect(changed.memoryChange).toBe('convention port: "the dev server listens on 4173" → "the dev server listens on 5173"');
    expect(stateOf(root).conventions).toEqual({ port: "the dev server listens on 5173" });
    await call(registry, "memory_set_convention", { name: "port", rule: null });
    expect(stateOf(root).conventions).toEqual({});
  });

  test("decisions without an ADR touch only state.json and never ask", async () => {
    const root = makeWorkspace();
    const asked: string[] = [];
    const registry = registryFor(root, {
      settings: { approvals: "suggest", toolOutputTokens: 100_000, shellTimeoutMs: 10_000 },
      interactive: true,
      ask: async (r) => {
        asked.push(r.name);
        return { kind: "deny" };
      },
    });
    const outcome = await call(registry, "memory_record_decision", { title: "Use ajv for validation", why: "one schema source" });
    expect(outcome.forModel).toBe("Working state updated: added decision ADR-0001: Use ajv for validation.");
    expect(stateOf(root).decisions_recent).toMatchObject([{ id: "ADR-0001", title: "Use ajv for validation", why: "one schema source" }]);
    expect(existsSync(join(root, "docs"))).toBe(false);
    expect(asked).toEqual([]);
  });

  test("write_adr writes docs/adr/NNNN-slug.md numbered after existing ADRs, never overwriting", async () => {
    const root = makeWorkspace({ "docs/adr/0007-older-choice.md": "# keep me\n" });
    const registry = registryFor(root);
    const outcome = await call(registry, "memory_record_decision", { title: "Store sessions as JSONL!", why: "append-only, torn lines tolerated", write_adr: true });
    expect(outcome.isError).toBe(false);
    expect(outcome.forModel).toBe("Working state updated: added decision ADR-0008: Store sessions as JSONL!. Wrote docs/adr/0008-store-sessions-as-jsonl.md.");
    const adr = readFileSync(join(root, "docs/adr/0008-store-sessions-as-jsonl.md"), "utf8");
    expect(adr).toStartWith("# 0008. Store sessions as JSONL!\n");
    expect(adr).toContain("append-only, torn lines tolerated");
    expect(adr).toContain("ADR-0008");
    expect(stateOf(root).decisions_recent.map((d) => d.id)).toEqual(["ADR-0008"]);
    expect(readFileSync(join(root, "docs/adr/0007-older-choice.md"), "utf8")).toBe("# keep me\n");
    // The next plain decision continues the numbering.
    const next = await call(registry, "memory_record_decision", { title: "Next", why: "" });
    expect(next.memoryChange).toBe("added decision ADR-0009: Next");
  });

  test("write_adr is a write: suggest mode asks with the new file as diff; a denial records nothing", async () => {
    const root = makeWorkspace();
    const diffs: string[] = [];
    const registry = registryFor(root, {
      settings: { approvals: "suggest", toolOutputTokens: 100_000, shellTimeoutMs: 10_000 },
      interactive: true,
      ask: async (r) => {
        diffs.push(r.diff ?? "");
        return { kind: "deny" };
      },
    });
    const outcome = await call(registry, "memory_record_decision", { title: "Use Bun", why: "fast", write_adr: true });
    expect(outcome.denied).toBe(true);
    expect(diffs[0]).toStartWith("--- /dev/null\n+++ b/docs/adr/0001-use-bun.md\n");
    expect(existsSync(join(root, "docs/adr"))).toBe(false);
    expect(existsSync(join(root, ".valarmind/memory/state.json"))).toBe(false);
  });

  test("headless suggest refuses write_adr but records plain decisions", async () => {
    const root = makeWorkspace();
    const registry = registryFor(root, { settings: { approvals: "suggest", toolOutputTokens: 100_000, shellTimeoutMs: 10_000 }, interactive: false });
    const refused = await call(registry, "memory_record_decision", { title: "A", why: "b", write_adr: true });
    expect(refused.forModel).toContain("--approvals auto-edit");
    const plain = await call(registry, "memory_record_decision", { title: "A", why: "b" });
    expect(plain.isError).toBe(false);
    expect(stateOf(root).decisions_recent).toHaveLength(1);
  });

  test("a corrupt state.json is kept aside, never overwritten, and the model is told", async () => {
    const root = makeWorkspace();
    mkdirSync(join(root, ".valarmind/memory"), { recursive: true });
    writeFileSync(join(root, ".valarmind/memory/state.json"), "{ not json");
    const outcome = await call(registryFor(root), "memory_set_goal", { goal: "recover" });
    expect(outcome.isError).toBe(false);
    expect(outcome.forModel).toContain("Note:");
    expect(stateOf(root).goal).toBe("recover");
    const aside = readdirSync(join(root, ".valarmind/memory")).filter((n) => n.startsWith("state.json.corrupt-"));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(root, ".valarmind/memory", aside[0] ?? ""), "utf8")).toBe("{ not json");
  });
});
