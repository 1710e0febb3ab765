import { afterEach, describe, expect, test } from "bun:test";
import { cleanup } from "ink-testing-library";
import { SLASH_CATALOG } from "../../src/agent/slash-catalog.ts";
import { KEYS, renderApp, waitUntil } from "./ink-harness.tsx";

afterEach(() => cleanup());

describe("slash commands", () => {
  test("a core command is dispatched with its arguments and its output shown", async () => {
    const h = renderApp({
      commandOutputs: { manifest: { title: "Manifest 3", lines: ["id      tokens", "rules   1200"] } },
    });
    await h.see("Ask anything");
    await h.keys("/manifest 3", KEYS.enter);
    await h.see("Manifest 3");
    expect(h.controller.commandsRun).toEqual([{ name: "manifest", args: "3" }]);
    expect(h.frame()).toContain("rules   1200");
    expect(h.controller.submitted).toEqual([]);
  });

  test("every command of the issue reaches the controller", async () => {
    const names = [
      "state",
      "goal x",
      "now y",
      "decide z",
      "task t",
      "compact",
      "window",
      "summary",
      "clear",
      "model m",
      "approvals full-auto",
      "resume s-1",
      "sessions",
    ];
    const h = renderApp();
    await h.see("Ask anything");
    for (const line of names) {
      await h.keys(`/${line}`, KEYS.enter);
      await waitUntil(() => h.controller.commandsRun.length === names.indexOf(line) + 1, `/${line}`, h.frame);
    }
    expect(h.controller.commandsRun.map((run) => `${run.name}${run.args ? ` ${run.args}` : ""}`)).toEqual(names);
  });

  test("/help is answered by the UI and lists every command of the catalogue", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("/help", KEYS.enter);
    await h.see("Commands");
    expect(h.controller.commandsRun).toEqual([]);
    for (const command of SLASH_CATALOG) expect(h.screen()).toContain(`${command.usage} `);
    expect(h.frame()).toContain("Keys");
  });

  test("an alias runs its command: /quit leaves", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("/quit", KEYS.enter);
    await waitUntil(() => h.exitCount() === 1, "exit", h.frame);
  });

  test("/exit leaves", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("/exit", KEYS.enter);
    await waitUntil(() => h.exitCount() === 1, "exit", h.frame);
  });

  test("an unknown command says how to find the right one", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("/frobnicate", KEYS.enter);
    await h.see("Unknown command /frobnicate");
    expect(h.frame()).toContain("/help");
    expect(h.controller.commandsRun).toEqual([]);
  });

  test("a failing command shows its message", async () => {
    const h = renderApp({ commandOutputs: { compact: new Error("state.json is invalid: goal must be a string") } });
    await h.see("Ask anything");
    await h.keys("/compact", KEYS.enter);
    await h.see("/compact failed");
    expect(h.frame()).toContain("state.json is invalid");
  });

  test("the status line is refreshed after a command", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    h.controller.statusValue = { ...h.controller.statusValue, goal: "new goal", model: "gpt-other" };
    await h.keys("/goal new goal", KEYS.enter);
    await h.see("gpt-other ·", h.frame);
    expect(h.frame()).toContain("goal new goal");
  });

  test("/resume without an id offers a picker: the other sessions, newest first", async () => {
    const h = renderApp({
      sessions: [
        { id: "s-1", file: "a.jsonl", startedAt: "2026-01-01 10:00", turns: 3, firstMessage: "fix the parser" },
        { id: "s-2", file: "b.jsonl", startedAt: "2026-01-02 11:00", turns: 1, firstMessage: "add docs" },
        { id: "s-test", file: "c.jsonl", startedAt: "2026-01-03 12:00", turns: 2, firstMessage: "this very session" },
      ],
    });
    await h.see("Ask anything");
    await h.keys("/resume", KEYS.enter);
    await h.see("Resume a session");
    const rows = h.frame().split("\n").filter((line) => line.includes("turn(s)"));
    expect(rows.map((row) => /add docs|fix the parser|this very session/.exec(row)?.[0])).toEqual(["add docs", "fix the parser"]);
    expect(rows[0]).toContain("› ");
    await h.keys(KEYS.down, KEYS.enter);
    await waitUntil(() => h.controller.commandsRun.length === 1, "the resume", h.frame);
    expect(h.controller.commandsRun).toEqual([{ name: "resume", args: "s-1" }]);
  });

  test("/resume without an id when the only session is this one: says so, no picker", async () => {
    const h = renderApp({ sessions: [{ id: "s-test", file: "c.jsonl", startedAt: "2026-01-03 12:00", turns: 2, firstMessage: "this very session" }] });
    await h.see("Ask anything");
    await h.keys("/resume", KEYS.enter);
    await h.see("No earlier sessions in this repository.");
    expect(h.frame()).not.toContain("Resume a session");
  });
});

describe("completion", () => {
  test("/ completes command names with Tab", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("/comp");
    await h.see("/compact");
    await h.keys(KEYS.tab, KEYS.enter);
    await waitUntil(() => h.controller.commandsRun.length === 1, "the command", h.frame);
    expect(h.controller.commandsRun).toEqual([{ name: "compact", args: "" }]);
  });

  test("@ completes workspace paths through the controller; Enter accepts, then sends", async () => {
    const h = renderApp({ paths: ["src/app.tsx", "src/a.ts", "test/a.test.ts"] });
    await h.see("Ask anything");
    await h.keys("read @src/a");
    await h.see("src/app.tsx");
    expect(h.controller.pathQueries).toContain("src/a");
    await h.keys(KEYS.down, KEYS.enter);
    await h.see("read @src/a.ts");
    await h.keys(KEYS.enter);
    await waitUntil(() => h.controller.submitted.length === 1, "the submit", h.frame);
    expect(h.controller.submitted).toEqual(["read @src/a.ts "]);
  });

  test("Esc closes the menu without leaving the prompt", async () => {
    const h = renderApp({ paths: ["src/a.ts"] });
    await h.see("Ask anything");
    await h.keys("@s");
    await h.see("src/a.ts");
    await h.keys(KEYS.escape);
    await waitUntil(() => !h.frame().includes(" src/a.ts "), "the menu to close", h.frame);
    expect(h.exitCount()).toBe(0);
  });
});

describe("keys faster than renders", () => {
  test("an open path menu does not swallow Enter after Ctrl+U and a command typed in one read", async () => {
    const h = renderApp({ paths: ["src/a.ts"] });
    await h.see("Ask anything");
    await h.keys("look at @sr");
    await h.see("src/a.ts");
    await h.keys("\u0015/window\r");
    await waitUntil(() => h.controller.commandsRun.length === 1, "the command", h.frame);
    expect(h.controller.commandsRun).toEqual([{ name: "window", args: "" }]);
    expect(h.controller.submitted).toEqual([]);
  });
});
