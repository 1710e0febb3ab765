/**
 * Replays a recording made by `recording-client.ts`: the n-th `stream` call yields the n-th recorded
 * stream's events, the n-th `countInputTokens` returns the n-th recorded count. Requests are kept
 * in `requests` so tests can compare them with the recorded ones. Like every client, `stream` never
 * throws: a recording that runs out yields a `failed` error naming the file.
 */
import { readFileSync } from "node:fs";
import { describeError, ValarmindError } from "../errors.ts";
import { RECORDING_VERSION, type RecordedCall } from "./recording-client.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "./types.ts";

const EVENT_TYPES = new Set<string>([
  "text_delta",
  "reasoning_delta",
  "tool_call_start",
  "tool_call_arguments_delta",
  "tool_call",
  "retry",
  "completed",
  "error",
]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isEvent(value: unknown): value is ModelStreamEvent {
  return isObject(value) && typeof value.type === "string" && EVENT_TYPES.has(value.type);
}

/** Narrows one parsed line; returns why it is not a recorded call otherwise. */
function toRecordedCall(value: unknown): RecordedCall | string {
  if (!isObject(value)) return "not a JSON object";
  if (value.v !== RECORDING_VERSION) return `unsupported version ${JSON.stringify(value.v)} (expected ${RECORDING_VERSION})`;
  if (!isObject(value.request) || typeof value.request.model !== "string") return "missing request";
  const request = value.request as unknown as ModelRequest;
  if (value.method === "stream") {
    if (!Array.isArray(value.events) || !value.events.every(isEvent)) return "events is not a list of model events";
    return { v: 1, method: "stream", request, events: value.events, complete: value.complete === true };
  }
  if (value.method === "countInputTokens") {
    if (typeof value.result === "number") return { v: 1, method: "countInputTokens", request, result: value.result };
    if (typeof value.error === "string") return { v: 1, method: "countInputTokens", request, error: value.error };
    return "countInputTokens without result or error";
  }
  return `unknown method ${JSON.stringify(value.method)}`;
}

export function readRecording(file: string): RecordedCall[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ValarmindError(`cannot read model recording ${file}: ${describeError(error)}`, {
      hint: "Record one first with the recording client, or check the path.",
    });
  }
  return text
    .split("\n")
    .map((line, i) => ({ line, number: i + 1 }))
    .filter(({ line }) => line.trim() !== "")
    .map(({ line, number }) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        throw new ValarmindError(`${file}:${number}: not valid JSON`, { hint: "The recording is damaged; record it again." });
      }
      const call = toRecordedCall(parsed);
      if (typeof call === "string") throw new ValarmindError(`${file}:${number}: ${call}`, { hint: "Record it again." });
      return call;
    });
}

export interface ReplayClient extends ModelClient {
  /** Requests received, in call order. */
  readonly requests: ModelRequest[];
}

export function createReplayClient(source: RecordedCall[] | string): ReplayClient {
  const calls = typeof source === "string" ? readRecording(source) : source;
  const origin = typeof source === "string" ? source : "the in-memory recording";
  const streams = calls.filter((c) => c.method === "stream");
  const counts = calls.filter((c) => c.method === "countInputTokens");
  const requests: ModelRequest[] = [];
  let streamIndex = 0;
  let countIndex = 0;

  async function* stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    requests.push(request);
    const call = streams[streamIndex++];
    if (!call) {
      yield {
        type: "error",
        kind: "failed",
        message: `replay: ${origin} has no stream call #${streamIndex} (it holds ${streams.length}); record the scenario again`,
        retryable: false,
      };
      return;
    }
    yield* call.events;
  }

  async function countInputTokens(request: ModelRequest): Promise<number> {
    requests.push(request);
    const call = counts[countIndex++];
    if (!call) throw new ValarmindError(`replay: ${origin} has no countInputTokens call #${countIndex}`);
    if ("error" in call) throw new ValarmindError(call.error);
    return call.result;
  }

  return { stream, countInputTokens, requests };
}
