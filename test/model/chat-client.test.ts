/**
 * The real client (official SDK inside) on the chat wire, against the fake Chat Completions server
 * over real HTTP, replaying the recorded streams and error bodies of test/fixtures/chat-completions/.
 * Also: the Responses wire against a chat-only server (404 → the wireApi hint).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ValarmindError } from "../../src/errors.ts";
import { createModelClient } from "../../src/model/client-factory.ts";
import { createOpenAIClient, type OpenAIClientOptions } from "../../src/model/openai-client.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../../src/model/types.ts";
import {
  chatFixtureError,
  chatFixtureStream,
  chatMessages,
  chatTextStream,
  cutAfter,
  startFakeChatServer,
  type FakeChatServer,
} from "../support/fake-chat-server.ts";
import { httpError, startFakeResponsesServer } from "../support/fake-responses-server.ts";

const request: ModelRequest = {
  model: "gpt-4o",
  instructions: "You are valarmind.",
  input: [{ type: "message", role: "user", content: "Tell me: the capital of the country; the product name" }],
  tools: [
    {
      type: "function",
      name: "get_country",
      description: "The country",
      parameters: { type: "object", properties: {}, additionalProperties: false },
      strict: true,
    },
  ],
  prompt_cache_key: "session-abc",
  store: false,
};

let server: FakeChatServer;
let sleeps: number[];
beforeEach(() => {
  server = startFakeChatServer();
  sleeps = [];
});
afterEach(async () => {
  await server.close();
});

function client(options: Partial<OpenAIClientOptions> = {}): ModelClient {
  return createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL, wire: "chat", sleep: async (ms) => void sleeps.push(ms), ...options });
}

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

function lastError(events: ModelStreamEvent[]) {
  const last = events.at(-1);
  if (last?.type !== "error") throw new Error(`expected an error last, got ${JSON.stringify(last)}`);
  return last;
}

const completed = (events: ModelStreamEvent[]) => {
  const last = events.at(-1);
  if (last?.type !== "completed") throw new Error(`expected completed last, got ${JSON.stringify(last)}`);
  return last;
};

describe("streams over HTTP", () => {
  test("text: POST /v1/chat/completions, streamed with usage, the key as bearer; deltas add up to the text", async () => {
    server.enqueue(chatFixtureStream("openai_text_stream.sse"));
    const events = await collect(client().stream(request));
    const done = completed(events);
    expect(done.text.startsWith("**Holiday Name:** Harmony Day")).toBe(true);
    expect(events.filter((e) => e.type === "text_delta").map((e) => (e.type === "text_delta" ? e.delta : "")).join("")).toBe(done.text);
    expect(done.usage).toEqual({ input: 16, cached: 0, output: 300, reasoning: 0 });
    const sent = server.requests[0];
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers.authorization).toBe("Bearer sk-test");
    expect(sent?.body).toMatchObject({ model: "gpt-4o", stream: true, stream_options: { include_usage: true } });
    expect(chatMessages(sent?.body ?? {}).map((m) => [m.role, m.content])).toEqual([
      ["system", "You are valarmind."],
      ["user", "Tell me: the capital of the country; the product name"],
    ]);
    expect(sent?.body.tools).toEqual([
      { type: "function", function: { name: "get_country", description: "The country", parameters: { type: "object", properties: {}, additionalProperties: false }, strict: true } },
    ]);
    expect(server.notFound).toEqual([]);
  });

  test("parallel tool calls (recorded gpt-4o stream): both calls, in index order", async () => {
    server.enqueue(chatFixtureStream("openai_parallel_tool_calls_stream.sse"));
    const done = completed(await collect(client().stream(request)));
    expect(done.toolCalls).toEqual([
      { callId: "call_q2UyBRP7eXNTzAoR8lEhjc9Z", name: "get_country", arguments: "{}" },
      { callId: "call_b51ijcpFkDiTQG1bQzsrmtW5", name: "get_product_name", arguments: "{}" },
    ]);
  });

  test("reasoning_content deltas and cached tokens (recorded DeepSeek stream)", async () => {
    server.enqueue(chatFixtureStream("deepseek_reasoning_tool_call_stream.sse"));
    const events = await collect(client().stream(request));
    const reasoning = events.flatMap((e) => (e.type === "reasoning_delta" ? [e.delta] : [])).join("");
    expect(reasoning.startsWith("The user is asking for the weather in San Francisco.")).toBe(true);
    expect(completed(events).usage).toEqual({ input: 339, cached: 320, output: 83, reasoning: 39 });
  });

  test("reasoning deltas from OpenRouter, whose stream carries SSE comments", async () => {
    server.enqueue(chatFixtureStream("openrouter_reasoning_stream.sse"));
    const events = await collect(client().stream(request));
    expect(events.flatMap((e) => (e.type === "reasoning_delta" ? [e.delta] : [])).join("")).toBe("This is a simple arithmetic question. 2+2 equals 4.");
    expect(completed(events).text).toBe("2 + 2 = 4");
  });

  test("an error chunk inside a 200 stream (recorded OpenRouter) ends the stream with its message", async () => {
    server.enqueue(chatFixtureStream("openrouter_stream_error.sse"));
    const error = lastError(await collect(client().stream(request)));
    expect(error).toMatchObject({ kind: "failed", retryable: false });
    expect(error.message).toContain("Token limit reached");
  });

  test("a stream cut before finish_reason is stream_cut, not a short answer", async () => {
    server.enqueue(cutAfter(chatFixtureStream("openai_text_stream.sse"), 50));
    const events = await collect(client().stream(request));
    expect(events.some((e) => e.type === "completed")).toBe(false);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: "stream_cut", retryable: true });
    expect(error.message).toContain("no finish_reason");
  });
});

describe("HTTP errors (recorded bodies)", () => {
  test("400 from OpenAI: bad_request naming /chat/completions and the param, not retried", async () => {
    server.enqueue(chatFixtureError("openai_400_unsupported_value"));
    const error = lastError(await collect(client().stream(request)));
    expect(error).toMatchObject({ kind: "bad_request", status: 400, retryable: false });
    expect(error.message).toContain(`${server.baseURL}/chat/completions`);
    expect(error.message).toContain("(param: messages[0].role)");
    expect(error.message).toContain("Unsupported value: 'messages[0].role' does not support 'developer' with this model.");
    expect(server.requests).toHaveLength(1);
  });

  test("429 from OpenRouter: retried with backoff, then the answer", async () => {
    server.enqueue(chatFixtureError("openrouter_429"), chatTextStream("after the wait"));
    const events = await collect(client().stream(request));
    expect(events[0]).toMatchObject({ type: "retry", attempt: 1 });
    expect(completed(events).text).toBe("after the wait");
    expect(sleeps).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  test("429 every time: rate_limit after the retries, quoting the server", async () => {
    for (let i = 0; i < 4; i++) server.enqueue(chatFixtureError("openrouter_429"));
    const error = lastError(await collect(client().stream(request)));
    expect(error).toMatchObject({ kind: "rate_limit", status: 429 });
    expect(error.message).toContain("after 3 retries");
    expect(error.message).toContain("Provider returned error");
    expect(server.requests).toHaveLength(4);
  });

  test("500 from llama.cpp (a chat template refusing the conversation): server error with the template's words", async () => {
    for (let i = 0; i < 4; i++) server.enqueue(chatFixtureError("llamacpp_500_roles_alternate"));
    const error = lastError(await collect(client().stream(request)));
    expect(error).toMatchObject({ kind: "server", status: 500, retryable: true });
    expect(error.message).toContain(`HTTP 500 from ${server.baseURL}/chat/completions after 3 retries`);
    expect(error.message).toContain("Conversation roles must alternate");
  });

  test("404 model_not_found on the chat wire points at the model, not at the wire", async () => {
    server.enqueue(chatFixtureError("openai_404_model_not_found"));
    const error = lastError(await collect(client().stream(request)));
    expect(error).toMatchObject({ kind: "bad_request", status: 404 });
    expect(error.message).toContain("Check settings.model ('gpt-4o')");
    expect(error.message).not.toContain("wireApi");
  });
});

describe("the Responses wire against a chat-only server", () => {
  test("404 at /v1/responses says so and names the setting and the variable", async () => {
    const responses = createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL, sleep: async () => {} });
    const error = lastError(await collect(responses.stream(request)));
    expect(error).toMatchObject({ kind: "bad_request", status: 404, retryable: false });
    expect(error.message).toContain(`HTTP 404 from ${server.baseURL}/responses: the server at ${server.baseURL} has no /responses endpoint (File Not Found)`);
    expect(error.message).toContain('set "wireApi": "chat" in ~/.config/valarmind/config.json or VALARMIND_WIRE_API=chat');
    expect(server.notFound).toEqual(["POST /v1/responses"]);
  });

  test("a 404 that names the model keeps the model hint", async () => {
    await using responsesServer = startFakeResponsesServer();
    responsesServer.enqueue(httpError(404, { message: "The model `gpt-x` does not exist or you do not have access to it.", code: "model_not_found" }));
    const responses = createOpenAIClient({ apiKey: "sk-test", baseURL: responsesServer.baseURL });
    const error = lastError(await collect(responses.stream({ ...request, model: "gpt-x" })));
    expect(error.message).toContain("Check settings.model ('gpt-x')");
    expect(error.message).not.toContain("wireApi");
  });
});

describe("settings and token counts", () => {
  test("createModelClient with wireApi chat talks to /chat/completions (placeholder key for a local server)", async () => {
    server.enqueue(chatTextStream("hello"));
    const model = createModelClient({ settings: { baseURL: server.baseURL, wireApi: "chat" }, env: {} });
    expect(completed(await collect(model.stream(request))).text).toBe("hello");
    expect(server.requests[0]?.headers.authorization).toBe("Bearer valarmind-no-key");
  });

  test("countInputTokens has no chat endpoint: a ValarmindError that says to leave out --tokens api", async () => {
    const error = await client()
      .countInputTokens(request)
      .then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ValarmindError);
    expect(error instanceof ValarmindError && error.message).toContain('wireApi "chat"');
    expect(error instanceof ValarmindError && error.hint).toContain("--tokens api");
    expect(server.requests).toHaveLength(0);
  });
});
