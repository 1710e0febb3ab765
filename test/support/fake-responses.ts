/**
 * What the fake Responses server answers one request with, and small constructors for it.
 * Re-exported by `fake-responses-server.ts`; see the usage there.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  buildFailedStream,
  buildResponseStream,
  FIXTURES_DIR,
  readFixture,
  type FakeToolCall,
  type ResponseStreamSpec,
} from "./sse-script.ts";

/** A promise pair for pausing a stream without timers: the server waits until `release()`. */
export interface Gate {
  /** Resolves when the server has written everything before the gate and starts waiting. */
  readonly reached: Promise<void>;
  readonly released: Promise<void>;
  release(): void;
  /** Called by the server when it arrives at the gate. */
  markReached(): void;
}

export function createGate(): Gate {
  let release!: () => void;
  let markReached!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (markReached = resolve));
  return { reached, released, release, markReached };
}

export interface StreamResponse {
  kind: "stream";
  /** The full SSE body; written frame by frame, byte-for-byte. */
  body: string;
  status?: number;
  headers?: Record<string, string>;
  /** Close the connection after this many frames: "eof" ends the body cleanly, "reset" aborts it (see `cutAfter`). */
  cut?: { afterEvents: number; mode: "reset" | "eof" };
  /** Wait on a gate after this many frames (several allowed). */
  gates?: Array<{ afterEvents: number; gate: Gate }>;
  /** Pause before each frame, for watching a stream render by hand (scripts/fake-server.ts); never in tests. */
  frameDelayMs?: number;
  /** For failure messages: which fixture or builder made it. */
  label: string;
}

export interface JsonResponse {
  kind: "json";
  status: number;
  /** Sent byte-for-byte. */
  body: string;
  headers?: Record<string, string>;
  label: string;
}

export type FakeResponse = StreamResponse | JsonResponse;

/** A recorded `.sse` fixture from test/fixtures/openai, served byte-for-byte. */
export function fixtureStream(name: string): StreamResponse {
  return { kind: "stream", body: readFixture(name), label: name };
}

/** A recorded-shape text answer (see `buildResponseStream` for options). */
export function textStream(text: string, spec: Omit<ResponseStreamSpec, "text" | "toolCalls"> = {}): StreamResponse {
  return { kind: "stream", body: buildResponseStream({ ...spec, text }), label: `text ${JSON.stringify(text.slice(0, 40))}` };
}

/** A recorded-shape response calling tools (in parallel when several), optionally after some text. */
export function toolCallStream(calls: FakeToolCall[], spec: Omit<ResponseStreamSpec, "toolCalls"> = {}): StreamResponse {
  const names = calls.map((c) => c.name).join(", ");
  return { kind: "stream", body: buildResponseStream({ ...spec, toolCalls: calls }), label: `tool calls ${names}` };
}

export function builtStream(spec: ResponseStreamSpec): StreamResponse {
  return { kind: "stream", body: buildResponseStream(spec), label: "built stream" };
}

/** A 200 stream that fails with an `error` + `response.failed` (e.g. "context_length_exceeded"). */
export function failedStream(code: string, message: string): StreamResponse {
  return { kind: "stream", body: buildFailedStream(code, message), label: `failed stream ${code}` };
}

/** Any JSON (or text) body with a status. */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): JsonResponse {
  const text = typeof body === "string" ? body : JSON.stringify(body, null, 2);
  return { kind: "json", status, body: text, headers, label: `json ${status}` };
}

/** An OpenAI-shaped HTTP error: `{"error":{"message","type","param","code"}}`. */
export function httpError(
  status: number,
  error: { message: string; type?: string; code?: string | null; param?: string | null },
  headers: Record<string, string> = {},
): JsonResponse {
  const body = { error: { message: error.message, type: error.type ?? "invalid_request_error", param: error.param ?? null, code: error.code ?? null } };
  return { ...jsonResponse(body, status, headers), label: `http ${status}` };
}

const DROPPED_HEADERS = new Set(["content-length", "date", "set-cookie", "connection"]);

/**
 * An HTTP error from fixtures: `<name>.json` is the body (byte-for-byte); `<name>.headers.json`,
 * when present, gives `_status` and the recorded headers. `headers` override or add (e.g. retry-after).
 */
export function fixtureError(name: string, options: { status?: number; headers?: Record<string, string> } = {}): JsonResponse {
  const body = readFixture(`${name}.json`);
  let status = options.status;
  const headers: Record<string, string> = {};
  try {
    const meta = JSON.parse(readFileSync(join(FIXTURES_DIR, `${name}.headers.json`), "utf8")) as {
      _status?: number;
      headers?: Record<string, string>;
      observed_headers?: Record<string, string>;
    };
    status ??= meta._status;
    for (const [key, value] of Object.entries(meta.headers ?? meta.observed_headers ?? {})) {
      if (!DROPPED_HEADERS.has(key.toLowerCase())) headers[key] = value;
    }
  } catch {
    // No headers file for this fixture: the status must come from the caller.
  }
  if (status === undefined) throw new Error(`fixtureError(${name}): no ${name}.headers.json, pass options.status`);
  return { kind: "json", status, body, headers: { ...headers, ...options.headers }, label: `${name}.json` };
}

/** A recorded JSON body served with status 200 (non-stream response, input token count). */
export function fixtureJson(name: string, status = 200): JsonResponse {
  return { kind: "json", status, body: readFixture(name), headers: {}, label: name };
}

export function inputTokensResponse(count: number): JsonResponse {
  return jsonResponse({ object: "response.input_tokens", input_tokens: count });
}

/**
 * The same stream, cut after `afterEvents` frames. "eof" ends the body cleanly without a terminal
 * event. "reset" drops the connection; Bun's fetch then loses any bytes the client has not read yet
 * (even the headers), so put a gate at the same frame and release it once the client saw what it
 * should: `gatedAfter(cutAfter(s, 6, "reset"), 6)`.
 */
export function cutAfter(response: StreamResponse, afterEvents: number, mode: "reset" | "eof" = "eof"): StreamResponse {
  return { ...response, cut: { afterEvents, mode }, label: `${response.label} cut after ${afterEvents}` };
}

/** The same stream, pausing after `afterEvents` frames until `gate.release()` (or the client leaves). */
export function gatedAfter(response: StreamResponse, afterEvents: number, gate: Gate = createGate()): { response: StreamResponse; gate: Gate } {
  const gates = [...(response.gates ?? []), { afterEvents, gate }];
  return { response: { ...response, gates }, gate };
}
