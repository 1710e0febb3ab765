/**
 * One user turn: build the request, stream the model, run the tool calls it asks for, and loop
 * until it answers without tool calls (or fails, is aborted, or hits the step limit). A function
 * returning one event stream with a final result (pi-mono's agent loop): every dependency is
 * passed in, everything that happens is an event — what the transcript must keep included — the
 * last event is `turn_end`, and `result()` is the turn's outcome. Failures are data
 * (`stopReason`), never exceptions; approvals are answered by id (`answer`), never by a callback
 * carried in an event.
 */
import { sliceWhole } from "../slice-whole.ts";
import type { ApprovalRequest } from "../tools/approvals.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { ToolCallOutcome } from "../tools/types.ts";
import type { Turn, TurnItem, ToolExchange } from "../memory/turn.ts";
import type { NewRecord } from "../session/transcript-schema.ts";
import type { CurrentTask } from "../prompt/section.ts";
import type { ModelClient, ModelErrorKind, ModelRequest, ReasoningItem, ToolCallRequest, Usage } from "../model/types.ts";
import { describeError, ValarmindError } from "../errors.ts";
import { trace } from "../trace.ts";
import { BudgetExceededError } from "../prompt/budget-error.ts";
import { finalAnswer } from "../memory/turn.ts";
import { EventStream } from "./event-channel.ts";
import type { AgentEvent, AnswerApproval, ApprovalDecision, TurnManifestSummary } from "./events.ts";
import { RepeatedCalls, repeatedCallAnswer } from "./repeated-calls.ts";

export type StopReason = NonNullable<Turn["stopReason"]>;

export interface BuiltStep {
  request: ModelRequest;
  manifest: TurnManifestSummary;
}

/**
 * What the loop tells its owner and no front end: the session writes these to the transcript
 * (front ends see the same facts as `text_delta` and `tool_call_end`).
 */
export type TurnRecordEvent =
  /** Memory changed (a budget fold, an eviction, a context-overflow fold): its transcript records, in order. */
  | { type: "memory_changed"; records: NewRecord[] }
  | { type: "assistant_message"; step: number; text: string }
  | { type: "tool_result"; step: number; call: ToolCallRequest; outcome: ToolCallOutcome };

export type TurnLoopEvent = AgentEvent | TurnRecordEvent;

/** Tool calls run from one model response; the rest are dropped unrun (a model that sends 800 would exhaust the budget). */
export const MAX_CALLS_PER_STEP = 64;

/** Preparing a step's request: its own events (a budget fold's notices, memory changes), then the request. */
export type StepBuild = AsyncIterable<TurnLoopEvent> & { result(): Promise<BuiltStep> };

export interface TurnLoopDeps {
  model: ModelClient;
  tools: Pick<ToolRegistry, "run" | "target">;
  /** Prepares the request for `step` of this turn (folding the window first when the budget says so). */
  build(task: CurrentTask, step: number): StepBuild;
  /**
   * Shrinks the context after `context_length_exceeded` (folds the window's oldest block): the
   * records of that change, or undefined if nothing could be cut.
   */
  shrinkContext(): Promise<NewRecord[] | undefined>;
  maxSteps: number;
  /** Call ids the window's turns already use: every request replays them, so a new call must not repeat one. */
  windowCallIds?: () => Iterable<string>;
}

export interface TurnOutcome {
  turn: Turn;
  stopReason: StopReason;
  /** Summed over the turn's model calls. */
  usage: Usage;
  steps: number;
  error?: { kind: ModelErrorKind | "budget" | "internal" | "max_steps" | "loop"; message: string };
}

const ZERO_USAGE: Usage = { input: 0, cached: 0, output: 0, reasoning: 0 };

/** The outcome of a turn that could not run (a turn already running, an internal failure). */
export function failedOutcome(turnNumber: number, userText: string, message: string): TurnOutcome {
  const turn: Turn = { turn: turnNumber, user: userText, items: [], stopReason: "error", usage: ZERO_USAGE };
  return { turn, stopReason: "error", usage: ZERO_USAGE, steps: 0, error: { kind: "internal", message } };
}

/** Longest tool name kept whole; a longer one (a 200 KB "name") names no tool, and is shown, recorded and replayed cut. */
const MAX_TOOL_NAME_CHARS = 128;

function plausibleName(name: string): string {
  if (name.length <= MAX_TOOL_NAME_CHARS) return name;
  return `${sliceWhole(name, 64)}_cut_from_${name.length}_chars`;
}

/** A repeated call's answer (./repeated-calls.ts): nothing ran. */
function repeatedCallOutcome(call: ToolCallRequest, target: string, inARow: number): ToolCallOutcome {
  const text = repeatedCallAnswer(call.name, inARow);
  return { callId: call.callId, name: call.name, target, forModel: text, summary: `not run: the same call ${inARow} times in a row`, raw: text, isError: true, denied: false, durationMs: 0, locations: [] };
}

function addUsage(a: Usage, b: Usage): Usage {
  return { input: a.input + b.input, cached: a.cached + b.cached, output: a.output + b.output, reasoning: a.reasoning + b.reasoning };
}

type StepResult =
  | { kind: "answer"; text: string; reasoning: string; reasoningItems: ReasoningItem[]; calls: ToolCallRequest[]; status: "completed" | "incomplete"; incompleteReason?: string; dropped?: string[]; usage: Usage | undefined }
  | { kind: "error"; errorKind: ModelErrorKind; message: string; text: string };

async function streamStep(model: ModelClient, request: ModelRequest, emit: (e: TurnLoopEvent) => void, signal: AbortSignal): Promise<StepResult> {
  let text = "";
  let reasoning = "";
  for await (const event of model.stream(request, signal)) {
    switch (event.type) {
      case "text_delta":
        if (text === "") trace("first text delta");
        text += event.delta;
        emit({ type: "text_delta", delta: event.delta });
        break;
      case "reasoning_delta":
        reasoning += event.delta;
        emit({ type: "reasoning_delta", delta: event.delta });
        break;
      case "retry":
        emit({ type: "retry", attempt: event.attempt, delayMs: event.delayMs, reason: event.reason });
        break;
      case "completed":
        return {
          kind: "answer",
          text: event.text || text,
          reasoning,
          // The step's reasoning tokens go on its first item, for the builder's count.
          reasoningItems: (event.reasoningItems ?? []).map((item, index) => (index === 0 && event.usage?.reasoning ? { ...item, tokens: event.usage.reasoning } : item)),
          calls: event.toolCalls,
          status: event.status,
          ...(event.incompleteReason !== undefined && { incompleteReason: event.incompleteReason }),
          ...(event.droppedToolCalls !== undefined && { dropped: event.droppedToolCalls }),
          usage: event.usage,
        };
      case "error":
        return { kind: "error", errorKind: event.kind, message: event.message, text };
      default:
        break;
    }
  }
  if (signal.aborted) return { kind: "error", errorKind: "aborted", message: "aborted", text };
  return { kind: "error", errorKind: "stream_cut", message: "the model stream ended without a final event", text };
}

/** Why an answer stopped early, for the user: the API's `incomplete_details.reason`. */
export function incompleteNotice(reason: string | undefined): string {
  if (reason === "max_output_tokens") return "the answer was cut short: the model reached its output limit (max_output_tokens). Ask it to continue, or for a shorter answer.";
  if (reason === "content_filter") return "the answer was cut short: the provider's content filter stopped it (content_filter). Rephrase the request to go on.";
  return `the answer was cut short: the model stopped early (${reason ?? "no reason given"}).`;
}

/**
 * A turn's event stream: every event of the turn, `turn_end` last; `result()` is the outcome;
 * `answer(id, decision)` answers an `approval_request` the turn is waiting on.
 */
export class TurnStream<T> extends EventStream<T, TurnOutcome> {
  private answerWith: AnswerApproval = () => false;

  answer(id: string, decision: ApprovalDecision): boolean {
    return this.answerWith(id, decision);
  }

  /** Routes `answer` (the owner of the stream decides who is waiting). */
  answerBy(answer: AnswerApproval): void {
    this.answerWith = answer;
  }
}

/** Runs the turn; the returned stream ends with `turn_end` and its result is the outcome. */
export function runTurnLoop(deps: TurnLoopDeps, turnNumber: number, userText: string, signal: AbortSignal): TurnStream<TurnLoopEvent> {
  const stream = new TurnStream<TurnLoopEvent>();
  const waiting = new Map<string, (decision: ApprovalDecision) => void>();
  stream.answerBy((id, decision) => {
    const resolve = waiting.get(id);
    if (!resolve) return false;
    waiting.delete(id);
    resolve(decision);
    return true;
  });
  const emit = (event: TurnLoopEvent) => stream.push(event);
  const ask = (request: ApprovalRequest) =>
    new Promise<ApprovalDecision>((resolve) => {
      const id = `${turnNumber}/${request.callId}`;
      waiting.set(id, resolve);
      emit({ type: "approval_request", id, ...request });
    });
  loop(deps, turnNumber, userText, signal, emit, ask).then(
    (outcome) => {
      // An approval still open (the turn was aborted while asking) can no longer be answered here.
      waiting.clear();
      emit({ type: "turn_end", turn: turnNumber, text: finalAnswer(outcome.turn), stopReason: outcome.stopReason });
      stream.end(outcome);
    },
    (error: unknown) => stream.fail(error),
  );
  return stream;
}

async function loop(
  deps: TurnLoopDeps,
  turnNumber: number,
  userText: string,
  signal: AbortSignal,
  emit: (event: TurnLoopEvent) => void,
  ask: (request: ApprovalRequest) => Promise<ApprovalDecision>,
): Promise<TurnOutcome> {
  const items: TurnItem[] = [];
  const turn: Turn = { turn: turnNumber, user: userText, items };
  let usage = ZERO_USAGE;
  let shrunk = false;
  let step = 0;
  // Whether a tool output this turn came from outside valarmind (a file, a search, a command):
  // a memory change after it may be that content's doing, and the user is shown it.
  let readUntrusted = false;
  const repeats = new RepeatedCalls();
  // Some servers (llama.cpp- and vLLM-style proxies) name every call "call_0": a call id seen before
  // in the window or this turn would pair two outputs with one id (400 "Duplicate
  // function_call_output") and key one call's summary to another. Such a call is renamed, once.
  const callIds = new Set(deps.windowCallIds?.() ?? []);
  const uniqueCallId = (id: string): string => {
    let unique = id;
    for (let n = 2; callIds.has(unique); n++) unique = `${id}_${n}`;
    callIds.add(unique);
    return unique;
  };

  const finish = (stopReason: StopReason, error?: TurnOutcome["error"]): TurnOutcome => {
    turn.stopReason = stopReason;
    turn.usage = usage;
    const outcome: TurnOutcome = { turn, stopReason, usage, steps: step };
    if (error) outcome.error = error;
    return outcome;
  };

  while (step < deps.maxSteps) {
    if (signal.aborted) return finish("aborted");
    step += 1;
    let built: BuiltStep;
    try {
      const preparing = deps.build({ userText, items }, step);
      for await (const event of preparing) emit(event);
      built = await preparing.result();
    } catch (error) {
      // Cancelled while the request was prepared (a budget fold's model call): an abort like any other.
      if (signal.aborted) return finish("aborted");
      const message = describeError(error);
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
        emit({ type: "assistant_message", step, text: result.text });
      }
      if (result.errorKind === "context_length_exceeded" && !shrunk && result.text === "") {
        shrunk = true;
        const records = await deps.shrinkContext();
        if (records) {
          emit({ type: "memory_changed", records });
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
    }
    if (result.text !== "") {
      items.push({ kind: "assistant", text: result.text });
      emit({ type: "assistant_message", step, text: result.text });
    }
    if (result.dropped && result.dropped.length > 0) {
      // A script reading chat -p's output must be able to tell that what it asked for did not happen.
      const what = result.dropped.map((name) => `a ${name} call`).join(", ");
      const limit = result.incompleteReason === "max_output_tokens" ? "its output limit (max_output_tokens)" : `"${result.incompleteReason ?? "an early stop"}"`;
      emit({
        type: "notice",
        message:
          result.status === "incomplete"
            ? `the model stopped at ${limit} while writing ${what}; the call was not run. Ask it to continue in smaller steps.`
            : `the response ended without finishing ${what}; the call was not run.`,
      });
    }
    if (result.status === "incomplete" && !(result.dropped && result.dropped.length > 0)) {
      // The answer shown is only its start: a script reading chat -p, and the user, must learn why.
      emit({ type: "notice", message: incompleteNotice(result.incompleteReason) });
    }
    if (result.calls.length === 0) {
      if (result.text.trim() === "" && result.status !== "incomplete") {
        // `answer=$(valarmind chat -p …)` must not read "" (or an earlier preamble) as the answer.
        const what = result.reasoning.trim() !== "" ? "only its reasoning, no answer" : "an empty answer";
        const shown = items.some((item) => item.kind === "assistant" && item.text.trim() !== "") ? "; the text shown is what it wrote before its tool calls" : "";
        emit({ type: "notice", message: `the model returned ${what}${shown}. Ask again or rephrase.` });
      }
      return finish(result.status === "incomplete" ? "incomplete" : "completed");
    }

    // Past the bound, calls are dropped unrun (not even answered: 800 answers alone would overflow
    // the next request); the model is told with the last answer, the user with a notice.
    const calls = result.calls.slice(0, MAX_CALLS_PER_STEP).map((call) => ({ ...call, callId: uniqueCallId(call.callId), name: plausibleName(call.name) }));
    const dropped = result.calls.length - calls.length;
    if (dropped > 0) emit({ type: "notice", message: `the model sent ${result.calls.length} tool calls in one response; the first ${calls.length} ran, the other ${dropped} were dropped without running` });
    // Kept with the step's first call (and recorded before it): the chat wire sends it back with the
    // calls in every later request while the turn is in the window (DeepSeek's thinking mode wants it).
    if (result.reasoning !== "") emit({ type: "memory_changed", records: [{ kind: "reasoning", turn: turnNumber, step, text: result.reasoning }] });
    for (const [index, call] of calls.entries()) {
      const repeat = repeats.next(call, step);
      if (repeat.kind === "stop") {
        // Not run and not recorded: the transcript holds no call without its answer.
        const message = `stopped: the model made the same ${call.name} call, with the same arguments, ${repeat.inARow} times in a row, after being told its result was already there; ask it to take another approach`;
        emit({ type: "error", kind: "loop", message });
        return finish("error", { kind: "loop", message });
      }
      const target = deps.tools.target(call);
      emit({ type: "tool_call_start", callId: call.callId, name: call.name, target });
      const outcome = repeat.kind === "refuse" ? repeatedCallOutcome(call, target, repeat.inARow) : await deps.tools.run(call, { signal, ask });
      if (repeat.kind === "refuse") emit({ type: "notice", message: `the model made the same ${call.name} call ${repeat.inARow} times in a row; this one was not run, and the model was told to use the result it has` });
      const droppedNote =
        dropped > 0 && index === calls.length - 1
          ? `\n\n[valarmind: this response had ${result.calls.length} tool calls; only the first ${calls.length} ran, and the other ${dropped} were dropped without running. Call again for what is left, at most ${MAX_CALLS_PER_STEP} at a time.]`
          : "";
      const exchange: ToolExchange = {
        kind: "tool",
        callId: call.callId,
        name: call.name,
        arguments: call.arguments,
        output: outcome.forModel + droppedNote,
        isError: outcome.isError,
        ...(index === 0 && result.reasoning !== "" && { reasoning: result.reasoning }),
        ...(index === 0 && result.reasoningItems.length > 0 && { reasoningItems: result.reasoningItems }),
      };
      items.push(exchange);
      // The transcript keeps the answer as the model got it, note included.
      emit({ type: "tool_result", step, call, outcome: droppedNote ? { ...outcome, forModel: exchange.output } : outcome });
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
      // Memory tools return only valarmind's own confirmation; every other tool returns content a
      // repository controls (a file, a listing, search results, command output).
      if (!outcome.denied && outcome.kind !== "memory") readUntrusted = true;
      if (signal.aborted) return finish("aborted");
    }
  }
  const message = `stopped after ${deps.maxSteps} model calls in one turn (maxStepsPerTurn); ask to continue if the work is not done`;
  emit({ type: "error", kind: "max_steps", message });
  return finish("max_steps", { kind: "max_steps", message });
}
