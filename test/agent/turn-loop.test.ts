/**
 * The turn loop on its own, driven by a scripted ModelClient (no HTTP, no session, no disk): one
 * stream whose last event is `turn_end`, whose result is the outcome, whose records are events,
 * and whose approvals are data answered by id.
 */
import { describe, expect, test } from "bun:test";
import { EventStream } from "../../src/agent/event-channel.ts";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runTurnLoop, type BuiltStep, type TurnLoopDeps, type TurnLoopEvent } from "../../src/agent/turn-loop.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent, ToolCallRequest } from "../../src/model/types.ts";
import type { ToolCallOutcome } from "../../src/tools/types.ts";

const USAGE = { input: 100, cached: 40, output: 10, reasoning: 0 };

/** Answers each request with the next scripted response and keeps the requests it was sent. */
function scriptedModel(responses: ModelStreamEvent[][]): ModelClient & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async *stream(request) {
      requests.push(request);
      const next = responses.shift();
      if (!next) throw new Error("scripted model: no response left");
      yield* next;
    },
    countInputTokens: async () => 0,
  };
}

const answer = (text: string): ModelStreamEvent[] => [
  { type: "text_delta", delta: text },
  { type: "completed", status: "completed", text, toolCalls: [], usage: USAGE, responseId: undefined },
];

const callTool = (call: ToolCallRequest): ModelStreamEvent[] => [
  { type: "completed", status: "completed", text: "", toolCalls: [call], usage: USAGE, responseId: undefined },
];

function outcome(call: ToolCallRequest, denied: boolean): ToolCallOutcome {
  const summary = denied ? "denied" : "wrote notes.md";
  return { callId: call.callId, name: call.name, target: "notes.md", forModel: summary, summary, raw: summary, isError: false, denied, durationMs: 0, locations: [] };
}

function deps(model: ModelClient, tools: TurnLoopDeps["tools"]): TurnLoopDeps {
  return {
    model,
    tools,
    maxSteps: 4,
    build: (task, step) => {
      const stream = new EventStream<TurnLoopEvent, BuiltStep>();
      const input = task.items.map((item) => (item.kind === "tool" ? `${item.name}→${item.output}` : item.text)).join("|");
      stream.end({
        request: { model: "m", instructions: `step ${step}`, input: [{ type: "message", role: "user", content: `${task.userText} ${input}` }], tools: [], prompt_cache_key: "k", store: false },
        manifest: { path: `manifest-${step}.json`, totalTokens: 10, budgetTokens: 100, stablePrefixTokens: 5 },
      });
      return stream;
    },
    shrinkContext: async () => undefined,
  };
}

const noTools: TurnLoopDeps["tools"] = {
  target: () => "",
  run: () => Promise.reject(new Error("no tool expected")),
};

async function drain(events: AsyncIterable<TurnLoopEvent>, onEvent?: (event: TurnLoopEvent) => void): Promise<TurnLoopEvent[]> {
  const seen: TurnLoopEvent[] = [];
  for await (const event of events) {
    seen.push(event);
    onEvent?.(event);
  }
  return seen;
}

describe("runTurnLoop", () => {
  test("a plain answer: one stream ending with turn_end, the outcome as its result, the text as a record event", async () => {
    const model = scriptedModel([answer("hello")]);
    const run = runTurnLoop(deps(model, noTools), 3, "hi", new AbortController().signal);
    const events = await drain(run);
    expect(events.map((e) => e.type)).toEqual(["request_built", "text_delta", "usage", "assistant_message", "turn_end"]);
    expect(events.at(-1)).toEqual({ type: "turn_end", turn: 3, text: "hello", stopReason: "completed" });
    expect(events[3]).toEqual({ type: "assistant_message", step: 1, text: "hello" });
    const result = await run.result();
    expect(result).toMatchObject({ stopReason: "completed", steps: 1, usage: USAGE, turn: { turn: 3, user: "hi", stopReason: "completed" } });
  });

  test("an approval is data: answered by id, the tool result is an event, the next step sees it", async () => {
    const call: ToolCallRequest = { callId: "c1", name: "write_file", arguments: '{"path":"notes.md"}' };
    const model = scriptedModel([callTool(call), answer("done")]);
    const tools: TurnLoopDeps["tools"] = {
      target: () => "notes.md",
      run: async (asked, ctx) => {
        if (!ctx.ask) throw new Error("the loop passes ask to the tools");
        const decision = await ctx.ask({ callId: asked.callId, name: asked.name, description: "write notes.md" });
        return outcome(asked, decision.kind === "deny");
      },
    };
    const run = runTurnLoop(deps(model, tools), 1, "write it", new AbortController().signal);
    const answered: boolean[] = [];
    const events = await drain(run, (event) => {
      if (event.type !== "approval_request") return;
      // Structured-cloneable: no function travels in an event.
      expect(structuredClone(event)).toEqual(event);
      answered.push(run.answer("no-such-id", { kind: "allow_once" }));
      answered.push(run.answer(event.id, { kind: "allow_once" }));
      answered.push(run.answer(event.id, { kind: "allow_once" }));
    });
    expect(answered).toEqual([false, true, false]);
    expect(events.map((e) => e.type)).toEqual([
      "request_built", "usage", "tool_call_start", "approval_request", "tool_result", "tool_call_end",
      "request_built", "text_delta", "usage", "assistant_message", "turn_end",
    ]);
    expect(events.find((e) => e.type === "approval_request")).toEqual({ type: "approval_request", id: "1/c1", callId: "c1", name: "write_file", description: "write notes.md" });
    expect(model.requests[1]?.input).toEqual([{ type: "message", role: "user", content: "write it write_file→wrote notes.md" }]);
    expect((await run.result()).stopReason).toBe("completed");
  });

  test("a model error is data: an error event, then turn_end with stopReason error; result() carries the error", async () => {
    const model = scriptedModel([[{ type: "error", kind: "server", message: "503 from the fake", retryable: false }]]);
    const run = runTurnLoop(deps(model, noTools), 1, "hi", new AbortController().signal);
    const events: AgentEvent[] = (await drain(run)).filter((e): e is AgentEvent => e.type !== "assistant_message");
    expect(events.map((e) => e.type)).toEqual(["request_built", "error", "turn_end"]);
    expect(await run.result()).toMatchObject({ stopReason: "error", error: { kind: "server", message: "503 from the fake" } });
  });

  test("a build that fails ends the turn with an error event and turn_end, never an exception", async () => {
    const model = scriptedModel([]);
    const failing = deps(model, noTools);
    failing.build = () => {
      const stream = new EventStream<TurnLoopEvent, BuiltStep>();
      stream.push({ type: "notice", message: "folded turns 1–5 with the offline summarizer" });
      stream.fail(new Error("the request does not fit"));
      return stream;
    };
    const run = runTurnLoop(failing, 1, "hi", new AbortController().signal);
    const events = await drain(run);
    expect(events.map((e) => e.type)).toEqual(["notice", "error", "turn_end"]);
    expect(model.requests).toHaveLength(0);
    expect((await run.result()).stopReason).toBe("error");
  });
});
