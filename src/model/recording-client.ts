/**
 * Records every call of a ModelClient to a JSONL file (one line per call, schema version 1), so a
 * real conversation can be replayed deterministically by `replay-client.ts` (Gemini CLI style).
 * Requests carry no API key; what they and the events do carry (tool output, the user's words) is
 * redacted like every file valarmind writes, and the file is 0600 in a 0700 directory.
 */
import { appendFileSync } from "node:fs";
import { dirname } from "node:path";
import { describeError } from "../errors.ts";
import { makePrivateDirs, PRIVATE_FILE_MODE } from "../config/valarmind-dir.ts";
import { redactSecretsInJson } from "../secrets/redact-secrets.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "./types.ts";

export const RECORDING_VERSION = 1;

export type RecordedCall =
  | {
      v: 1;
      method: "stream";
      request: ModelRequest;
      events: ModelStreamEvent[];
      /** False when the consumer stopped iterating before the stream ended. */
      complete: boolean;
    }
  | { v: 1; method: "countInputTokens"; request: ModelRequest; result: number }
  | { v: 1; method: "countInputTokens"; request: ModelRequest; error: string };

export function createRecordingClient(inner: ModelClient, file: string): ModelClient {
  makePrivateDirs(dirname(file));
  // Synchronous appends keep lines whole and in call order.
  const write = (call: RecordedCall): void => appendFileSync(file, `${JSON.stringify(redactSecretsInJson(call))}\n`, { mode: PRIVATE_FILE_MODE });

  async function* stream(request: ModelRequest, signal?: AbortSignal): AsyncGenerator<ModelStreamEvent> {
    const events: ModelStreamEvent[] = [];
    let complete = false;
    try {
      for await (const event of inner.stream(request, signal)) {
        events.push(event);
        yield event;
      }
      complete = true;
    } finally {
      write({ v: RECORDING_VERSION, method: "stream", request, events, complete });
    }
  }

  async function countInputTokens(request: ModelRequest, signal?: AbortSignal): Promise<number> {
    try {
      const result = await inner.countInputTokens(request, signal);
      write({ v: RECORDING_VERSION, method: "countInputTokens", request, result });
      return result;
    } catch (error) {
      write({ v: RECORDING_VERSION, method: "countInputTokens", request, error: describeError(error) });
      throw error;
    }
  }

  return { stream, countInputTokens };
}
