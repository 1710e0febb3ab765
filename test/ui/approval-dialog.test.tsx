/**
 * The approval dialog says exactly what "for this session" will remember: the exact command line,
 * the prefix (with what it never matches), or the whole tool; a warning comes first; and a call
 * that may only be allowed once offers no session choice at all.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { cleanup } from "ink-testing-library";
import type { SessionRemember } from "../../src/agent/events.ts";
import type { ScriptStep } from "../support/fake-controller.ts";
import { KEYS, renderApp, waitUntil } from "./ink-harness.tsx";

afterEach(() => cleanup());

function askTurn(name: string, description: string, extra: { warning?: string; remember?: SessionRemember }): ScriptStep[] {
  return [
    { type: "turn_start", turn: 1, userText: "" },
    { type: "tool_call_start", callId: "c1", name, target: description },
    { type: "approval_request", callId: "c1", name, description, ...extra },
    { type: "tool_call_end", callId: "c1", name, summary: "done", isError: false, denied: false },
    { type: "turn_end", turn: 1, text: "", stopReason: "completed" },
  ];
}

async function openDialog(name: string, description: string, extra: { warning?: string; remember?: SessionRemember }) {
  const h = renderApp({ turns: [askTurn(name, description, extra)] });
  await h.see("Ask anything");
  await h.keys("go", KEYS.enter);
  await h.see(`Allow ${name}?`);
  return h;
}

/** The frame with wrapped lines joined, so a long label can be found whole. */
const flat = (frame: string): string => frame.replace(/[│╭╮╰╯─]/g, " ").replace(/\s+/g, " ");

describe("the approval dialog shows what a session answer remembers", () => {
  test("a command with a prefix: the exact line and the prefix, literally, with the prefix's limits; p picks the prefix", async () => {
    const h = await openDialog("run_shell", "run `git diff HEAD~1`", { remember: { kind: "command", exact: "git diff HEAD~1", prefix: "git diff" } });
    const shown = flat(h.frame());
    expect(shown).toContain("1. Allow once (y)");
    expect(shown).toContain("2. Allow exactly `git diff HEAD~1` for this session (a)");
    expect(shown).toContain("3. Allow `git diff` followed by any arguments for this session (p)");
    expect(shown).toContain("but never with ; & | ` $ < > ( ) quotes or globs, options that run commands or write files");
    expect(shown).toContain("--output");
    expect(shown).toContain("paths outside the workspace (/…, ~…, ../)");
    expect(shown).toContain("4. Deny (n)");
    expect(shown).toContain("y a p n e");
    await h.keys("p");
    await waitUntil(() => h.controller.decisions.length === 1, "the decision", h.frame);
    expect(h.controller.decisions).toEqual([{ kind: "allow_session", scope: "prefix" }]);
  });

  test("an exact-only command offers no prefix; a picks the exact line", async () => {
    const h = await openDialog("run_shell", "run `python -m pytest`", { remember: { kind: "command", exact: "python -m pytest" } });
    const shown = flat(h.frame());
    expect(shown).toContain("2. Allow exactly `python -m pytest` for this session (a)");
    expect(shown).not.toContain("followed by any arguments");
    expect(shown).toContain("3. Deny (n)");
    await h.keys("a");
    await waitUntil(() => h.controller.decisions.length === 1, "the decision", h.frame);
    expect(h.controller.decisions).toEqual([{ kind: "allow_session", scope: "exact" }]);
  });

  test("a file tool: the label says every call of the tool is remembered", async () => {
    const h = await openDialog("edit_file", "edit src/a.ts", { remember: { kind: "tool", tool: "edit_file" } });
    expect(flat(h.frame())).toContain("2. Allow every edit_file call for this session, with any arguments (a)");
    await h.keys("2");
    await waitUntil(() => h.controller.decisions.length === 1, "the decision", h.frame);
    expect(h.controller.decisions).toEqual([{ kind: "allow_session", scope: "tool" }]);
  });

  test("an escalated call: the warning comes first and only this call can be allowed", async () => {
    const warning = "the file has 2 hard links; another name for it may be outside the workspace";
    const h = await openDialog("edit_file", "edit src/a.ts", { warning });
    const frame = h.frame();
    const dialog = frame.slice(frame.indexOf("Allow edit_file?"));
    expect(flat(dialog)).toContain(`⚠ ${warning}`);
    expect(dialog.indexOf("⚠")).toBeLessThan(dialog.indexOf("edit src/a.ts"));
    expect(frame).not.toContain("for this session");
    expect(flat(frame)).toContain("2. Deny (n)");
    await h.keys("a");
    expect(h.controller.decisions).toEqual([]);
    await h.keys("y");
    await waitUntil(() => h.controller.decisions.length === 1, "the decision", h.frame);
    expect(h.controller.decisions).toEqual([{ kind: "allow_once" }]);
  });
});
