/**
 * `chat -p --output-format json`: reads the run's events and, when the run ends, builds the one
 * result object (src/agent/headless-result.ts) the command prints. What events cannot say — the
 * session id, the exit code, an error thrown before or around the turn, the duration — the
 * command passes to `finish`.
 */
import { effectiveInput, priceOf, type Prices } from "../agent/session-cost.ts";
import type { AgentEvent } from "../agent/events.ts";
import { RESULT_VERSION, type HeadlessResult, type ResultError } from "../agent/headless-result.ts";

export interface RunEnd {
  exitCode: number;
  sessionId: string | undefined;
  durationMs: number;
  /** Why the run failed when no error event says it (a usage error, a signal). */
  failure?: ResultError;
  /** The model's prices (settings): the result's `total_cost_usd`; without them it is null. */
  prices?: Prices;
}

export interface ResultCollector {
  onEvent(event: AgentEvent): void;
  finish(end: RunEnd): HeadlessResult;
}

export function createResultCollector(): ResultCollector {
  let text = "";
  let turn: number | null = null;
  let started = false;
  let stopReason: HeadlessResult["stop_reason"] = null;
  let turnError: ResultError | undefined;
  let steps = 0;
  const usage = { input_tokens: 0, cached_tokens: 0, output_tokens: 0, reasoning_tokens: 0, requests: 0 };
  const fold = { requests: 0, input_tokens: 0, cached_tokens: 0, output_tokens: 0 };
  const targets = new Map<string, string>();
  const denials: HeadlessResult["permission_denials"] = [];

  return {
    onEvent(event) {
      switch (event.type) {
        case "request_built":
          steps = Math.max(steps, event.step);
          break;
        case "usage":
          usage.input_tokens += event.usage.input;
          usage.cached_tokens += event.usage.cached;
          usage.output_tokens += event.usage.output;
          usage.reasoning_tokens += event.usage.reasoning;
          usage.requests += 1;
          if (event.purpose === "fold") {
            fold.requests += 1;
            fold.input_tokens += event.usage.input;
            fold.cached_tokens += event.usage.cached;
            fold.output_tokens += event.usage.output;
          }
          break;
        case "tool_call_start":
          targets.set(event.callId, event.target);
          break;
        case "tool_call_end":
          if (event.denied) denials.push({ tool_name: event.name, tool_use_id: event.callId, target: targets.get(event.callId) ?? "" });
          break;
        case "error":
          // The turn's own error; one from the settle step after the answer does not change the outcome.
          if (stopReason === null) turnError = { kind: event.kind, message: event.message, ...(event.hint !== undefined ? { hint: event.hint } : {}) };
          break;
        case "turn_start":
          started = true;
          break;
        case "turn_end":
          text = event.text;
          // A turn that never started (its session could not be opened) has no number.
          turn = started ? event.turn : null;
          stopReason = event.stopReason;
          break;
        default:
          break;
      }
    },
    finish(end) {
      const isError = end.exitCode !== 0;
      const error = isError ? (turnError ?? end.failure ?? { kind: "internal", message: `the run ended with exit code ${end.exitCode}` }) : null;
      return {
        type: "result",
        v: RESULT_VERSION,
        subtype: !isError ? "success" : stopReason === "max_steps" ? "error_max_turns" : "error_during_execution",
        is_error: isError,
        result: text,
        stop_reason: stopReason,
        error,
        session_id: end.sessionId ?? null,
        turn,
        num_turns: steps,
        duration_ms: Math.max(0, Math.round(end.durationMs)),
        usage: {
          ...usage,
          cached_share: usage.input_tokens > 0 ? usage.cached_tokens / usage.input_tokens : 0,
          effective_input_tokens: Math.round(effectiveInput(usage.input_tokens, usage.cached_tokens)),
          fold: { ...fold },
        },
        total_cost_usd: end.prices ? priceOf({ input: usage.input_tokens, cached: usage.cached_tokens, output: usage.output_tokens }, end.prices) : null,
        permission_denials: [...denials],
      };
    },
  };
}
