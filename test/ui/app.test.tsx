import { afterEach, describe, expect, test } from "bun:test";
import { cleanup } from "ink-testing-library";
import { answerTurn, deltas, type ScriptStep } from "../support/fake-controller.ts";
import { bracketedPaste, KEYS, renderApp, waitUntil } from "./ink-harness.tsx";

afterEach(() => cleanup());

const DIFF = "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-  return a - b;\n+  return a + b;";

function approvalTurn(turn: number): ScriptStep[] {
  return [
    { type: "turn_start", turn, userText: "" },
    { type: "tool_call_start", callId: "c1", name: "edit_file", target: "src/a.ts" },
    { type: "approval_request", callId: "c1", name: "edit_file", description: "edit src/a.ts", diff: DIFF, remember: { kind: "tool", tool: "edit_file" } },
    { type: "tool_call_end", callId: "c1", name: "edit_file", summary: "edited", isError: false, denied: false },
    { type: "turn_end", turn, text: "", stopReason: "completed" },
  ];
}

describe("startup", () => {
  test("shows the prompt, the status line and warnings with what to do", async () => {
    const h = renderApp({
      status: {
        warnings: ["OPENAI_API_KEY is not set: export it, or set OPENAI_BASE_URL to a local server"],
        goal: "ship v1",
        now: "writing tests",
        cachedShare: 0.5,
      },
    });
    await h.see("Ask anything");
    const frame = h.frame();
    expect(frame).toContain("OPENAI_API_KEY is not set: export it");
    expect(frame).toContain("gpt-test · prompt 1.2k/32k");
    expect(frame).toContain("cached 50%");
    expect(frame).toContain("goal ship v1 · now writing tests");
    expect(frame).not.toContain("    at ");
  });
});

describe("typing and sending", () => {
  test("Enter sends the prompt; the streamed markdown answer renders", async () => {
    const h = renderApp({ turns: [answerTurn(1, "# Plan\n\n- read **a.ts**\n- fix `sum`\n\nDone.", 3)] });
    await h.see("Ask anything");
    await h.keys("f", "i", "x", " ", "i", "t", KEYS.enter);
    await h.see("Done.");
    expect(h.controller.submitted).toEqual(["fix it"]);
    expect(h.controller.historyAppended).toEqual(["fix it"]);
    const frame = h.frame();
    expect(frame).toContain("› fix it");
    expect(frame).toContain("Plan");
    expect(frame).toContain("• read a.ts");
    expect(frame).toContain("• fix `sum`");
  });

  test("Alt+Enter, Ctrl+J and a trailing backslash add lines; Enter sends them all", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("a", KEYS.altEnter, "b", KEYS.ctrlJ, "c", "\\", KEYS.enter, "d");
    await h.see("d");
    expect(h.controller.submitted).toEqual([]);
    await h.keys(KEYS.enter);
    await waitUntil(() => h.controller.submitted.length === 1, "the submit", h.frame);
    expect(h.controller.submitted).toEqual(["a\nb\nc\nd"]);
  });

  test("a large bracketed paste shows as one chip and sends the full text", async () => {
    const pasted = Array.from({ length: 120 }, (_, i) => `log line ${i}`).join("\n");
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("see ", bracketedPaste(pasted));
    await h.see("see [pasted 120 lines]");
    expect(h.frame()).not.toContain("log line 5");
    await h.keys(KEYS.enter);
    await waitUntil(() => h.controller.submitted.length === 1, "the submit", h.frame);
    expect(h.controller.submitted[0]).toBe(`see ${pasted}`);
  });

  test("backspace removes a paste chip whole", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("x ", bracketedPaste("1\n2\n3\n4\n5\n6\n7"), KEYS.backspace, "y", KEYS.enter);
    await waitUntil(() => h.controller.submitted.length === 1, "the submit", h.frame);
    expect(h.controller.submitted).toEqual(["x y"]);
  });

  test("a small paste goes in as text", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys(bracketedPaste("two\nlines"));
    await h.see("lines");
    expect(h.frame()).not.toContain("[pasted");
  });

  test("up and down browse the saved history", async () => {
    const h = renderApp({ history: ["first question", "second question"] });
    await h.see("Ask anything");
    await h.keys("draft", KEYS.up);
    await h.see("› second question");
    await h.keys(KEYS.up);
    await h.see("› first question");
    await h.keys(KEYS.down, KEYS.down);
    await h.see("› draft");
  });
});

describe("tools and approvals", () => {
  test("tool rows show name, target, one-line result and the diff", async () => {
    const h = renderApp({
      turns: [
        [
          { type: "turn_start", turn: 1, userText: "" },
          { type: "tool_call_start", callId: "c1", name: "read_file", target: "src/a.ts" },
          {
            type: "tool_call_end",
            callId: "c1",
            name: "read_file",
            summary: "40 lines\nmore",
            isError: false,
            denied: false,
          },
          { type: "tool_call_start", callId: "c2", name: "edit_file", target: "src/a.ts" },
          {
            type: "tool_call_end",
            callId: "c2",
            name: "edit_file",
            summary: "1 replacement",
            diff: DIFF,
            isError: false,
            denied: false,
          },
          { type: "tool_call_start", callId: "c3", name: "run_shell", target: "bun test" },
          { type: "tool_call_end", callId: "c3", name: "run_shell", summary: "exit 1", isError: true, denied: false },
          { type: "turn_end", turn: 1, text: "", stopReason: "completed" },
        ],
      ],
    });
    await h.see("Ask anything");
    await h.keys("go", KEYS.enter);
    await h.see("exit 1");
    const frame = h.frame();
    expect(frame).toContain("✓ read_file src/a.ts");
    expect(frame).toContain("⎿ 40 lines");
    expect(frame).not.toContain("more");
    expect(frame).toContain("✓ edit_file src/a.ts");
    expect(frame).toContain("+  return a + b;");
    expect(frame).toContain("✗ run_shell bun test");
  });

  for (const [keys, expected] of [
    [["y"], { kind: "allow_once" }],
    [["a"], { kind: "allow_session", scope: "tool" }],
    [["n"], { kind: "deny" }],
    [[KEYS.down, KEYS.enter], { kind: "allow_session", scope: "tool" }],
    [["e", "n", "o", " ", "t", "e", "s", "t", "s", KEYS.enter], { kind: "deny", note: "no tests" }],
  ] as const) {
    test(`approval answered with ${JSON.stringify(keys)} → ${expected.kind}`, async () => {
      const h = renderApp({ turns: [approvalTurn(1)] });
      await h.see("Ask anything");
      await h.keys("edit", KEYS.enter);
      await h.see("Allow edit_file?");
      expect(h.frame()).toContain("-  return a - b;");
      await h.keys(...keys);
      await waitUntil(() => h.controller.decisions.length === 1, "the decision", h.frame);
      expect(h.controller.decisions).toEqual([expected]);
      await waitUntil(() => !h.frame().includes("Allow edit_file?"), "the prompt to close", h.frame);
    });
  }

  test("the prompt does not type into the editor while an approval is open", async () => {
    const h = renderApp({ turns: [approvalTurn(1)] });
    await h.see("Ask anything");
    await h.keys("edit", KEYS.enter);
    await h.see("Allow edit_file?");
    await h.keys("y");
    await waitUntil(() => h.controller.decisions.length === 1, "the decision", h.frame);
    await h.see("Ask anything");
    expect(h.controller.submitted).toEqual(["edit"]);
  });
});

describe("abort and exit", () => {
  const pausedTurn: ScriptStep[] = [
    { type: "turn_start", turn: 1, userText: "" },
    ...deltas("partial answer", 4),
    { type: "pause" },
    ...deltas(" never shown", 4),
    { type: "turn_end", turn: 1, text: "", stopReason: "completed" },
  ];

  for (const [name, key] of [
    ["Esc", KEYS.escape],
    ["Ctrl+C", KEYS.ctrlC],
  ] as const) {
    test(`${name} during a turn aborts it and keeps the partial answer, marked`, async () => {
      const h = renderApp({ turns: [pausedTurn] });
      await h.see("Ask anything");
      await h.keys("go", KEYS.enter);
      await h.see("partial answer");
      await waitUntil(() => h.controller.paused, "the turn to pause", h.frame);
      await h.keys(key);
      await h.see("[aborted]");
      expect(h.controller.signals[0]?.aborted).toBe(true);
      expect(h.frame()).not.toContain("never shown");
      expect(h.exitCount()).toBe(0);
    });
  }

  test("Ctrl+C on a non-empty prompt clears it; twice on an empty prompt exits", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys("abc", KEYS.ctrlC);
    await h.see("Ask anything", h.frame);
    expect(h.exitCount()).toBe(0);
    await h.keys(KEYS.ctrlC);
    await h.see("Press Ctrl+C again to exit");
    await h.keys(KEYS.ctrlC);
    await waitUntil(() => h.exitCount() === 1, "exit", h.frame);
  });

  test("another key disarms the pending Ctrl+C exit", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys(KEYS.ctrlC, "x", KEYS.ctrlC, KEYS.ctrlC);
    expect(h.exitCount()).toBe(0);
  });

  test("Ctrl+D on an empty prompt exits", async () => {
    const h = renderApp();
    await h.see("Ask anything");
    await h.keys(KEYS.ctrlD);
    await waitUntil(() => h.exitCount() === 1, "exit", h.frame);
  });

  test("a message sent during a turn is queued and sent after it", async () => {
    const h = renderApp({ turns: [pausedTurn] });
    await h.see("Ask anything");
    await h.keys("first", KEYS.enter);
    await waitUntil(() => h.controller.paused, "the turn to pause", h.frame);
    await h.keys("second", KEYS.enter);
    await h.see("1 message(s) queued");
    expect(h.controller.submitted).toEqual(["first"]);
    h.controller.resume();
    await waitUntil(() => h.controller.submitted.length === 2, "the queued message", h.frame);
    expect(h.controller.submitted).toEqual(["first", "second"]);
  });

  test("Esc during a turn with queued messages: the turn stops and they come back to the editor, unsent, before what is typed", async () => {
    const h = renderApp({ turns: [pausedTurn] });
    await h.see("Ask anything");
    await h.keys("first", KEYS.enter);
    await waitUntil(() => h.controller.paused, "the turn to pause", h.frame);
    await h.keys("second", KEYS.enter);
    await h.keys("third", KEYS.enter);
    await h.see("2 message(s) queued");
    await h.keys("draft");
    await h.keys(KEYS.escape);
    await waitUntil(() => h.controller.signals[0]?.aborted === true, "the turn to be aborted", h.frame);
    await h.see("third");
    await waitUntil(() => !h.frame().includes("queued"), "the queue to be empty", h.frame);
    // Given back, not sent: only the interrupted turn reached the controller.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(h.controller.submitted).toEqual(["first"]);
    const editor = h.frame().slice(h.frame().lastIndexOf("› second"));
    expect(editor).toMatch(/› second\s*\n\s*\n?\s*third\s*\n\s*\n?\s*draft/);
    // Enter sends them as one message.
    await h.keys(KEYS.enter);
    await waitUntil(() => h.controller.submitted.length === 2, "the message to be sent", h.frame);
    expect(h.controller.submitted[1]).toBe("second\n\nthird\n\ndraft");
  });

  test("a controller that throws is reported without a stack trace and the REPL goes on", async () => {
    const h = renderApp();
    h.controller.submit = () => {
      throw new Error("session store unavailable");
    };
    await h.see("Ask anything");
    await h.keys("go", KEYS.enter);
    await h.see("internal error: session store unavailable");
    expect(h.frame()).not.toContain("    at ");
    await h.see("Ask anything");
  });
});
