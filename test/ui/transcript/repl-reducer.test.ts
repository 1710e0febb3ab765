import { describe, expect, test } from "bun:test";
import type { AgentEvent } from "../../../src/agent/events.ts";
import { initialReplState, replReducer, type ReplState } from "../../../src/ui/transcript/repl-reducer.ts";
import type { TranscriptItem } from "../../../src/ui/transcript/transcript-items.ts";

function run(
  events: AgentEvent[],
  start: ReplState = replReducer(initialReplState, { type: "turn_begin", display: "hi" }),
) {
  return events.reduce((state, event) => replReducer(state, { type: "agent", event }), start);
}

const kinds = (items: TranscriptItem[]) => items.map((item) => item.kind);
const markdown = (items: TranscriptItem[]) => items.flatMap((item) => (item.kind === "markdown" ? [item.source] : []));

describe("replReducer", () => {
  test("the user's message goes to the transcript at once", () => {
    const state = replReducer(initialReplState, { type: "turn_begin", display: "hello" });
    expect(state.items).toEqual([{ kind: "user", id: "i1", text: "hello" }]);
    expect(state.live).toBeDefined();
  });

  test("finished blocks move to the transcript while the last one streams", () => {
    const state = run([
      { type: "text_delta", delta: "# Title\n\nfirst para" },
      { type: "text_delta", delta: "graph\n\nsecond" },
    ]);
    expect(markdown(state.items)).toEqual(["# Title", "first paragraph"]);
    expect(state.live?.openText).toBe("second");
  });

  test("no text is dropped across many small deltas", () => {
    const text = "Line one has words.\n\n".repeat(50);
    const deltas: AgentEvent[] = [...text].map((delta) => ({ type: "text_delta", delta }));
    const state = run([...deltas, { type: "turn_end", turn: 1, text, stopReason: "completed" }]);
    expect(markdown(state.items).join("\n\n")).toBe(text.trim());
    expect(state.live).toBeUndefined();
  });

  test("a running tool row holds back what follows, then everything commits in order", () => {
    let state = run([
      { type: "text_delta", delta: "Let me look." },
      { type: "tool_call_start", callId: "c1", name: "read_file", target: "src/a.ts" },
    ]);
    expect(kinds(state.items)).toEqual(["user", "markdown"]);
    expect(state.live?.pending.map((item) => item.kind)).toEqual(["tool"]);
    state = run(
      [
        { type: "tool_call_end", callId: "c1", name: "read_file", summary: "40 lines", isError: false, denied: false },
        { type: "text_delta", delta: "Done." },
        { type: "turn_end", turn: 1, text: "", stopReason: "completed" },
      ],
      state,
    );
    expect(kinds(state.items)).toEqual(["user", "markdown", "tool", "markdown"]);
    const tool = state.items[2];
    expect(tool?.kind === "tool" && tool.tool).toMatchObject({ status: "done", summary: "40 lines" });
  });

  test("an approval marks the row and records the answer", () => {
    let state = run([
      { type: "tool_call_start", callId: "c1", name: "edit_file", target: "a.ts" },
      { type: "approval_request", callId: "c1", name: "edit_file", description: "edit a.ts", diff: "+x", id: "1/c1" },
    ]);
    expect(state.live?.approval?.callId).toBe("c1");
    expect(state.live?.approval?.id).toBe("1/c1");
    state = replReducer(state, { type: "approval_answered", callId: "c1", decision: { kind: "allow_session", scope: "tool" } });
    expect(state.live?.approval).toBeUndefined();
    const row = state.live?.pending[0];
    expect(row?.kind === "tool" && row.tool.decision).toBe("allow_session");
  });

  test("an approval keeps its warning and what a session answer would remember", () => {
    const remember = { kind: "command", exact: "git diff HEAD~1", prefix: "git diff" } as const;
    const state = run([
      { type: "approval_request", callId: "c1", name: "run_shell", description: "run `git diff HEAD~1`", warning: "writes a git hook", remember, id: "1/c1" },
    ]);
    expect(state.live?.approval).toMatchObject({ warning: "writes a git hook", remember });
  });

  test("an aborted turn keeps the partial answer and marks it", () => {
    const state = run([
      { type: "text_delta", delta: "partial answ" },
      { type: "turn_end", turn: 1, text: "partial answ", stopReason: "aborted" },
    ]);
    expect(kinds(state.items)).toEqual(["user", "markdown", "turn_stop"]);
    expect(markdown(state.items)).toEqual(["partial answ"]);
    expect(state.items.at(-1)).toMatchObject({ kind: "turn_stop", reason: "aborted" });
  });

  test("errors become notices with their hint", () => {
    const state = run([
      { type: "error", kind: "auth", message: "401 from the API", hint: "check OPENAI_API_KEY" },
      { type: "turn_end", turn: 1, text: "", stopReason: "error" },
    ]);
    expect(state.items.find((item) => item.kind === "notice")).toMatchObject({
      tone: "error",
      text: "401 from the API",
      hint: "check OPENAI_API_KEY",
    });
  });

  test("memory events and core notices are shown in the turn", () => {
    const state = run([
      { type: "memory_updated", what: "goal set", afterUntrusted: false },
      { type: "memory_updated", what: "convention test: npm test", afterUntrusted: true },
      { type: "notice", message: "state.json was invalid; kept aside as state.json.corrupt-1" },
      { type: "window_slid", foldedTurns: 8, summaryTokens: 420 },
    ]);
    const texts = state.items.flatMap((item) => (item.kind === "notice" ? [`${item.tone}: ${item.text}`] : []));
    expect(texts).toEqual([
      "info: memory: goal set",
      // Made after the turn read repository content: a warning that says so.
      "warning: memory changed after reading repository content: convention test: npm test",
      "warning: state.json was invalid; kept aside as state.json.corrupt-1",
      "info: window slid: 8 turn(s) folded into the summary (420 tokens)",
    ]);
  });

  test("a window fold, a promotion or an error after turn_end (no live turn) still reaches the transcript", () => {
    const state = run([
      { type: "turn_end", turn: 20, text: "done", stopReason: "completed" },
      { type: "window_slid", foldedTurns: 10, summaryTokens: 300 },
      { type: "notice", message: "promoted to the working state: closed T-1" },
      { type: "error", kind: "internal", message: "the summary request could not be built", hint: "see the transcript" },
    ]);
    expect(state.live).toBeUndefined();
    const texts = state.items.flatMap((item) => (item.kind === "notice" ? [`${item.tone}: ${item.text}`] : []));
    expect(texts).toEqual([
      "info: window slid: 10 turn(s) folded into the summary (300 tokens)",
      "warning: promoted to the working state: closed T-1",
      "error: the summary request could not be built",
    ]);
  });

  test("a final text without deltas is still shown", () => {
    const state = run([{ type: "turn_end", turn: 1, text: "whole answer", stopReason: "completed" }]);
    expect(markdown(state.items)).toEqual(["whole answer"]);
  });

  test("a stream that ends without turn_end is closed", () => {
    let state = run([{ type: "text_delta", delta: "half" }]);
    state = replReducer(state, { type: "turn_closed", stopReason: "error" });
    expect(state.live).toBeUndefined();
    expect(kinds(state.items)).toEqual(["user", "markdown", "turn_stop"]);
  });
});
