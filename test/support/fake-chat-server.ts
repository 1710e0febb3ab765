/**
 * A real HTTP server on 127.0.0.1 that speaks OpenAI Chat Completions, for the chat wire's tests
 * (the Responses twin is fake-responses-server.ts; this one mirrors its API).
 *
 *   const server = startFakeChatServer();                               // port 0: a free port
 *   server.enqueue(chatFixtureStream("openai_text_stream.sse"));         // the next POST /v1/chat/completions
 *   server.enqueue(chatFixtureError("openrouter_429"), chatTextStream("hi"));
 *   server.setResponder((body) => chatTextStream(`echo ${lastChatUserText(body)}`));  // when the queue is empty
 *   // point the client at server.baseURL with wire "chat" (VALARMIND_WIRE_API=chat for the CLI)
 *   server.requests[0].body.messages                                     // what the client sent
 *   await server.close();
 *
 * Only `POST /v1/chat/completions` exists. Every other path — `/v1/responses` included — answers
 * 404 with llama.cpp's recorded "File Not Found" body, as a chat-only server does, and is listed in
 * `server.notFound`. Streams are written frame by frame (`data: {...}\n\n`, then `data: [DONE]`);
 * recorded fixtures from test/fixtures/chat-completions/ byte-for-byte (provenance in SOURCES.md).
 * `cutAfter` and `gatedAfter` from fake-responses.ts work on these streams too.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { recordRequest, sendJson, sendStream, type RecordedRequest } from "./fake-responses-server.ts";
import type { FakeResponse, JsonResponse, StreamResponse } from "./fake-responses.ts";

export { createGate, cutAfter, gatedAfter } from "./fake-responses.ts";
export type { FakeResponse, RecordedRequest };

export const CHAT_FIXTURES_DIR = join(import.meta.dir, "..", "fixtures", "chat-completions");

export function readChatFixture(name: string): string {
  return readFileSync(join(CHAT_FIXTURES_DIR, name), "utf8");
}

/** The JSON chunks of a chat SSE body, without comments and the closing `[DONE]`. */
export function parseChatSse(text: string): unknown[] {
  return text
    .replace(/\r\n/g, "\n")
    .split("\n\n")
    .flatMap((frame) => frame.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()))
    .filter((data) => data !== "" && data !== "[DONE]")
    .map((data) => JSON.parse(data) as unknown);
}

/** A recorded stream from test/fixtures/chat-completions, served byte-for-byte. */
export function chatFixtureStream(name: string): StreamResponse {
  return { kind: "stream", body: readChatFixture(name), label: name };
}

/** A recorded HTTP error: `<name>.json` is the body, `<name>.headers.json` its `_status` and headers. */
export function chatFixtureError(name: string, options: { headers?: Record<string, string> } = {}): JsonResponse {
  const meta = JSON.parse(readChatFixture(`${name}.headers.json`)) as { _status: number; headers?: Record<string, string> };
  return { kind: "json", status: meta._status, body: readChatFixture(`${name}.json`), headers: { ...meta.headers, ...options.headers }, label: `${name}.json` };
}

export interface ChatStreamSpec {
  text?: string;
  /** Sent first, as `reasoning_content` deltas (DeepSeek, llama.cpp). */
  reasoning?: string;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> | string; id?: string }>;
  finishReason?: string;
  usage?: { prompt: number; cached: number; completion: number };
  model?: string;
}

let streamCounter = 0;

/** A stream in the recorded OpenAI shape (`openai_text_stream.sse`, `openai_parallel_tool_calls_stream.sse`). */
export function buildChatStream(spec: ChatStreamSpec): string {
  streamCounter++;
  const id = `chatcmpl-fake${streamCounter.toString().padStart(8, "0")}`;
  const model = spec.model ?? "gpt-4.1-nano-2025-04-14";
  const chunk = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1770933892, model, service_tier: "default", system_fingerprint: "fp_de604bd877", choices, usage })}\n\n`;
  const delta = (d: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  const pieces = (s: string, size: number) => s.match(new RegExp(`[\\s\\S]{1,${size}}`, "g")) ?? [];
  let body = delta({ role: "assistant", content: "", refusal: null });
  for (const part of pieces(spec.reasoning ?? "", 12)) body += delta({ content: null, reasoning_content: part });
  for (const part of spec.text?.match(/\S+\s*|\s+/g) ?? []) body += delta({ content: part });
  (spec.toolCalls ?? []).forEach((call, index) => {
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    const callId = call.id ?? `call_fake${streamCounter}x${index}`.padEnd(29, "0");
    body += delta({ tool_calls: [{ index, id: callId, type: "function", function: { name: call.name, arguments: "" } }] });
    for (const part of pieces(args, 8)) body += delta({ tool_calls: [{ index, function: { arguments: part } }] });
  });
  body += delta({}, spec.finishReason ?? (spec.toolCalls?.length ? "tool_calls" : "stop"));
  const usage = spec.usage ?? { prompt: 1200, cached: 1024, completion: 24 };
  body += chunk([], {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    prompt_tokens_details: { cached_tokens: usage.cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  });
  return `${body}data: [DONE]\n\n`;
}

export function chatTextStream(text: string, spec: Omit<ChatStreamSpec, "text" | "toolCalls"> = {}): StreamResponse {
  return { kind: "stream", body: buildChatStream({ ...spec, text }), label: `chat text ${JSON.stringify(text.slice(0, 40))}` };
}

export function chatToolCallStream(calls: NonNullable<ChatStreamSpec["toolCalls"]>, spec: Omit<ChatStreamSpec, "toolCalls"> = {}): StreamResponse {
  return { kind: "stream", body: buildChatStream({ ...spec, toolCalls: calls }), label: `chat tool calls ${calls.map((c) => c.name).join(", ")}` };
}

/** One chat message of a recorded request body, read without casts. */
export interface ChatMessageView {
  role: string;
  content: string | null;
  tool_calls: Array<{ id: string; name: string; arguments: string }>;
  tool_call_id?: string;
}

export function chatMessages(body: Record<string, unknown>): ChatMessageView[] {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages
    .filter((m): m is Record<string, unknown> => typeof m === "object" && m !== null)
    .map((m) => ({
      role: typeof m.role === "string" ? m.role : "",
      content: typeof m.content === "string" ? m.content : null,
      tool_calls: (Array.isArray(m.tool_calls) ? m.tool_calls : []).map((c: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }) => ({
        id: String(c.id),
        name: String(c.function?.name),
        arguments: String(c.function?.arguments),
      })),
      ...(typeof m.tool_call_id === "string" ? { tool_call_id: m.tool_call_id } : {}),
    }));
}

export function lastChatUserText(body: Record<string, unknown>): string {
  return chatMessages(body).findLast((m) => m.role === "user")?.content ?? "";
}

/** `tool` messages after the last user message: the results of this turn's tool calls. */
export function chatToolResultsThisTurn(body: Record<string, unknown>): ChatMessageView[] {
  const messages = chatMessages(body);
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  return messages.slice(lastUser + 1).filter((m) => m.role === "tool");
}

export type ChatResponder = (body: Record<string, unknown>, index: number) => FakeResponse | Promise<FakeResponse>;

export interface FakeChatServer extends AsyncDisposable {
  readonly url: string;
  /** http://127.0.0.1:PORT/v1 */
  readonly baseURL: string;
  /** Every POST /v1/chat/completions, in order. */
  readonly requests: RecordedRequest[];
  /** "METHOD /path" of every request to any other route (answered 404 like llama.cpp). */
  readonly notFound: string[];
  /** Script exhausted, responder failures, bodies that are not JSON. */
  readonly problems: string[];
  enqueue(...responses: FakeResponse[]): void;
  setResponder(responder: ChatResponder | undefined): void;
  close(): Promise<void>;
}

export function startFakeChatServer(options: { script?: FakeResponse[]; responder?: ChatResponder } = {}): FakeChatServer {
  const queue: FakeResponse[] = [...(options.script ?? [])];
  let responder = options.responder;
  const requests: RecordedRequest[] = [];
  const notFound: string[] = [];
  const problems: string[] = [];
  let closeAll!: () => void;
  const closing = new Promise<void>((resolve) => (closeAll = resolve));

  const record = (request: Request, path: string): Promise<RecordedRequest> => recordRequest(request, path, requests, problems);

  async function handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (request.method !== "POST" || path !== "/v1/chat/completions") {
      notFound.push(`${request.method} ${path}`);
      return sendJson(chatFixtureError("llamacpp_404_file_not_found"));
    }
    const recorded = await record(request, path);
    let answer = queue.shift();
    if (!answer && responder) {
      try {
        answer = await responder(recorded.body, recorded.index);
      } catch (error) {
        problems.push(`responder threw on request #${recorded.index}: ${String(error)}`);
        return sendJson({ kind: "json", status: 500, body: JSON.stringify({ error: { message: String(error), type: "server_error" } }), headers: { "x-should-retry": "false" }, label: "" });
      }
    }
    if (!answer) {
      const message = `fake chat server: no scripted response left for request #${recorded.index}`;
      problems.push(message);
      return sendJson({ kind: "json", status: 400, body: JSON.stringify({ error: { message, type: "invalid_request_error", code: "fake_script_exhausted" } }), label: "" });
    }
    if (answer.kind === "json") return sendJson(answer);
    return sendStream(answer, request.signal, closing, () => {});
  }

  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, development: false, fetch: handle });
  const url = `http://127.0.0.1:${server.port ?? 0}`;
  const api: FakeChatServer = {
    url,
    baseURL: `${url}/v1`,
    requests,
    notFound,
    problems,
    enqueue: (...responses) => void queue.push(...responses),
    setResponder: (next) => void (responder = next),
    async close() {
      closeAll();
      await server.stop(true);
    },
    [Symbol.asyncDispose]: () => api.close(),
  };
  return api;
}
