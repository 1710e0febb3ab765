/**
 * Audit of the chat wire (and the shared error mapping) against what real local model servers send:
 * the real client (the official SDK inside) over real HTTP to the fake chat server, and where the
 * user-visible outcome matters a whole turn through AgentSession.
 *
 * Written as a fault-finding pass; a comment marked "Was" says what a fixed defect did. (DeepSeek's
 * thinking mode, which wants its reasoning_content back with a step's tool calls, is
 * test/cli/chat-wire-reasoning.test.ts.) Cases already covered by
 * chat-completions-hostile.test.ts, chat-client.test.ts and chat-stream-events.test.ts are not repeated.
 */
import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentSession } from "../../src/agent/session.ts";
import type { Settings } from "../../src/config/settings-schema.ts";
import { createOpenAIClient, type OpenAIClientOptions } from "../../src/model/openai-client.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../../src/model/types.ts";
import { cleanupTempDirs } from "../support/cli.ts";
import { chatFixtureStream, chatTextStream, startFakeChatServer, type FakeChatServer } from "../support/fake-chat-server.ts";
import type { JsonResponse, StreamResponse } from "../support/fake-responses.ts";
import { TINY_PNG } from "../support/tiny-png.ts";
import { errorEvents, makeGitWorkspace, records, runTurn, testSettings } from "../agent/support/agent-harness.ts";

const ID = "chatcmpl-audit0001";
const frame = (data: unknown, eol = "\n"): string => `data: ${JSON.stringify(data)}${eol}${eol}`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}): string =>
  frame({ id: ID, object: "chat.completion.chunk", created: 1770933892, model: "local-model", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...extra });
const ROLE = chunk({ role: "assistant", content: "" });
const DONE = "data: [DONE]\n\n";
const sse = (body: string, label: string): StreamResponse => ({ kind: "stream", body, label });
const json = (status: number, body: unknown, label = `json ${status}`): JsonResponse => ({ kind: "json", status, body: JSON.stringify(body), label });

const request: ModelRequest = {
  model: "local-model",
  instructions: "You are valarmind.",
  input: [{ type: "message", role: "user", content: "hello" }],
  tools: [],
  prompt_cache_key: "session-audit",
  store: false,
};

let server: FakeChatServer;
let sleeps: number[];
const sessions: AgentSession[] = [];
beforeEach(() => {
  server = startFakeChatServer();
  sleeps = [];
});
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await server.close();
});
afterAll(cleanupTempDirs);

function client(options: Partial<OpenAIClientOptions> = {}): ModelClient {
  return createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL, wire: "chat", sleep: async (ms) => void sleeps.push(ms), ...options });
}
async function streamOnce(...responses: Array<StreamResponse | JsonResponse>): Promise<ModelStreamEvent[]> {
  server.enqueue(...responses);
  const out: ModelStreamEvent[] = [];
  for await (const event of client().stream(request)) out.push(event);
  return out;
}
function last<T extends ModelStreamEvent["type"]>(events: ModelStreamEvent[], type: T): Extract<ModelStreamEvent, { type: T }> {
  const end = events.at(-1);
  if (end?.type !== type) throw new Error(`expected ${type} last, got ${JSON.stringify(end)}`);
  return end as Extract<ModelStreamEvent, { type: T }>;
}
const textOf = (events: ModelStreamEvent[]): string => events.flatMap((e) => (e.type === "text_delta" ? [e.delta] : [])).join("");
const reasoningOf = (events: ModelStreamEvent[]): string => events.flatMap((e) => (e.type === "reasoning_delta" ? [e.delta] : [])).join("");

async function openChatSession(root: string, settings: Partial<Settings> = {}): Promise<AgentSession> {
  const session = await AgentSession.open({
    root,
    settings: testSettings({ wireApi: "chat", approvals: "auto-edit", model: "local-model", ...settings }),
    model: client(),
    interactive: false,
    resume: { kind: "new" },
  });
  sessions.push(session);
  return session;
}

// =============================================================================================

describe("what local servers send that is handled right", () => {
  test("CRLF line endings, `data:` without a space, `id:`/`retry:` fields and keep-alive comments: text and usage intact", async () => {
    const crlf = (data: unknown) => `data:${JSON.stringify(data)}\r\n\r\n`;
    const base = { id: ID, object: "chat.completion.chunk", model: "local-model" };
    const body =
      ": keep-alive\r\n\r\n" +
      "retry: 3000\r\n" +
      crlf({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }) +
      `id: 7\r\n${crlf({ ...base, choices: [{ index: 0, delta: { content: "Hello " }, finish_reason: null }] })}` +
      ": ping\r\n\r\n" +
      crlf({ ...base, choices: [{ index: 0, delta: { content: "world" }, finish_reason: null }] }) +
      crlf({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 } }) +
      "data: [DONE]\r\n\r\n";
    const events = await streamOnce(sse(body, "crlf"));
    expect(textOf(events)).toBe("Hello world");
    expect(last(events, "completed")).toMatchObject({ status: "completed", text: "Hello world", usage: { input: 40, cached: 0, output: 2, reasoning: 0 } });
  });

  test("Ollama's shape: a whole call in one chunk, then finish_reason `stop` (not `tool_calls`): the call is returned", async () => {
    const body =
      ROLE +
      chunk({ tool_calls: [{ id: "call_ab12cd", index: 0, type: "function", function: { name: "read_file", arguments: '{"path":"README.md"}' } }] }) +
      chunk({ content: "" }, "stop") +
      frame({ id: ID, object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 300, completion_tokens: 20, total_tokens: 320 } }) +
      DONE;
    const done = last(await streamOnce(sse(body, "ollama call")), "completed");
    expect(done.toolCalls).toEqual([{ callId: "call_ab12cd", name: "read_file", arguments: '{"path":"README.md"}' }]);
  });

  /** "Too long" as servers say it that the classifier already knows. */
  const knownOverflows: Array<[string, unknown]> = [
    // llama.cpp (b6700+): HTTP 400, type exceed_context_size_error, counts in the message.
    ["llama.cpp, new wording", { error: { code: 400, message: "request (5120 tokens) exceeds the available context size (4096 tokens), try increasing it", type: "exceed_context_size_error", n_prompt_tokens: 5120, n_ctx: 4096 } }],
    // llama.cpp with context shift disabled (the server's own test constant).
    ["llama.cpp, no context shift", { error: { code: 400, message: "the request exceeds the available context size. try increasing the context size or enable context shift", type: "invalid_request_error" } }],
    // vLLM when the prompt alone is too long.
    // Ollama's OpenAI endpoint (num_ctx exceeded, truncation off).
    ["Ollama", { error: { message: "prompt too long; exceeded max context length by 4021 tokens", type: "invalid_request_error", param: null, code: null } }],
    ["vLLM, input only", { error: { object: "error", message: "This model's maximum context length is 8192 tokens. However, your request has 9001 input tokens. Please reduce the length of the input messages.", type: "BadRequestError", param: null, code: 400 } }],
  ];
  for (const [who, body] of knownOverflows) {
    test(`HTTP 400 "too long" from ${who} is context_length_exceeded, not retried`, async () => {
      const error = last(await streamOnce(json(400, body)), "error");
      expect(error).toMatchObject({ kind: "context_length_exceeded", retryable: false });
      expect(server.requests).toHaveLength(1);
    });
  }
});

// =============================================================================================

describe("fixed", () => {
  // Was: llama.cpp's server (builds before PR #16486, late 2025 — still what many Docker images,
  // distro packages and bundles ship) reports an error of a streamed request as an SSE *field* named
  // `error` (`server_sent_event(sink, "error", …)` → `error: {…}\n\n`), then `data: [DONE]`, with HTTP 200.
  // The openai SDK's SSE decoder ignores every field but `event`/`data`, so the client sees a stream
  // with no chunk, and `createChatStreamMapper.end` (chat-stream-events.ts) reports `notResponsesApiError`:
  // "…/chat/completions answered, but not with a Chat Completions event stream (… an HTTP page or another
  // API?). Check OPENAI_BASE_URL … or set wireApi back to "responses"" — wrong advice; the server's words
  // are lost, and since the kind is bad_request the turn loop does not fold the window and retry.
  // Fix: give the SDK a `fetch` (openai-client.ts `load`) that rewrites a line `error: X` of a
  // text/event-stream body into `data: {"error": X}` (the SDK then throws it as an in-stream APIError,
  // which consume() already maps; exceed_context_size_error → context_length_exceeded).
  test("llama.cpp's `error:` SSE field before any chunk (prompt over n_ctx) is context_length_exceeded quoting the server", async () => {
    const body = `error: ${JSON.stringify({ code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error" })}\n\n${DONE}`;
    const error = last(await streamOnce(sse(body, "llama.cpp error field")), "error");
    expect(error.message).toContain("exceeds the available context size");
    expect(error.kind).toBe("context_length_exceeded");
  });

  // Was (same cause): an `error:` field after some chunks (e.g. llama.cpp failing to decode mid-answer)
  // ends as stream_cut "ended before the response finished (N events, no finish_reason)…send the message
  // again": the server's reason is never shown, so the user resends into the same failure.
  test("llama.cpp's `error:` SSE field mid-answer: the error quotes the server's message", async () => {
    const body = ROLE + chunk({ content: "Partial " }) + `error: ${JSON.stringify({ code: 500, message: "Compute error.", type: "server_error" })}\n\n` + DONE;
    const events = await streamOnce(sse(body, "llama.cpp error field mid-stream"));
    expect(textOf(events)).toBe("Partial ");
    expect(last(events, "error").message).toContain("Compute error.");
  });

  // Was: an image sent to a llama.cpp model loaded without its projector is refused with HTTP 500
  // `{"error":{"code":500,"message":"image input is not supported - hint: if this is unexpected, you may
  // need to provide the mmproj","type":"server_error"}}` (Ollama: 500 "this model is missing data required
  // for image input"). `isRetryable` (retry-policy.ts) retries every 5xx, so the same image is posted 4
  // times (3 backoff waits), then `httpError` (model-errors.ts) says "the server failed (…). It may be
  // overloaded or down; try again later (https://status.openai.com)" — wrong for a request that can never
  // work, and the status page is OpenAI's. Fix: in classify()/httpError, recognise image refusals
  // (/image input is not supported|missing data required for image input|does not support (image|vision|multimodal)|not a multimodal model/i)
  // as a non-retryable bad_request that says the model does not accept images (use a vision model, load
  // its mmproj, or leave the image out); and do not point local servers at status.openai.com.
  test("llama.cpp refusing an image (HTTP 500, no mmproj): not retried, and not called an overloaded server", async () => {
    const refusal = { error: { code: 500, message: "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj", type: "server_error" } };
    const root = await makeGitWorkspace({ "shot.png": "" });
    writeFileSync(join(root, "shot.png"), TINY_PNG);
    server.setResponder(() => json(500, refusal, "no mmproj"));
    const session = await openChatSession(root);
    const turn = await runTurn(session, "what is in @shot.png ?");
    expect(turn.stopReason).toBe("error");
    const [error] = errorEvents(turn.events);
    expect(error?.message).toContain("image input is not supported");
    expect({ requests: server.requests.length, sleeps, overloaded: /overloaded|status\.openai\.com/.test(error?.message ?? "") }).toEqual({ requests: 1, sleeps: [], overloaded: false });
  });

  // Was (interop): Qwen3, QwQ and DeepSeek-R1 served without a reasoning parser (vLLM without
  // --reasoning-parser, llama.cpp --reasoning-format none, LM Studio with "separate reasoning_content" off,
  // many proxies) stream their thinking inside `content` between <think> and </think>.
  // `choiceDelta` (chat-stream-events.ts) takes all of `content` as the answer: the REPL and `chat -p`'s
  // stdout show the chain of thought as the answer, the transcript records it as the assistant's text, and
  // every later request re-sends it (tokens the window pays for on each step). Fix: in the chat mapper,
  // route content from a leading `<think>` (or, for R1 templates that open it in the prompt, everything up
  // to a first `</think>`) to reasoning_delta, and drop the tags and the blank line after them.
  test("<think>…</think> at the start of content is reasoning, not the answer", async () => {
    const body =
      ROLE + chunk({ content: "<think>" }) + chunk({ content: "\nSECRET-THOUGHT the user" }) + chunk({ content: " greets me.\n" }) + chunk({ content: "</think>" }) + chunk({ content: "\n\n" }) + chunk({ content: "Hello!" }) + chunk({}, "stop") + DONE;
    const events = await streamOnce(sse(body, "think tags"));
    expect(reasoningOf(events)).toContain("SECRET-THOUGHT the user greets me.");
    expect(last(events, "completed").text).toBe("Hello!");
    expect(textOf(events)).not.toContain("SECRET-THOUGHT");
  });

  // Was: Hugging Face text-generation-inference (TGI) answers a prompt over its max input length with
  // HTTP 422 `{"error":"Input validation error: \`inputs\` must have less than 4096 tokens. Given: 4545",
  // "error_type":"validation"}`. `httpError` (model-errors.ts) only looks for an overflow on 400/413 and
  // the wording is not in `isContextOverflow`, so the user gets bad_request "…this is a valarmind bug
  // worth reporting" and the turn loop does not fold the window and retry. Fix: accept 422 in the overflow
  // check and add /must have less than \d+ tokens|inputs` tokens \+ `max_new_tokens` must be <=/i.
  test("TGI's HTTP 422 'inputs must have less than N tokens' is context_length_exceeded", async () => {
    const body = { error: "Input validation error: `inputs` must have less than 4096 tokens. Given: 4545", error_type: "validation" };
    const error = last(await streamOnce(json(422, body, "tgi 422")), "error");
    expect(error.message).toContain("must have less than 4096 tokens");
    expect(error.kind).toBe("context_length_exceeded");
  });
});

test("through a turn: Ollama's 'prompt too long' (HTTP 400) folds the window and retries once; the answer and the user's words are kept", async () => {
  const root = await makeGitWorkspace();
  const session = await openChatSession(root, { windowBlockTurns: 1 });
  for (const words of ["first question", "second question", "third question"]) {
    server.enqueue(chatTextStream(`answer to ${words}`));
    expect((await runTurn(session, words)).stopReason).toBe("completed");
  }
  const before = server.requests.length;
  const tooLong = { error: { message: "prompt too long; exceeded max context length by 4021 tokens", type: "invalid_request_error", param: null, code: null } };
  server.enqueue(json(400, tooLong, "ollama too long"), chatTextStream("Fits now."));
  const turn = await runTurn(session, "fourth question");
  expect(turn.events.filter((e) => e.type === "retry").map((e) => (e.type === "retry" ? e.reason : ""))).toEqual([expect.stringContaining("context window exceeded")]);
  expect(turn.stopReason).toBe("completed");
  expect(turn.text).toBe("Fits now.");
  expect(server.requests.length - before).toBe(2);
  expect(server.requests.at(-1)?.raw.length).toBeLessThan(server.requests.at(-2)?.raw.length ?? 0);
  expect(records(session).filter((r) => r.kind === "user").map((r) => (r.kind === "user" ? r.text : ""))).toContain("fourth question");
});
