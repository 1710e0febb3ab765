import { describe, expect, test } from "bun:test";
import type { ApprovalDecision } from "../../src/agent/events.ts";
import { createApprovalGate, type ApprovalRequest, type ApprovalSubject } from "../../src/tools/approvals.ts";
import { sessionPrefix } from "../../src/tools/shell-prefix.ts";
import type { ToolKind } from "../../src/tools/types.ts";

const edit: ApprovalSubject = { name: "edit_file", argsKey: '{"path":"a.ts"}' };
const shell = (command: string): ApprovalSubject => ({ name: "run_shell", command, argsKey: JSON.stringify({ command }) });
const never = new AbortController().signal;

/** An ask callback the test answers by hand; records every request. */
function manualAsk() {
  const requests: ApprovalRequest[] = [];
  let answer: (d: ApprovalDecision) => void = () => undefined;
  const ask = (request: ApprovalRequest): Promise<ApprovalDecision> => {
    requests.push(request);
    return new Promise((resolve) => (answer = resolve));
  };
  return { ask, requests, answer: (d: ApprovalDecision) => answer(d) };
}

describe("approval modes", () => {
  const table: Array<[string, ToolKind, string, string, string]> = [
    // kind, suggest, auto-edit, full-auto
    ["read", "read", "allow", "allow", "allow"],
    ["memory", "memory", "allow", "allow", "allow"],
    ["write", "write", "ask", "allow", "allow"],
    ["shell", "shell", "ask", "ask", "allow"],
  ];
  for (const [label, kind, suggest, autoEdit, fullAuto] of table) {
    test(`${label}: suggest=${suggest}, auto-edit=${autoEdit}, full-auto=${fullAuto}`, () => {
      const subject = kind === "shell" ? shell("ls") : edit;
      expect(createApprovalGate({ mode: "suggest", interactive: true }).decide(subject, kind)).toBe(suggest as never);
      expect(createApprovalGate({ mode: "auto-edit", interactive: true }).decide(subject, kind)).toBe(autoEdit as never);
      expect(createApprovalGate({ mode: "full-auto", interactive: true }).decide(subject, kind)).toBe(fullAuto as never);
    });
  }

  test("headless: a call that would ask is denied, with a message naming the flag", () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: false });
    expect(gate.decide(edit, "write")).toBe("deny");
    expect(gate.decide(shell("ls"), "shell")).toBe("deny");
    expect(gate.decide(edit, "read")).toBe("allow");
    expect(gate.refusal(edit, "write")).toBe(
      "edit_file would change files, which needs approval in 'suggest' mode, but there is no terminal to ask (headless run). Nothing was done. To allow it, re-run with --approvals auto-edit (or --yes to allow every tool call).",
    );
    expect(gate.refusal(shell("ls"), "shell")).toContain("re-run with --approvals full-auto");
    const autoEdit = createApprovalGate({ mode: "auto-edit", interactive: false });
    expect(autoEdit.decide(edit, "write")).toBe("allow");
    expect(autoEdit.decide(shell("ls"), "shell")).toBe("deny");
  });

  test("setMode changes decisions from then on", () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    gate.setMode("full-auto");
    expect(gate.mode()).toBe("full-auto");
    expect(gate.decide(shell("rm -rf build"), "shell")).toBe("allow");
  });
});

describe("session allowances", () => {
  test("allow_session for a write tool covers later calls of that tool only, and says so in the request", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    const manual = manualAsk();
    const decision = gate.confirm({ callId: "c1", name: "edit_file", description: "edit a.ts", diff: "d" }, edit, manual.ask, never);
    expect(manual.requests).toEqual([{ callId: "c1", name: "edit_file", description: "edit a.ts", diff: "d", remember: { kind: "tool", tool: "edit_file" } }]);
    manual.answer({ kind: "allow_session", scope: "tool" });
    expect(await decision).toEqual({ kind: "allow_session", scope: "tool" });
    expect(gate.decide({ name: "edit_file", argsKey: '{"path":"other.ts"}' }, "write")).toBe("allow");
    expect(gate.decide({ name: "write_file", argsKey: "{}" }, "write")).toBe("ask");
    expect(gate.sessionAllowances()).toEqual(["edit_file: every call (except calls with a warning)"]);
  });

  test("allow_session with the prefix scope covers the prefix, never compound commands", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    const manual = manualAsk();
    const decision = gate.confirm({ callId: "c1", name: "run_shell", description: "run" }, shell("cargo test --lib"), manual.ask, never);
    expect(manual.requests[0]?.remember).toEqual({ kind: "command", exact: "cargo test --lib", prefix: "cargo test" });
    manual.answer({ kind: "allow_session", scope: "prefix" });
    await decision;
    expect(gate.decide(shell("cargo test"), "shell")).toBe("allow");
    expect(gate.decide(shell("cargo test parser --release"), "shell")).toBe("allow");
    expect(gate.decide(shell("cargo install"), "shell")).toBe("ask");
    expect(gate.decide(shell("cargo test && rm -rf ~"), "shell")).toBe("ask");
    expect(gate.decide(shell("cargo test; curl x | sh"), "shell")).toBe("ask");
    expect(gate.decide(shell("cargo test > out.txt"), "shell")).toBe("ask");
    expect(gate.sessionAllowances()).toEqual(["run_shell: `cargo test` followed by any arguments allowed by the prefix rules"]);
  });

  test("allow_session with the exact scope covers that command line only", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    const manual = manualAsk();
    const decision = gate.confirm({ callId: "c1", name: "run_shell", description: "run" }, shell("cargo test --lib"), manual.ask, never);
    manual.answer({ kind: "allow_session", scope: "exact" });
    await decision;
    expect(gate.decide(shell("  cargo test --lib "), "shell")).toBe("allow");
    expect(gate.decide(shell("cargo test"), "shell")).toBe("ask");
    expect(gate.sessionAllowances()).toEqual(["run_shell: exactly `cargo test --lib`"]);
  });

  test("a scope the request did not offer remembers nothing", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    const manual = manualAsk();
    const decision = gate.confirm({ callId: "c1", name: "run_shell", description: "run" }, shell("make build"), manual.ask, never);
    expect(manual.requests[0]?.remember).toEqual({ kind: "command", exact: "make build" });
    manual.answer({ kind: "allow_session", scope: "prefix" });
    expect(await decision).toEqual({ kind: "allow_session", scope: "prefix" });
    expect(gate.decide(shell("make build"), "shell")).toBe("ask");
    expect(gate.sessionAllowances()).toEqual([]);
  });

  test("allow_once is not remembered", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    const manual = manualAsk();
    const decision = gate.confirm({ callId: "c1", name: "edit_file", description: "edit" }, edit, manual.ask, never);
    manual.answer({ kind: "allow_once" });
    await decision;
    expect(gate.decide(edit, "write")).toBe("ask");
    expect(gate.pending()).toEqual([]);
  });

  test("sessionPrefix", () => {
    expect(sessionPrefix("git status")).toBe("git status");
    expect(sessionPrefix("  npm  test -- --watch ")).toBe("npm test");
    expect(sessionPrefix("ls -la")).toBe("ls");
    expect(sessionPrefix("./gradlew test")).toBe("./gradlew test");
    expect(sessionPrefix("make && make install")).toBeUndefined();
    expect(sessionPrefix("echo $(whoami)")).toBeUndefined();
  });
});

describe("pending confirmations", () => {
  test("an unanswered confirmation stays pending after the turn is aborted and expires after 3 turns", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    gate.beginTurn(5);
    const manual = manualAsk();
    const controller = new AbortController();
    const decision = gate.confirm({ callId: "c1", name: "edit_file", description: "edit a.ts" }, edit, manual.ask, controller.signal);
    controller.abort();
    expect(await decision).toEqual({ kind: "deny", note: "not answered before the turn was aborted; the confirmation stays pending for 3 turns" });
    expect(gate.pending()).toEqual([
      { callId: "c1", name: "edit_file", description: "edit a.ts", remember: { kind: "tool", tool: "edit_file" }, askedTurn: 5, expiresAtTurn: 8 },
    ]);
    expect(gate.beginTurn(6)).toEqual([]);
    expect(gate.beginTurn(7)).toEqual([]);
    expect(gate.pending()).toHaveLength(1);
    const expired = gate.beginTurn(8);
    expect(expired.map((p) => p.callId)).toEqual(["c1"]);
    expect(gate.pending()).toEqual([]);
    // Answering after expiry does nothing: the stale action stays unapproved.
    expect(gate.answer("c1", { kind: "allow_once" })).toBe(false);
    manual.answer({ kind: "allow_once" });
    expect(gate.decide(edit, "write")).toBe("ask");
  });

  test("a late allow approves exactly that call, until the confirmation would have expired", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    gate.beginTurn(1);
    const controller = new AbortController();
    const decision = gate.confirm({ callId: "c1", name: "edit_file", description: "edit a.ts" }, edit, manualAsk().ask, controller.signal);
    controller.abort();
    await decision;
    gate.beginTurn(2);
    expect(gate.answer("c1", { kind: "allow_once" })).toBe(true);
    expect(gate.pending()).toEqual([]);
    expect(gate.decide(edit, "write")).toBe("allow");
    expect(gate.decide({ name: "edit_file", argsKey: '{"path":"b.ts"}' }, "write")).toBe("ask");
    gate.beginTurn(3);
    expect(gate.decide(edit, "write")).toBe("allow");
    gate.beginTurn(4);
    expect(gate.decide(edit, "write")).toBe("ask");
  });

  test("the UI's own answer arriving after the abort counts as a late answer", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    const manual = manualAsk();
    const controller = new AbortController();
    const decision = gate.confirm({ callId: "c1", name: "run_shell", description: "run" }, shell("make build"), manual.ask, controller.signal);
    controller.abort();
    expect((await decision).kind).toBe("deny");
    manual.answer({ kind: "allow_session", scope: "exact" });
    await Promise.resolve();
    await Promise.resolve();
    expect(gate.decide(shell("make build"), "shell")).toBe("allow");
    expect(gate.pending()).toEqual([]);
  });

  test("a late deny just clears the confirmation", async () => {
    const gate = createApprovalGate({ mode: "suggest", interactive: true });
    const controller = new AbortController();
    const decision = gate.confirm({ callId: "c1", name: "edit_file", description: "edit" }, edit, manualAsk().ask, controller.signal);
    controller.abort();
    await decision;
    expect(gate.answer("c1", { kind: "deny" })).toBe(true);
    expect(gate.pending()).toEqual([]);
    expect(gate.decide(edit, "write")).toBe("ask");
  });
});
