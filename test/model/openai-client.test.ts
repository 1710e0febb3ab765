/**
 * The real client (official SDK inside) against the fake Responses server over real HTTP.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { ValarmindError } from "../../src/errors.ts";
import { createOpenAIClient, type OpenAIClientOptions } from "../../src/model/openai-client.ts";
import { mapStreamEvents } from "../../src/model/stream-events.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent } from "../../src/model/types.ts";
import {
  cutAfter,
  fixtureError,
  fixtureStream,
  gatedAfter,
  httpError,
  inputTokensResponse,
  parseSseData,
  readFixture,
  startFakeResponsesServer,
  textStream,
  type FakeResponsesServer,
} from "../support/fake-responses-server.ts";
import { FIXTURES_DIR } from "../support/sse-script.ts";

const request: ModelRequest = {
  model: "gpt-5.5",
  instructions: "You are valarmind.",
  input: [
    { type: "message", role: "user", content: "What is the capital of PotatoLand?" },
    { type: "function_call", call_id: "call_1", name: "get_capital", arguments: '{"country":"PotatoLand"}' },
    { type: "function_call_output", call_id: "call_1", output: "Potato City" },
  ],
  tools: [
    {
      type: "function",
      name: "get_capital",
      description: "Capital of a country",
      parameters: { type: "object", properties: { country: { type: "string" } }, required: ["country"], additionalProperties: false },
      strict: true,
    },
  ],
  prompt_cache_key: "session-abc",
  store: false,
  reasoning: { effort: "low", summary: "auto" },
};

let server: FakeResponsesServer;
let sleeps: number[];
beforeEach(() => {
  server = startFakeResponsesServer();
  sleeps = [];
});
afterEach(async () => {
  await server.close();
});

/** A client whose retry waits are recorded, not slept (the abort tests use the real sleep). */
function client(options: Partial<OpenAIClientOptions> = {}): ModelClient {
  return createOpenAIClient({
    apiKey: "sk-test",
    baseURL: server.baseURL,
    sleep: async (ms) => void sleeps.push(ms),
    ...options,
  });
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

describe("every recorded stream over real HTTP", () => {
  const streams = readdirSync(FIXTURES_DIR).filter((f) => f.endsWith(".sse"));
  test("the fixture set is the one documented", () => {
    expect(streams.length).toBe(10);
  });
  for (const name of streams) {
    test(`${name}: same events as the pure mapping of the file`, async () => {
      server.enqueue(fixtureStream(name));
      const events = await collect(client().stream(request));
      const expected = mapStreamEvents(parseSseData(readFixture(name)), { baseURL: server.baseURL, model: request.model });
      expect(events).toEqual(expected);
      expect(events.filter((e) => e.type === "completed" || e.type === "error")).toHaveLength(1);
    });
  }
});

describe("what is sent", () => {
  test("the request body is the ModelRequest plus stream:true, with the key as bearer token", async () => {
    server.enqueue(fixtureStream("text_stream.sse"));
    await collect(client().stream(request));
    const [sent] = server.requests;
    expect(sent?.body).toEqual({ ...request, stream: true });
    expect(sent?.body.store).toBe(false);
    expect(sent?.headers.authorization).toBe("Bearer sk-test");
  });

  test("countInputTokens posts to /responses/input_tokens and returns the count", async () => {
    expect(await client().countInputTokens(request)).toBe(16);
    server.enqueueInputTokens(inputTokensResponse(1234));
    expect(await client().countInputTokens(request)).toBe(1234);
    const body = server.tokenCountRequests[0]?.body;
    expect(body).toMatchObject({ model: "gpt-5.5", instructions: request.instructions, input: request.input, tools: request.tools });
    expect(body).not.toHaveProperty("store");
    expect(body).not.toHaveProperty("stream");
  });

  test("countInputTokens failures throw a ValarmindError that names the endpoint", async () => {
    server.enqueueInputTokens(fixtureError("error_401", { status: 401 }));
    const failure = await client()
      .countInputTokens(request)
      .then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(ValarmindError);
    expect(failure instanceof Error && failure.message).toContain(`HTTP 401 from ${server.baseURL}/responses/input_tokens`);
  });
});

describe("usage", () => {
  test("input, cached, output and reasoning tokens reach the completed event", async () => {
    server.enqueue(textStream("Done.", { usage: { input_tokens: 4096, cached_tokens: 3968, output_tokens: 300, reasoning_tokens: 256 } }));
    const events = await collect(client().stream(request));
    expect(events.at(-1)).toMatchObject({ type: "completed", usage: { input: 4096, cached: 3968, output: 300, reasoning: 256 } });
  });

  test("response.incomplete and keepalive events in a built stream", async () => {
    server.enqueue(textStream("Half of it", { status: "incomplete", incompleteReason: "max_output_tokens", keepaliveEvery: 2 }));
    const events = await collect(client().stream(request));
    expect(events.at(-1)).toMatchObject({ type: "completed", status: "incomplete", incompleteReason: "max_output_tokens", text: "Half of it" });
    expect(server.requests[0]).toBeDefined();
  });
});

describe("HTTP errors and retries", () => {
  test("429 with retry-after: a retry event with the server's delay, then the answer", async () => {
    server.enqueue(fixtureError("error_429", { headers: { "retry-after": "2" } }), fixtureStream("text_stream.sse"));
    const events = await collect(client().stream(request));
    expect(events[0]).toEqual({ type: "retry", attempt: 1, delayMs: 2000, reason: "HTTP 429 rate_limit_exceeded (server asked to wait 2s)" });
    expect(sleeps).toEqual([2000]);
    expect(events.at(-1)).toMatchObject({ type: "completed", text: "The capital of PotatoLand is **Potato City**." });
    expect(server.requests).toHaveLength(2);
  });

  test("retry-after-ms wins over retry-after", async () => {
    server.enqueue(fixtureError("error_429", { headers: { "retry-after-ms": "250", "retry-after": "7" } }), textStream("ok"));
    await collect(client().stream(request));
    expect(sleeps).toEqual([250]);
  });

  test("429 until retries run out: rate_limit error that says how often it tried", async () => {
    for (let i = 0; i < 3; i++) server.enqueue(fixtureError("error_429", { headers: { "retry-after": "1" } }));
    const events = await collect(client({ maxRetries: 2 }).stream(request));
    expect(events.filter((e) => e.type === "retry").map((e) => e.type === "retry" && e.attempt)).toEqual([1, 2]);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: "rate_limit", status: 429, retryable: true });
    expect(error.message).toContain("after 2 retries");
    expect(error.message).toContain("Rate limit reached for gpt-5.1");
  });

  test("429 insufficient_quota is not retried", async () => {
    server.enqueue(fixtureError("error_429_insufficient_quota", { status: 429 }), textStream("never"));
    const events = await collect(client().stream(request));
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: "quota", status: 429, retryable: false });
    expect(lastError(events).message).toContain("billing");
    expect(server.requests).toHaveLength(1);
  });

  test("a server asking to wait longer than 60s is reported, not waited for", async () => {
    server.enqueue(fixtureError("error_429", { headers: { "retry-after": "3600" } }));
    const events = await collect(client().stream(request));
    expect(events).toHaveLength(1);
    expect(lastError(events).message).toContain("asks to wait 60 min");
  });

  test("401: auth error pointing at OPENAI_API_KEY, not retried", async () => {
    server.enqueue(fixtureError("error_401", { status: 401 }));
    const events = await collect(client().stream(request));
    expect(events).toHaveLength(1);
    const error = lastError(events);
    expect(error).toMatchObject({ kind: "auth", status: 401, retryable: false });
    expect(error.message).toContain("OPENAI_API_KEY");
    expect(error.message).toContain("Incorrect API key provided");
  });

  test("401 with a placeholder key says no key was set", async () => {
    server.enqueue(fixtureError("error_401", { status: 401 }));
    const events = await collect(client({ keyIsPlaceholder: true }).stream(request));
    expect(lastError(events).message).toContain("OPENAI_API_KEY is not set");
  });

  test("500 is retried with backoff, then succeeds", async () => {
    server.enqueue(fixtureError("error_500", { status: 500 }), fixtureStream("text_stream.sse"));
    const events = await collect(client({ retry: { random: () => 0 } }).stream(request));
    expect(events[0]).toEqual({ type: "retry", attempt: 1, delayMs: 500, reason: "HTTP 500 (backoff)" });
    expect(events.at(-1)).toMatchObject({ type: "completed" });
  });

  test("500 every time: retried 3 times with growing backoff, then a server error", async () => {
    for (let i = 0; i < 4; i++) server.enqueue(fixtureError("error_500", { status: 500 }));
    const events = await collect(client({ retry: { random: () => 0 } }).stream(request));
    expect(sleeps).toEqual([500, 1000, 2000]);
    expect(lastError(events)).toMatchObject({ kind: "server", status: 500, retryable: true });
    expect(lastError(events).message).toContain("after 3 retries");
    expect(server.requests).toHaveLength(4);
  });

  test("context_length_exceeded as HTTP 400: its own kind, not retried", async () => {
    server.enqueue(fixtureError("context_length_400"));
    const events = await collect(client().stream(request));
    expect(events).toEqual([expect.objectContaining({ type: "error", kind: "context_length_exceeded", status: 400, retryable: false })]);
  });

  test("context_length_exceeded inside a 200 stream", async () => {
    server.enqueue(fixtureStream("failed_event_context_length.sse"));
    const events = await collect(client().stream(request));
    expect(events).toEqual([expect.objectContaining({ type: "error", kind: "context_length_exceeded", retryable: false })]);
  });
});

describe("connection problems", () => {
  test("no API key: no_api_key error, no request", async () => {
    const events = await collect(client({ apiKey: undefined }).stream(request));
    expect(events).toEqual([
      {
        type: "error",
        kind: "no_api_key",
        message: "OPENAI_API_KEY is not set; export it or set OPENAI_BASE_URL to a local Responses server",
        retryable: false,
      },
    ]);
    expect(server.requests).toHaveLength(0);
  });

  test("connection refused names the base URL and is not retried", async () => {
    const baseURL = server.baseURL;
    await server.close();
    const events = await collect(client({ baseURL }).stream(request));
    expect(events).toHaveLength(1);
    expect(lastError(events)).toMatchObject({ kind: "connection", retryable: false });
    expect(lastError(events).message).toContain(`Could not reach ${baseURL} (connection refused)`);
    expect(sleeps).toEqual([]);
  });

  test("a stream that ends without its terminal event: text so far, then stream_cut", async () => {
    server.enqueue(cutAfter(fixtureStream("text_stream.sse"), 8));
    const events = await collect(client().stream(request));
    const text = events.flatMap((e) => (e.type === "text_delta" ? [e.delta] : [])).join("");
    expect(text).toBe("The capital of Potato");
    expect(lastError(events)).toMatchObject({ kind: "stream_cut", retryable: true });
  });

  test("a connection reset mid-stream: stream_cut, not retried", async () => {
    const { response, gate } = gatedAfter(cutAfter(fixtureStream("text_stream.sse"), 6, "reset"), 6);
    server.enqueue(response);
    const events: ModelStreamEvent[] = [];
    for await (const event of client().stream(request)) {
      events.push(event);
      if (events.filter((e) => e.type === "text_delta").length === 2) gate.release();
    }
    expect(events.map((e) => e.type)).toEqual(["text_delta", "text_delta", "error"]);
    expect(lastError(events).kind).toBe("stream_cut");
    expect(server.requests).toHaveLength(1);
  });
});

describe("hung servers and leaky messages", () => {
  test("a stream with no event for idleTimeoutMs is given up as stream_cut", async () => {
    const { response } = gatedAfter(fixtureStream("text_stream.sse"), 6);
    server.enqueue(response);
    const events = await collect(client({ idleTimeoutMs: 50 }).stream(request));
    expect(events.filter((e) => e.type === "text_delta")).toHaveLength(2);
    expect(lastError(events)).toMatchObject({ kind: "stream_cut" });
    expect(lastError(events).message).toContain("no event for 50ms");
    expect(await server.outcome(0)).toBe("client_gone");
  });

  test("a server that echoes the key does not get it into the error message", async () => {
    server.enqueue(httpError(401, { message: "key sk-secret-999 is not valid here", code: "invalid_api_key" }));
    const events = await collect(client({ apiKey: "sk-secret-999" }).stream(request));
    expect(lastError(events).message).toContain("key [redacted key] is not valid here");
    expect(JSON.stringify(events)).not.toContain("sk-secret-999");
  });

  test("a connection reset before the headers is retried, with a short reason", async () => {
    server.enqueue(cutAfter(fixtureStream("text_stream.sse"), 0, "reset"), textStream("second try"));
    const events = await collect(client().stream(request));
    expect(events[0]).toMatchObject({ type: "retry", attempt: 1 });
    expect(events[0]?.type === "retry" && events[0].reason).not.toContain("verbose");
    expect(events.at(-1)).toMatchObject({ type: "completed", text: "second try" });
  });
});

describe("abort", () => {
  test("aborting mid-stream ends with an aborted error and nothing after it", async () => {
    const { response, gate } = gatedAfter(fixtureStream("text_stream.sse"), 6);
    server.enqueue(response);
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    for await (const event of client().stream(request, controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") {
        await gate.reached;
        controller.abort();
      }
    }
    expect(events).toEqual([
      { type: "text_delta", delta: "The" },
      { type: "error", kind: "aborted", message: "The request was cancelled before the model finished.", retryable: false },
    ]);
    expect(await server.outcome(0)).toBe("client_gone");
  });

  test("an already aborted signal sends nothing", async () => {
    const events = await collect(client().stream(request, AbortSignal.abort()));
    expect(events).toEqual([expect.objectContaining({ type: "error", kind: "aborted" })]);
    expect(server.requests).toHaveLength(0);
  });

  test("aborting during a retry wait stops at once (real sleep, 30s asked)", async () => {
    server.enqueue(fixtureError("error_429", { headers: { "retry-after": "30" } }));
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    const real = createOpenAIClient({ apiKey: "sk-test", baseURL: server.baseURL });
    for await (const event of real.stream(request, controller.signal)) {
      events.push(event);
      if (event.type === "retry") controller.abort();
    }
    expect(events.map((e) => (e.type === "error" ? e.kind : e.type))).toEqual(["retry", "aborted"]);
    expect(server.requests).toHaveLength(1);
  });

  test("a consumer that stops early closes the HTTP stream (the paused server sees the client leave)", async () => {
    const { response } = gatedAfter(fixtureStream("text_stream.sse"), 6);
    server.enqueue(response, textStream("next"));
    for await (const event of client().stream(request)) {
      if (event.type === "text_delta") break;
    }
    expect(await server.outcome(0)).toBe("client_gone");
    const events = await collect(client().stream(request));
    expect(events.at(-1)).toMatchObject({ type: "completed", text: "next" });
  });
});
