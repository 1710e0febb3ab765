/**
 * The one module that imports `openai`, lazily, so the CLI starts fast. Streams a Responses API
 * request (or, with `wire: "chat"`, the same request translated to Chat Completions by
 * chat-request.ts) and turns every outcome into `ModelStreamEvent`s; it never throws from `stream`.
 *
 * Retries are ours, not the SDK's (`maxRetries: 0` there): each wait is announced as a `retry`
 * event and the abort signal cuts it short (docs/adr/0020-own-retries-not-sdk.md). Only failures
 * before the stream starts are retried; once events flowed, a failure is reported, not replayed.
 */
import { oneLine } from "../one-line.ts";
import type OpenAI from "openai";
import { describeError, ValarmindError } from "../errors.ts";
import {
  abortedError,
  connectionError,
  httpError,
  redirectError,
  isImageRefusal,
  noApiKeyError,
  toApiErrorPayload,
  unexpectedError,
  waitTooLongError,
  type ErrorContext,
  type ModelErrorEvent,
} from "./model-errors.ts";
import { sseErrorFieldFetch } from "./sse-error-field.ts";
import { redirectAwareFetch } from "./redirect-fetch.ts";
import { withoutCredentials } from "../secrets/url-credentials.ts";
import {
  abortableSleep,
  decideRetry,
  describeDelay,
  DEFAULT_RETRY_TUNING,
  type RetryInput,
  type RetryTuning,
} from "./retry-policy.ts";
import { toChatRequest } from "./chat-request.ts";
import { toResponsesInput } from "./responses-request.ts";
import { createChatStreamMapper } from "./chat-stream-events.ts";
import { createStreamMapper } from "./stream-events.ts";
import type { ModelClient, ModelRequest, ModelStreamEvent, WireApi } from "./types.ts";

type Sdk = typeof import("openai");

export interface OpenAIClientOptions {
  /** Undefined or empty: every call fails with `no_api_key`. */
  apiKey: string | undefined;
  /** e.g. https://api.openai.com/v1 or http://127.0.0.1:8080/v1 */
  baseURL: string;
  /** Our retries after the first attempt (default 3). */
  maxRetries?: number;
  /** Per-request timeout of the SDK (default 10 minutes). */
  timeoutMs?: number;
  /** A stream with no event for this long is given up as `stream_cut` (default 5 minutes). */
  idleTimeoutMs?: number;
  /** The key is a stand-in for a local server (changes the 401 message). */
  keyIsPlaceholder?: boolean;
  /** `POST /responses` (default) or `POST /chat/completions` (docs/adr/0075-chat-completions-wire.md). */
  wire?: WireApi;
  retry?: Partial<RetryTuning>;
  /** Waits between retries; injectable so tests need not sleep. Must resolve early on abort. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

interface Loaded {
  sdk: Sdk;
  client: OpenAI;
}

/** A failed attempt: what decides a retry, and the error to report if we stop. */
interface Failure {
  retry: RetryInput;
  report: (retries: number) => ModelErrorEvent;
  label: string;
}

function causeChain(error: unknown): Array<{ code?: unknown; message?: unknown }> {
  const chain: Array<{ code?: unknown; message?: unknown }> = [];
  let current: unknown = error;
  while (typeof current === "object" && current !== null && chain.length < 5) {
    chain.push(current as { code?: unknown; message?: unknown });
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function isRefused(error: unknown): boolean {
  return causeChain(error).some((e) => e.code === "ECONNREFUSED" || e.code === "ConnectionRefused");
}

function innermostMessage(error: unknown): string {
  const chain = causeChain(error);
  const last = chain[chain.length - 1];
  const message = typeof last?.message === "string" ? last.message : String(error);
  // Bun appends advice about its own fetch options, which means nothing to a valarmind user.
  return message.replace(/\s*For more information, pass `verbose: true`.*$/s, "");
}

function truncate(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function createOpenAIClient(options: OpenAIClientOptions): ModelClient {
  const baseURL = options.baseURL.replace(/\/+$/, "");
  const apiKey = options.apiKey && options.apiKey.trim() !== "" ? options.apiKey : undefined;
  const tuning: RetryTuning = {
    ...DEFAULT_RETRY_TUNING,
    ...options.retry,
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
  };
  const sleep = options.sleep ?? abortableSleep;
  const idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
  const wire: WireApi = options.wire ?? "responses";
  // Messages name the server; a password in the URL (a proxy behind basic auth) must not reach the terminal or the transcript.
  const shownBaseURL = withoutCredentials(baseURL);
  const ctxFor = (model: string, retries = 0): ErrorContext => ({
    baseURL: shownBaseURL,
    model,
    retries,
    keyIsPlaceholder: options.keyIsPlaceholder ?? false,
    wire,
  });
  /** Opens the stream on the configured wire; the SDK throws HTTP and transport failures. */
  const openStream = (client: OpenAI, request: ModelRequest, signal: AbortSignal): Promise<AsyncIterable<unknown>> =>
    wire === "chat"
      ? client.chat.completions.create(toChatRequest(request), { signal })
      : client.responses.create({ ...request, input: toResponsesInput(request.input), stream: true }, { signal });

  let loading: Promise<Loaded> | undefined;
  const load = (key: string): Promise<Loaded> =>
    (loading ??= import("openai").then((sdk) => ({
      sdk,
      // logLevel off: the SDK would print unparsable stream lines to the console (above the REPL, into chat -p's stderr).
      client: new sdk.default({ apiKey: key, baseURL, maxRetries: 0, timeout: options.timeoutMs ?? 600_000, logLevel: "off", fetch: sseErrorFieldFetch(redirectAwareFetch()) }),
    })));

  function classify(error: unknown, sdk: Sdk, model: string, endpoint?: string): Failure {
    if (error instanceof sdk.APIConnectionError) {
      const refused = isRefused(error);
      const timedOut = error instanceof sdk.APIConnectionTimeoutError;
      const cause = timedOut ? "request timed out" : truncate(innermostMessage(error));
      return {
        retry: { transient: !refused },
        report: (retries) => connectionError(cause, refused, ctxFor(model, retries)),
        label: refused ? "connection refused" : cause,
      };
    }
    if (error instanceof sdk.APIError && typeof error.status === "number" && error.status >= 300 && error.status < 400) {
      const status = error.status;
      const location = error.headers?.get("location") ?? undefined;
      return { retry: {}, report: (retries) => redirectError(status, location, { ...ctxFor(model, retries), endpoint }), label: `HTTP ${status}` };
    }
    if (error instanceof sdk.APIError && typeof error.status === "number") {
      const status = error.status;
      const payload = toApiErrorPayload(error.error);
      payload.message ??= truncate(error.message);
      return {
        // An image the model cannot read fails the same way every time, whatever the status says.
        retry: isImageRefusal(payload) ? {} : { status, code: payload.code, headers: error.headers, ...(payload.message !== undefined && { message: payload.message }) },
        report: (retries) => httpError(status, payload, { ...ctxFor(model, retries), endpoint }),
        label: `HTTP ${status}${payload.code ? ` ${payload.code}` : ""}`,
      };
    }
    const what = describeError(error);
    return { retry: {}, report: (retries) => unexpectedError(truncate(what), ctxFor(model, retries)), label: what };
  }

  /** Error messages quote servers; a server that echoes the key must not put it on screen or disk. */
  async function* stream(request: ModelRequest, signal?: AbortSignal): AsyncGenerator<ModelStreamEvent> {
    for await (const event of streamWithRetries(request, signal)) {
      if (event.type !== "error") {
        yield event;
        continue;
      }
      // The SDK's own messages may quote the URL too, credentials included.
      const message = withoutCredentials(apiKey ? event.message.replaceAll(apiKey, "[redacted key]") : event.message);
      yield message === event.message ? event : { ...event, message };
    }
  }

  async function* streamWithRetries(request: ModelRequest, signal?: AbortSignal): AsyncGenerator<ModelStreamEvent> {
    if (!apiKey) {
      yield noApiKeyError();
      return;
    }
    // Our own controller also ends the HTTP request when the consumer stops iterating early.
    const local = new AbortController();
    const combined = signal ? AbortSignal.any([signal, local.signal]) : local.signal;
    try {
      let loaded: Loaded;
      try {
        loaded = await load(apiKey);
      } catch (error) {
        yield unexpectedError(`could not load the openai package (${String(error)})`, ctxFor(request.model));
        return;
      }
      const { sdk, client } = loaded;
      for (let retries = 0; ; retries++) {
        if (combined.aborted) return yield abortedError();
        let events: AsyncIterable<unknown>;
        // The idle timeout covers the wait for the response headers too: a server that accepts the
        // connection and never answers is given up like one that stops mid-stream.
        const attempt = new AbortController();
        let noHeaders = false;
        const headerTimer = setTimeout(() => {
          noHeaders = true;
          attempt.abort();
        }, idleTimeoutMs);
        try {
          events = await openStream(client, request, AbortSignal.any([combined, attempt.signal]));
        } catch (error) {
          if (combined.aborted) return yield abortedError();
          const failure: Failure = noHeaders
            ? { retry: { transient: true }, report: (retries) => connectionError(`no response for ${describeDelay(idleTimeoutMs)}`, false, ctxFor(request.model, retries)), label: "no response" }
            : classify(error, sdk, request.model);
          const decision = decideRetry(failure.retry, retries + 1, tuning);
          if (!decision.retry) {
            const final = failure.report(retries);
            yield decision.reason === "wait_too_long" && decision.delayMs !== undefined
              ? waitTooLongError(final, decision.delayMs)
              : final;
            return;
          }
          const why = decision.serverAsked ? `server asked to wait ${describeDelay(decision.delayMs)}` : "backoff";
          yield { type: "retry", attempt: retries + 1, delayMs: decision.delayMs, reason: `${failure.label} (${why})` };
          await sleep(decision.delayMs, combined);
          continue;
        } finally {
          clearTimeout(headerTimer);
        }
        // A server failure reported inside the stream before any output (response.failed with
        // server_error) is retried like an HTTP 500: nothing was shown yet, so nothing is shown
        // twice. (An in-stream rate limit is mostly "request too large": retrying cannot help.)
        let shown = false;
        let failed: Extract<ModelStreamEvent, { type: "error" }> | undefined;
        for await (const event of consume(events, sdk, request.model, combined, () => local.abort())) {
          if (event.type === "error" && event.kind === "server" && event.retryable && !shown && !combined.aborted) {
            failed = event;
            break;
          }
          if (event.type !== "retry") shown = true;
          yield event;
        }
        if (!failed) return;
        const decision = decideRetry({ transient: true }, retries + 1, tuning);
        if (!decision.retry) return yield failed;
        yield { type: "retry", attempt: retries + 1, delayMs: decision.delayMs, reason: `${failed.kind} in the stream before any output (backoff)` };
        await sleep(decision.delayMs, combined);
      }
    } finally {
      local.abort();
    }
  }

  async function* consume(
    events: AsyncIterable<unknown>,
    sdk: Sdk,
    model: string,
    signal: AbortSignal,
    stop: () => void,
  ): AsyncGenerator<ModelStreamEvent> {
    const mapper = wire === "chat" ? createChatStreamMapper(ctxFor(model)) : createStreamMapper(ctxFor(model));
    let cause: string | undefined;
    let idle = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const kick = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        idle = true;
        stop();
      }, idleTimeoutMs);
    };
    try {
      kick();
      for await (const raw of events) {
        kick();
        yield* mapper.push(raw);
        if (mapper.finished) return;
      }
    } catch (error) {
      const inStreamError =
        error instanceof sdk.APIError && error.status === undefined && !(error instanceof sdk.APIConnectionError);
      // The SDK throws on an SSE `error` event; hand its payload back to the mapper as that event.
      if (inStreamError && !signal.aborted) {
        yield* mapper.push({ type: "error", error: error.error ?? { message: error.message } });
        // A payload the mapper could not read still ends the stream with an error event.
        if (!mapper.finished) yield* mapper.end(truncate(error.message));
        return;
      }
      cause = truncate(innermostMessage(error));
    } finally {
      clearTimeout(timer);
    }
    if (idle) return yield* mapper.end(`no event for ${describeDelay(idleTimeoutMs)}`);
    // The SDK ends quietly when aborted; an unfinished stream then means the user cancelled.
    if (signal.aborted && !mapper.finished) return yield abortedError();
    yield* mapper.end(cause);
  }

  async function countInputTokens(request: ModelRequest, signal?: AbortSignal): Promise<number> {
    if (wire === "chat") {
      throw new ValarmindError(`${shownBaseURL} is used over Chat Completions (wireApi "chat"), which has no endpoint that counts input tokens`, {
        hint: "Leave out --tokens api: the manifest's exact local counts need no server.",
      });
    }
    if (!apiKey) throw new ValarmindError(noApiKeyError().message);
    const { sdk, client } = await load(apiKey);
    const body = {
      model: request.model,
      instructions: request.instructions,
      input: toResponsesInput(request.input),
      tools: request.tools,
      ...(request.reasoning ? { reasoning: request.reasoning } : {}),
    };
    for (let retries = 0; ; retries++) {
      try {
        const result: unknown = await client.responses.inputTokens.count(body, signal ? { signal } : {});
        const count = typeof result === "object" && result !== null && "input_tokens" in result ? result.input_tokens : undefined;
        // A server's answer like any other: a count that is no count is not shown as one.
        if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 0) {
          const got = count === undefined ? "no input_tokens" : `input_tokens ${oneLine(JSON.stringify(count) ?? String(count), 40)}`;
          throw new ValarmindError(`${shownBaseURL}/responses/input_tokens answered ${got}, not a count of tokens`, {
            hint: "The server does not count input tokens as the Responses API does; leave out --tokens api (the manifest's local counts are exact o200k counts).",
          });
        }
        return count;
      } catch (error) {
        if (signal?.aborted) throw new ValarmindError(abortedError().message, { cause: error });
        const failure = classify(error, sdk, request.model, "/responses/input_tokens");
        const decision = decideRetry(failure.retry, retries + 1, tuning);
        if (!decision.retry) throw new ValarmindError(failure.report(retries).message, { cause: error });
        await sleep(decision.delayMs, signal ?? new AbortController().signal);
      }
    }
  }

  return { stream, countInputTokens };
}
