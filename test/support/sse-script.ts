/**
 * SSE framing and recorded-shape Responses streams for tests.
 *
 * - `parseSse(text)` / `splitSseFrames(text)`: read a `.sse` fixture (`event: X\ndata: {...}\n\n`).
 * - `buildResponseStream(spec)`: a stream with the event order, key order, ids, `output_index`,
 *   `sequence_number`, `obfuscation` and `usage` of the recorded gpt-5.5 streams
 *   (`text_stream.sse`, `message_function_call_stream.sse`, `function_call_stream.sse`); the response
 *   object itself is the recorded one from `text_stream.sse`, with the request's fields put in.
 * - `buildFailedStream(code, message)`: created → in_progress → error → response.failed, as in
 *   `failed_stream.sse`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const FIXTURES_DIR = join(import.meta.dir, "..", "fixtures", "openai");

export interface SseEvent {
  event: string | undefined;
  data: string;
}

/** Splits an SSE body into frames, each keeping its bytes (incl. the blank line that ends it). */
export function splitSseFrames(text: string): string[] {
  const frames: string[] = [];
  let start = 0;
  for (;;) {
    const end = text.indexOf("\n\n", start);
    if (end === -1) break;
    frames.push(text.slice(start, end + 2));
    start = end + 2;
  }
  if (start < text.length) frames.push(text.slice(start));
  return frames;
}

/** Parses frames into `{event, data}` (multi-line data joined by "\n"; comment lines skipped). */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const frame of splitSseFrames(text.replace(/\r\n/g, "\n"))) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
    }
    if (data.length > 0) events.push({ event, data: data.join("\n") });
  }
  return events;
}

/** The parsed JSON `data` of every event, as the SDK hands them over. */
export function parseSseData(text: string): unknown[] {
  return parseSse(text).map((e) => JSON.parse(e.data) as unknown);
}

export function readFixture(name: string): string {
  return readFileSync(join(FIXTURES_DIR, name), "utf8");
}

export function formatSseEvent(data: { type: string } & Record<string, unknown>): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

let idCounter = 0;
/** Ids in the recorded format (`resp_` + 50 hex), unique within the test process. */
export function fakeId(prefix: "resp" | "msg" | "fc" | "rs" | "call"): string {
  idCounter++;
  const hex = (Bun.hash(`${prefix}:${idCounter}`).toString(16) + idCounter.toString(16)).padStart(16, "0");
  if (prefix === "call") return `call_${hex.slice(0, 24).padEnd(24, "0")}`;
  return `${prefix}_${hex.repeat(4).slice(0, 50)}`;
}

const OBFUSCATION_ALPHABET = "A9b8C7d6E5f4G3h2J1kLmNoPqRsTuVwXyZ";
/** Real deltas carry random padding so that every event has about the same length. */
function obfuscation(delta: string, seed: number): string {
  const length = Math.max(1, 16 - [...delta].length);
  let out = "";
  for (let i = 0; i < length; i++) out += OBFUSCATION_ALPHABET[(seed * 7 + i * 13) % OBFUSCATION_ALPHABET.length];
  return out;
}

/** Word-like chunks as the API streams them: "The capital" → ["The", " capital"]. */
export function chunkText(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

function chunkArguments(args: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 6) out.push(args.slice(i, i + 6));
  return out;
}

export interface FakeToolCall {
  name: string;
  /** An object is JSON-encoded; a string is sent as is (so tests can send invalid JSON). */
  arguments: string | Record<string, unknown>;
  callId?: string;
}

export interface UsageSpec {
  input_tokens?: number;
  cached_tokens?: number;
  output_tokens?: number;
  reasoning_tokens?: number;
}

export interface ResponseStreamSpec {
  /** Reasoning summary paragraphs (one summary part each), streamed before the answer. */
  reasoningSummary?: string[];
  /** Assistant text; with tool calls it is the "commentary" message before them. */
  text?: string;
  toolCalls?: FakeToolCall[];
  usage?: UsageSpec;
  /** "incomplete" ends with `response.incomplete` and `incomplete_details.reason`. */
  status?: "completed" | "incomplete";
  incompleteReason?: string;
  /** Insert a `keepalive` event after every N events (shape assumed: no recording has one). */
  keepaliveEvery?: number;
  /** The request being answered: model, instructions, tools, prompt_cache_key... are echoed. */
  request?: Record<string, unknown>;
}

let templateCache: Record<string, unknown> | undefined;
function responseTemplate(): Record<string, unknown> {
  if (!templateCache) {
    const first = parseSseData(readFixture("text_stream.sse"))[0] as { response: Record<string, unknown> };
    templateCache = first.response;
  }
  return structuredClone(templateCache);
}

const ECHOED = ["model", "instructions", "max_output_tokens", "prompt_cache_key", "store", "tools"] as const;

function responseObject(id: string, request: Record<string, unknown> | undefined): Record<string, unknown> {
  const response = responseTemplate();
  response.id = id;
  response.created_at = Math.floor(Date.now() / 1000);
  response.tools = [];
  response.instructions = null;
  for (const key of ECHOED) if (request && request[key] !== undefined) response[key] = request[key];
  const reasoning = request?.reasoning as { effort?: unknown; summary?: unknown } | undefined;
  if (reasoning) response.reasoning = { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null };
  return response;
}

function usageObject(spec: UsageSpec | undefined, outputEvents: number, request?: Record<string, unknown>) {
  const estimatedInput = request ? Math.ceil(JSON.stringify(request).length / 4) : 100;
  const input = spec?.input_tokens ?? estimatedInput;
  const output = spec?.output_tokens ?? Math.max(1, outputEvents);
  return {
    input_tokens: input,
    input_tokens_details: { cache_write_tokens: 0, cached_tokens: spec?.cached_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: spec?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

/** Builds a complete recorded-shape stream; returns the SSE body. */
export function buildResponseStream(spec: ResponseStreamSpec): string {
  const events: Array<{ type: string } & Record<string, unknown>> = [];
  let seq = 0;
  const emit = (event: { type: string } & Record<string, unknown>): void => {
    events.push({ ...event, sequence_number: seq++ });
    if (spec.keepaliveEvery && events.length % (spec.keepaliveEvery + 1) === spec.keepaliveEvery) {
      events.push({ type: "keepalive", sequence_number: seq++ });
    }
  };
  const response = responseObject(fakeId("resp"), spec.request);
  const output: Record<string, unknown>[] = [];
  let outputEvents = 0;
  emit({ type: "response.created", response: { ...response, status: "in_progress", output: [], usage: null } });
  emit({ type: "response.in_progress", response: { ...response, status: "in_progress", output: [], usage: null } });

  if (spec.reasoningSummary && spec.reasoningSummary.length > 0) {
    const id = fakeId("rs");
    const output_index = output.length;
    emit({ type: "response.output_item.added", item: { id, type: "reasoning", summary: [] }, output_index });
    spec.reasoningSummary.forEach((text, summary_index) => {
      const base = { item_id: id, output_index, summary_index };
      emit({ type: "response.reasoning_summary_part.added", ...base, part: { type: "summary_text", text: "" } });
      for (const delta of chunkText(text)) {
        emit({ type: "response.reasoning_summary_text.delta", ...base, delta, obfuscation: obfuscation(delta, seq) });
      }
      emit({ type: "response.reasoning_summary_text.done", ...base, text });
      emit({ type: "response.reasoning_summary_part.done", ...base, part: { type: "summary_text", text } });
    });
    const item = { id, type: "reasoning", summary: spec.reasoningSummary.map((text) => ({ type: "summary_text", text })) };
    emit({ type: "response.output_item.done", item, output_index });
    output.push(item);
  }

  const calls = spec.toolCalls ?? [];
  if (spec.text !== undefined && spec.text !== "") {
    const id = fakeId("msg");
    const output_index = output.length;
    const phase = calls.length > 0 ? "commentary" : "final_answer";
    const part = (text: string) => ({ type: "output_text", annotations: [], logprobs: [], text });
    emit({ type: "response.output_item.added", item: { id, type: "message", status: "in_progress", content: [], phase, role: "assistant" }, output_index });
    emit({ type: "response.content_part.added", content_index: 0, item_id: id, output_index, part: part("") });
    for (const delta of chunkText(spec.text)) {
      outputEvents++;
      emit({ type: "response.output_text.delta", content_index: 0, delta, item_id: id, logprobs: [], obfuscation: obfuscation(delta, seq), output_index });
    }
    emit({ type: "response.output_text.done", content_index: 0, item_id: id, logprobs: [], output_index, text: spec.text });
    emit({ type: "response.content_part.done", content_index: 0, item_id: id, output_index, part: part(spec.text) });
    const item = { id, type: "message", status: "completed", content: [part(spec.text)], phase, role: "assistant" };
    emit({ type: "response.output_item.done", item, output_index });
    output.push(item);
  }

  for (const call of calls) {
    const id = fakeId("fc");
    const call_id = call.callId ?? fakeId("call");
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    const output_index = output.length;
    emit({ type: "response.output_item.added", item: { id, type: "function_call", status: "in_progress", arguments: "", call_id, name: call.name }, output_index });
    for (const delta of chunkArguments(args)) {
      outputEvents++;
      emit({ type: "response.function_call_arguments.delta", delta, item_id: id, obfuscation: obfuscation(delta, seq), output_index });
    }
    emit({ type: "response.function_call_arguments.done", arguments: args, item_id: id, output_index });
    const item = { id, type: "function_call", status: "completed", arguments: args, call_id, name: call.name };
    emit({ type: "response.output_item.done", item, output_index });
    output.push(item);
  }

  const incomplete = spec.status === "incomplete";
  const final = {
    ...response,
    status: incomplete ? "incomplete" : "completed",
    completed_at: incomplete ? null : Math.floor(Date.now() / 1000),
    incomplete_details: incomplete ? { reason: spec.incompleteReason ?? "max_output_tokens" } : null,
    output,
    usage: usageObject(spec.usage, outputEvents, spec.request),
  };
  emit({ type: incomplete ? "response.incomplete" : "response.completed", response: final });
  return events.map(formatSseEvent).join("");
}

/** A 200 stream that fails after it started, shaped like `failed_stream.sse`. */
export function buildFailedStream(code: string, message: string, errorType: string = code): string {
  const response = responseObject(fakeId("resp"), undefined);
  const events = [
    { type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress", usage: null } },
    { type: "response.in_progress", sequence_number: 1, response: { ...response, status: "in_progress", usage: null } },
    { type: "error", sequence_number: 2, error: { type: errorType, code, message, param: null } },
    { type: "response.failed", sequence_number: 3, response: { ...response, status: "failed", error: { code, message }, usage: null } },
  ];
  return events.map(formatSseEvent).join("");
}
