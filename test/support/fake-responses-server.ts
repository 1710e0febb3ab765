/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI Responses wire format, for tests.
 *
 *   const server = startFakeResponsesServer();            // port 0: a free port
 *   server.enqueue(fixtureStream("text_stream.sse"));     // answers the next POST /v1/responses
 *   server.enqueue(fixtureError("error_429", { headers: { "retry-after-ms": "0" } }), textStream("hi"));
 *   server.setResponder((body, index) => textStream(`echo ${lastUserText(body)}`));  // when the queue is empty
 *   // point the client at server.baseURL ("http://127.0.0.1:PORT/v1"), any API key
 *   server.requests[0].body.instructions                  // what the agent sent
 *   await server.close();
 *
 * Endpoints: `POST /v1/responses` (SSE when `stream: true`; otherwise the JSON response taken from
 * the scripted stream's terminal event, or the scripted JSON), `POST /v1/responses/input_tokens`
 * (`enqueueInputTokens`, default: the recorded `input_tokens.json`). Streams are written frame by
 * frame with real framing (`event: X\ndata: {...}\n\n`); recorded fixtures byte-for-byte.
 * Answers come from the queue first, then the responder; with neither, the server answers HTTP 400
 * `fake_script_exhausted` (never retried by the client) and notes it in `server.problems`.
 * Pauses use gates (`gatedAfter`), never timers; a client abort ends a paused stream.
 */
import {
  fixtureJson,
  type FakeResponse,
  type JsonResponse,
  type StreamResponse,
} from "./fake-responses.ts";
import { parseSseData, splitSseFrames } from "./sse-script.ts";

export * from "./fake-responses.ts";
export { buildFailedStream, buildResponseStream, parseSse, parseSseData, readFixture } from "./sse-script.ts";
export type { FakeToolCall, ResponseStreamSpec } from "./sse-script.ts";
export * from "./request-view.ts";

export interface RecordedRequest {
  /** 0-based position among requests to the same endpoint. */
  index: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Parsed JSON body ({} when it was not JSON). */
  body: Record<string, unknown>;
  raw: string;
  stream: boolean;
}

export type Responder = (
  body: Record<string, unknown>,
  index: number,
  request: RecordedRequest,
) => FakeResponse | Promise<FakeResponse>;

/** How the server's answer to one request ended. */
export type AnswerOutcome = "json" | "completed" | "cut" | "client_gone";

export interface FakeResponsesServerOptions {
  /** Answers for POST /v1/responses, in order. */
  script?: FakeResponse[];
  responder?: Responder;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Called with every recorded request (both endpoints), e.g. to log it. */
  onRequest?: (request: RecordedRequest) => void;
}

export interface FakeResponsesServer extends AsyncDisposable {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** http://127.0.0.1:PORT/v1 — what OPENAI_BASE_URL / baseURL should be. */
  readonly baseURL: string;
  readonly port: number;
  /** Every POST /v1/responses body received, in order. */
  readonly requests: RecordedRequest[];
  /** Every POST /v1/responses/input_tokens body received. */
  readonly tokenCountRequests: RecordedRequest[];
  /** Things that went wrong on the server side (script exhausted, responder threw, bad path). */
  readonly problems: string[];
  enqueue(...responses: FakeResponse[]): void;
  enqueueInputTokens(...responses: FakeResponse[]): void;
  setResponder(responder: Responder | undefined): void;
  /** Scripted /v1/responses answers not yet served. */
  pending(): number;
  /** Resolves when the answer to /v1/responses request `index` has ended, telling how. */
  outcome(index: number): Promise<AnswerOutcome>;
  close(): Promise<void>;
}

const encoder = new TextEncoder();

function requestId(): string {
  return `req_${crypto.randomUUID().replaceAll("-", "")}`;
}

function errorBody(message: string, code: string): string {
  return JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } }, null, 2);
}

/** Also used by fake-chat-server.ts. */
export function sendJson(response: JsonResponse): Response {
  return new Response(response.body, {
    status: response.status,
    headers: { "content-type": "application/json", "x-request-id": requestId(), ...response.headers },
  });
}

/** The JSON a non-stream request gets for a scripted stream: the response of its terminal event. */
function finalResponseJson(stream: StreamResponse): Response {
  const events = parseSseData(stream.body) as Array<{ type?: string; response?: unknown }>;
  const terminal = events.find((e) => e.type === "response.completed" || e.type === "response.incomplete" || e.type === "response.failed");
  if (!terminal) {
    return sendJson({ kind: "json", status: 500, body: errorBody(`fake server: ${stream.label} has no terminal event`, "fake_script_invalid"), label: "" });
  }
  return sendJson({ kind: "json", status: 200, body: JSON.stringify(terminal.response), label: "" });
}

/** Writes a scripted stream frame by frame, honouring its gates and cut (also used by fake-chat-server.ts). */
export function sendStream(
  response: StreamResponse,
  clientGone: AbortSignal,
  closing: Promise<void>,
  ended: (outcome: AnswerOutcome) => void,
): Response {
  const frames = splitSseFrames(response.body);
  const gates = [...(response.gates ?? [])].sort((a, b) => a.afterEvents - b.afterEvents);
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const gate = gates[0];
      if (gate && gate.afterEvents <= next) {
        gates.shift();
        gate.gate.markReached();
        const gone = new Promise<void>((resolve) => clientGone.addEventListener("abort", () => resolve(), { once: true }));
        await Promise.race([gate.gate.released, gone, closing]);
        if (clientGone.aborted) {
          ended("client_gone");
          return controller.close();
        }
      }
      const cut = response.cut;
      if (cut && next >= cut.afterEvents) {
        ended("cut");
        if (cut.mode === "eof") return controller.close();
        return controller.error(new Error(`fake server: ${response.label} (on purpose)`));
      }
      const frame = frames[next];
      if (frame === undefined) {
        ended("completed");
        return controller.close();
      }
      next++;
      if (response.frameDelayMs) await Bun.sleep(response.frameDelayMs);
      controller.enqueue(encoder.encode(frame));
    },
    cancel() {
      ended("client_gone");
    },
  });
  return new Response(body, {
    status: response.status ?? 200,
    headers: { "content-type": "text/event-stream; charset=utf-8", "x-request-id": requestId(), ...response.headers },
  });
}

/** Reads a request's body (JSON object, else `{}` and a problem noted), appends it to `into`. */
export async function recordRequest(request: Request, path: string, into: RecordedRequest[], problems: string[]): Promise<RecordedRequest> {
  const raw = await request.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    problems.push(`${path} #${into.length}: body is not JSON`);
  }
  const headers: Record<string, string> = {};
  request.headers.forEach((value, key) => (headers[key] = value));
  const recorded = { index: into.length, method: request.method, path, headers, body, raw, stream: body.stream === true };
  into.push(recorded);
  return recorded;
}

export function startFakeResponsesServer(options: FakeResponsesServerOptions = {}): FakeResponsesServer {
  const queue: FakeResponse[] = [...(options.script ?? [])];
  const tokenQueue: FakeResponse[] = [];
  let responder = options.responder;
  const requests: RecordedRequest[] = [];
  const tokenCountRequests: RecordedRequest[] = [];
  const problems: string[] = [];
  const outcomes = new Map<number, { promise: Promise<AnswerOutcome>; resolve: (o: AnswerOutcome) => void }>();
  const outcomeSlot = (index: number) => {
    let slot = outcomes.get(index);
    if (!slot) {
      let resolve!: (o: AnswerOutcome) => void;
      const promise = new Promise<AnswerOutcome>((r) => (resolve = r));
      slot = { promise, resolve };
      outcomes.set(index, slot);
    }
    return slot;
  };
  let closeAll!: () => void;
  const closing = new Promise<void>((resolve) => (closeAll = resolve));

  async function record(request: Request, path: string, into: RecordedRequest[]): Promise<RecordedRequest> {
    const recorded = await recordRequest(request, path, into, problems);
    options.onRequest?.(recorded);
    return recorded;
  }

  function exhausted(path: string, index: number): Response {
    const message = `fake server: no scripted response left for ${path} request #${index} (enqueue one or set a responder)`;
    problems.push(message);
    return sendJson({ kind: "json", status: 400, body: errorBody(message, "fake_script_exhausted"), label: "" });
  }

  function serve(answer: FakeResponse, recorded: RecordedRequest, clientGone: AbortSignal, ended = (_: AnswerOutcome) => {}): Response {
    if (answer.kind === "stream" && recorded.stream) return sendStream(answer, clientGone, closing, ended);
    ended("json");
    return answer.kind === "json" ? sendJson(answer) : finalResponseJson(answer);
  }

  async function handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/v1/responses") {
      const recorded = await record(request, path, requests);
      let answer = queue.shift();
      if (!answer && responder) {
        try {
          answer = await responder(recorded.body, recorded.index, recorded);
        } catch (error) {
          const message = `fake server: responder threw on request #${recorded.index}: ${String(error)}`;
          problems.push(message);
          outcomeSlot(recorded.index).resolve("json");
          return sendJson({ kind: "json", status: 500, body: errorBody(message, "fake_responder_failed"), headers: { "x-should-retry": "false" }, label: "" });
        }
      }
      const ended = outcomeSlot(recorded.index).resolve;
      if (answer) return serve(answer, recorded, request.signal, ended);
      ended("json");
      return exhausted(path, recorded.index);
    }
    if (request.method === "POST" && path === "/v1/responses/input_tokens") {
      const recorded = await record(request, path, tokenCountRequests);
      return serve(tokenQueue.shift() ?? fixtureJson("input_tokens.json"), recorded, request.signal);
    }
    problems.push(`unexpected ${request.method} ${path}`);
    return sendJson({ kind: "json", status: 404, body: errorBody(`fake server: no route ${request.method} ${path}`, "not_found"), label: "" });
  }

  // development: false keeps Bun from printing the deliberate connection resets of cut streams.
  // reusePort: false, so a second server on a taken port fails instead of sharing its requests.
  const server = Bun.serve({ hostname: "127.0.0.1", port: options.port ?? 0, reusePort: false, development: false, fetch: handle });
  const port = server.port ?? 0;
  const url = `http://127.0.0.1:${port}`;

  const api: FakeResponsesServer = {
    url,
    baseURL: `${url}/v1`,
    port,
    requests,
    tokenCountRequests,
    problems,
    enqueue: (...responses) => void queue.push(...responses),
    enqueueInputTokens: (...responses) => void tokenQueue.push(...responses),
    setResponder: (next) => void (responder = next),
    pending: () => queue.length,
    outcome: (index) => outcomeSlot(index).promise,
    async close() {
      closeAll();
      await server.stop(true);
    },
    [Symbol.asyncDispose]: () => api.close(),
  };
  return api;
}
