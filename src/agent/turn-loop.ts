/**
 * One user turn: build the request, stream the model, run the tool calls it asks for, and loop
 * until it answers without tool calls (or fails, is aborted, or hits the step limit). Pure-ish:
 * every dependency is passed in, every observable effect is an `AgentEvent` or a call on `record`,
 * and failures are data (`stopReason`), never exceptions.
 */
import type { ApprovalRequest } from "../tools/approvals.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { ToolCallOutcome } from "../tools/types.ts";
import type { Turn, TurnItem, ToolExchange } from "../memory/turn.ts";
import type { CurrentTask } from "../prompt/section.ts";
import type { ModelClient, ModelErrorKind, ModelRequest, ToolCallRequest, Usage } from "../model/types.ts";
import { ValarmindError } from "../errors.ts";
import { trace } from "../trace.ts";
import { BudgetExceededError } from "../prompt/budget-error.ts";
import type { AgentEvent, ApprovalDecision, TurnManifestSummary } from "./events.ts";

export type StopReason = NonNullable<Turn["stopReason"]>;

export interface BuiltStep {
  request: ModelRequest;
  manifest: TurnManifestSummary;
}

/** Where the loop reports what must reach the transcript, as it happens. */
export interface TurnRecorder {
  assistant(step: number, text: string): void;
  toolCall(step: number, call: ToolCallRequest, outcome: ToolCallOutcome): void;
}

export interface TurnLoopDeps {
  model: ModelClient;
  tools: Pick<ToolRegistry, "run" | "target">;
  /** Builds (and records the manifest of) the request for `step` of this turn. */
  build(task: CurrentTask, step: number): Promise<BuiltStep>;
  /** Writes the API's usage into the step's manifest. */
  recordUsage(built: BuiltStep, usage: Usage): Promise<void>;
  /** Shrinks the context after `context_length_exceeded` (folds the window's oldest block); false if nothing could be cut. */
  shrinkContext(): Promise<boolean>;
  record: TurnRecorder;
  maxSteps: number;
}

export interface TurnOutcome {
  turn: Turn;
  stopReason: StopReason;
  /** Summed over the turn's model calls. */
  usage: Usage;
  steps: number;
  error?: { kind: ModelErrorKind | "budget" | "internal"; message: string };
}

/**
 * The memory tools return only valarmind's own confirmation; every other tool returns content a
 * repository controls (a file, a listing, search results, command output, a diff of a file).
 */
function isMemoryTool(name: string): boolean {
  return name.startsWith("memory_");
}

const ZERO_USAGE: Usage = { input: 0, cached: 0, output: 0, reasoning: 0 };

function addUsage(a: Usage, b: Usage): Usage {
  return { input: a.input + b.input, cached: a.cached + b.cached, output: a.output + b.output, reasoning: a.reasoning + b.reasoning };
}

type StepResult =
  | { kind: "answer"; text: string; calls: ToolCallRequest[]; status: "completed" | "incomplete"; usage: Usage | undefined }
  | { kind: "error"; errorKind: ModelErrorKind; message: string; text: string };

async function streamStep(model: ModelClient, request: ModelRequest, emit: (e: AgentEvent) => void, signal: AbortSignal): Promise<StepResult> {
  let text = "";
  for await (const event of model.stream(request, signal)) {
    switch (event.type) {
      case "text_delta":
        if (text === "") trace("first text delta");
        text += event.delta;
        emit({ type: "text_delta", delta: event.delta });
        break;
      case "reasoning_delta":
        emit({ type: "reasoning_delta", delta: event.delta });
        break;
      case "retry":
        emit({ type: "retry", attempt: event.attempt, delayMs: event.delayMs, reason: event.reason });
        break;
      case "completed":
        return { kind: "answer", text: event.text || text, calls: event.toolCalls, status: event.status, usage: event.usage };
      case "error":
        return { kind: "error", errorKind: event.kind, message: event.message, text };
      default:
        break;
    }
  }
  if (signal.aborted) return { kind: "error", errorKind: "aborted", message: "aborted", text };
  return { kind: "error", errorKind: "stream_cut", message: "the model stream ended without a final event", text };
}

/**
 * Runs the turn. `ask` turns an approval request into an `approval_request` event whose
 * `respond` resolves the registry's wait.
 */
export async function runTurnLoop(
  deps: TurnLoopDeps,
  turnNumber: number,
  userText: string,
  emit: (event: AgentEvent) => void,
  signal: AbortSignal,
): Promise<TurnOutcome> {
  const items: TurnItem[] = [];
  const turn: Turn = { turn: turnNumber, user: userText, items };
  let usage = ZERO_USAGE;
  let shrunk = false;
  let step = 0;
  // Whether a tool output this turn came from outside valarmind (a file, a search, a command):
  // a memory change after it may be that content's doing, and the user is shown it.
  let readUntrusted = false;

  const finish = (stopReason: StopReason, error?: TurnOutcome["error"]): TurnOutcome => {
    turn.stopReason = stopReason;
    turn.usage = usage;
    const outcome: TurnOutcome = { turn, stopReason, usage, steps: step };
    if (error) outcome.error = error;
    return outcome;
  };

  const ask = (request: ApprovalRequest) =>
    new Promise<ApprovalDecision>((resolve) => {
      emit({ type: "approval_request", ...request, respond: resolve });
    });

  while (step < deps.maxSteps) {
    if (signal.aborted) return finish("aborted");
    step += 1;
    let built: BuiltStep;
    try {
      built = await deps.build({ userText, items }, step);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const hint = error instanceof ValarmindError ? error.hint : undefined;
      const kind = error instanceof BudgetExceededError ? "budget" : "internal";
      emit({ type: "error", kind, message, ...(hint !== undefined ? { hint } : {}) });
      return finish("error", { kind, message });
    }
    emit({ type: "request_built", turn: turnNumber, step, manifest: built.manifest });
    trace(`turn ${turnNumber} step ${step}: request built`);

    const result = await streamStep(deps.model, built.request, emit, signal);
    if (result.kind === "error") {
      if (result.text !== "") {
        items.push({ kind: "assistant", text: result.text });
        deps.record.assistant(step, result.text);
      }
      if (result.errorKind === "context_length_exceeded" && !shrunk && result.text === "") {
        shrunk = true;
        if (await deps.shrinkContext()) {
          emit({ type: "retry", attempt: 1, delayMs: 0, reason: "context window exceeded: compacted the window and state, retrying once" });
          step -= 1;
          continue;
        }
      }
      if (result.errorKind === "aborted") return finish("aborted");
      emit({ type: "error", kind: result.errorKind, message: result.message });
      return finish("error", { kind: result.errorKind, message: result.message });
    }

    if (result.usage) {
      usage = addUsage(usage, result.usage);
      const cachedShare = result.usage.input > 0 ? result.usage.cached / result.usage.input : 0;
      emit({ type: "usage", usage: result.usage, cachedShare });
      await deps.recordUsage(built, result.usage);
    }
    if (result.text !== "") {
      items.push({ kind: "assistant", text: result.text });
      deps.record.assistant(step, result.text);
    }
    if (result.calls.length === 0) return finish(result.status === "incomplete" ? "incomplete" : "completed");

    for (const call of result.calls) {
      emit({ type: "tool_call_start", callId: call.callId, name: call.name, target: deps.tools.target(call) });
      const outcome = await deps.tools.run(call, { signal, ask });
      const exchange: ToolExchange = {
        kind: "tool",
        callId: call.callId,
        name: call.name,
        arguments: call.arguments,
        output: outcome.forModel,
        isError: outcome.isError,
      };
      items.push(exchange);
      deps.record.toolCall(step, call, outcome);
      emit({
        type: "tool_call_end",
        callId: call.callId,
        name: call.name,
        summary: outcome.summary,
        ...(outcome.diff !== undefined ? { diff: outcome.diff } : {}),
        isError: outcome.isError,
        denied: outcome.denied,
      });
      if (outcome.memoryChange !== undefined) emit({ type: "memory_updated", what: outcome.memoryChange, afterUntrusted: readUntrusted });
      if (!outcome.denied && !isMemoryTool(call.name)) readUntrusted = true;
      if (signal.aborted) return finish("aborted");
    }
  }
  const message = `stopped after ${deps.maxSteps} model calls in one turn (maxStepsPerTurn); ask to continue if the work is not done`;
  emit({ type: "error", kind: "internal", message });
  return finish("max_steps");
}
