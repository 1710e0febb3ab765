/**
 * Every model failure becomes one `error` event whose message says what happened, against which
 * server, and what to do next. Pure: no I/O, no SDK types (the client narrows SDK errors into the
 * plain shapes below first).
 */
import { userConfigFileShown } from "../config/user-config-dir.ts";
import type { ModelErrorKind, ModelStreamEvent, WireApi } from "./types.ts";

export type ModelErrorEvent = Extract<ModelStreamEvent, { type: "error" }>;

/** What the API says about a failure: the `error` object of an HTTP body or a stream event. */
export interface ApiErrorPayload {
  code?: string | null;
  type?: string | null;
  message?: string | null;
  param?: string | null;
}

export interface ErrorContext {
  /** Base URL the client talks to, named in connection and server messages. */
  baseURL: string;
  model?: string;
  /** Retries already spent when the error is final. */
  retries?: number;
  /** Path after the base URL named in HTTP error messages (default: the wire's, "/responses" or "/chat/completions"). */
  endpoint?: string;
  /** The API the client speaks (default "responses"); changes the 404 hint and the stream messages. */
  wire?: WireApi;
  /** True when no OPENAI_API_KEY was set and a placeholder key was sent to a custom base URL. */
  keyIsPlaceholder?: boolean;
}

const KEY_HELP = "export OPENAI_API_KEY=<your key> (keys: https://platform.openai.com/api-keys)";
const wireHelp = () => `set "wireApi": "chat" in ${userConfigFileShown()} or VALARMIND_WIRE_API=chat`;

function endpointOf(ctx: ErrorContext): string {
  return ctx.endpoint ?? (ctx.wire === "chat" ? "/chat/completions" : "/responses");
}

/** A 404 that names a model (OpenAI's `model_not_found`, vLLM's "The model `x` does not exist"). */
function isUnknownModel(payload: ApiErrorPayload): boolean {
  return payload.code === "model_not_found" || /\bmodel\b/i.test(payload.message ?? "");
}

function error(kind: ModelErrorKind, message: string, retryable: boolean, status?: number): ModelErrorEvent {
  return status === undefined
    ? { type: "error", kind, message, retryable }
    : { type: "error", kind, message, status, retryable };
}

/** Reads an unknown `error` object (from JSON) into the payload shape; anything else gives {}. */
export function toApiErrorPayload(value: unknown): ApiErrorPayload {
  if (typeof value === "string") return { message: value };
  if (typeof value !== "object" || value === null) return {};
  const record = value as Record<string, unknown>;
  const text = (key: string): string | undefined =>
    typeof record[key] === "string" ? (record[key] as string) : undefined;
  return { code: text("code"), type: text("type"), message: text("message"), param: text("param") };
}

function detail(payload: ApiErrorPayload): string {
  const message = typeof payload.message === "string" ? plainMessage(payload.message) : undefined;
  return message ? message : "(the server gave no message)";
}

/**
 * A message on one line. A proxy's HTML error page (nginx's 502, 413) is told by its title, or
 * its text without markup; line breaks fold into spaces.
 */
function plainMessage(message: string): string {
  if (/<(html|head|body|title|h1|center)\b/i.test(message)) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(message)?.[1];
    const text = (title ?? message.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();
    return `an HTML page: ${text.slice(0, 200)}`;
  }
  return message.replace(/\s*[\r\n]+\s*/g, " ").trim();
}

function retriesNote(ctx: ErrorContext): string {
  const n = ctx.retries ?? 0;
  return n > 0 ? ` after ${n} ${n === 1 ? "retry" : "retries"}` : "";
}

export function noApiKeyError(): ModelErrorEvent {
  return error(
    "no_api_key",
    "OPENAI_API_KEY is not set; export it or set OPENAI_BASE_URL to a local Responses server",
    false,
  );
}

export function contextLengthError(payload: ApiErrorPayload, status?: number): ModelErrorEvent {
  return error(
    "context_length_exceeded",
    `The request does not fit the model's context window (context_length_exceeded: ${detail(payload)}). ` +
      "Compact the conversation and retry, or lower maxContextTokens in .valarmind/config.json.",
    false,
    status,
  );
}

/**
 * A request over the model's context window, as OpenAI and the local servers say it: OpenAI's
 * code, llama.cpp's `exceed_context_size_error`, and the words vLLM, DeepSeek, LM Studio and
 * Ollama use ("maximum context length", "context length/size/window", "too many tokens").
 */
function isContextOverflow(payload: ApiErrorPayload): boolean {
  if (payload.code === "context_length_exceeded" || payload.code === "exceed_context_size_error" || payload.type === "exceed_context_size_error") return true;
  return /maximum context length|context (length|size|window)|too many tokens|exceeds? the (model'?s? )?(context|max(imum)? (input|prompt))|must have less than \d+ tokens|max_new_tokens`? must be <=/i.test(payload.message ?? "");
}

/**
 * A model that cannot read the image it was sent, as local servers say it (llama.cpp without its
 * mmproj: HTTP 500 "image input is not supported"; Ollama: "missing data required for image
 * input"). Not the server failing: retrying sends the same image again.
 */
export function isImageRefusal(payload: ApiErrorPayload): boolean {
  return /image input is not supported|missing data required for image input|does not support (images|image input|vision)|images? (are|is) not supported/i.test(payload.message ?? "");
}

function isQuota(payload: ApiErrorPayload): boolean {
  return payload.code === "insufficient_quota" || payload.type === "insufficient_quota";
}

/** An HTTP error status from `POST {baseURL}/responses` (or `/responses/input_tokens`). */
export function httpError(status: number, payload: ApiErrorPayload, ctx: ErrorContext): ModelErrorEvent {
  const where = `${ctx.baseURL}${endpointOf(ctx)}`;
  const said = detail(payload);
  // 422: Hugging Face TGI's "Input validation error: `inputs` must have less than 4096 tokens".
  if (((status === 400 || status === 413 || status === 422) && isContextOverflow(payload)) || payload.code === "context_length_exceeded") return contextLengthError(payload, status);
  if (isImageRefusal(payload)) {
    return error(
      "bad_request",
      `HTTP ${status} from ${where}: ${ctx.model ? `model '${ctx.model}'` : "the model"} does not accept images (${said}). ` +
        "Use a model that reads images (llama.cpp needs its --mmproj file), or send the message without the image.",
      false,
      status,
    );
  }
  if (status === 401) {
    const why = ctx.keyIsPlaceholder
      ? "OPENAI_API_KEY is not set, so valarmind sent a placeholder key, and this server wants a real one"
      : "the API key was rejected";
    return error("auth", `HTTP 401 from ${where}: ${why} (${said}). Check the key: ${KEY_HELP}.`, false, status);
  }
  if (status === 403) {
    return error(
      "auth",
      `HTTP 403 from ${where}: this key may not use ${ctx.model ? `model '${ctx.model}'` : "this model"} (${said}). ` +
        "Check the project's model permissions, or choose another model in settings.model.",
      false,
      status,
    );
  }
  if (status === 429 && isQuota(payload)) {
    return error(
      "quota",
      `HTTP 429 insufficient_quota from ${where}: the account has no quota left (${said}). ` +
        "Add credits at https://platform.openai.com/settings/organization/billing or use another key; retrying will not help.",
      false,
      status,
    );
  }
  if (status === 429) {
    return error(
      "rate_limit",
      `HTTP 429 rate limit from ${where}${retriesNote(ctx)} (${said}). Wait a minute and send the message again.`,
      true,
      status,
    );
  }
  if (status >= 500) {
    return error(
      "server",
      `HTTP ${status} from ${where}${retriesNote(ctx)}: the server failed (${said}). ` +
        `It may be overloaded or down; try again later${/(^|\/\/)api\.openai\.com/.test(ctx.baseURL) ? " (https://status.openai.com)" : ""}.`,
      true,
      status,
    );
  }
  if (status === 404 && ctx.wire !== "chat" && endpointOf(ctx) === "/responses" && !isUnknownModel(payload)) {
    // Chat-only servers (llama.cpp, older vLLM and Ollama, many proxies) have no /responses at all.
    return error(
      "bad_request",
      `HTTP 404 from ${where}: the server at ${ctx.baseURL} has no /responses endpoint (${said}). ` +
        `If it speaks Chat Completions (llama.cpp, vLLM, Ollama, LM Studio, …) ${wireHelp()}. ` +
        `Otherwise check that the base URL ends in /v1 and settings.model${ctx.model ? ` ('${ctx.model}')` : ""}.`,
      false,
      status,
    );
  }
  if (status === 404) {
    return error(
      "bad_request",
      `HTTP 404 from ${where} (${said}). Check settings.model${ctx.model ? ` ('${ctx.model}')` : ""} and that the base URL ends in /v1.`,
      false,
      status,
    );
  }
  if (status === 413) {
    return error(
      "bad_request",
      `HTTP 413 from ${where}: the request is too large for the server or a proxy in front of it (${said}). ` +
        "Leave out attached images or long pastes, or raise the proxy's body limit (nginx: client_max_body_size).",
      false,
      status,
    );
  }
  const param = payload.param ? ` (param: ${payload.param})` : "";
  return error(
    "bad_request",
    `HTTP ${status} from ${where}: the server refused the request${param}: ${said}. ` +
      "Check settings.model and reasoningEffort; if they look right, this is a valarmind bug worth reporting.",
    false,
    status,
  );
}

/**
 * A redirect the client does not follow (301, 302, 303: fetch would resend the POST as a GET
 * without its body): named with where it points, so the base URL can be set to it.
 */
export function redirectError(status: number, location: string | undefined, ctx: ErrorContext): ModelErrorEvent {
  const where = `${ctx.baseURL}${endpointOf(ctx)}`;
  let target = location;
  try {
    if (location) target = new URL(location, where).href;
  } catch {
    // Kept as the server wrote it.
  }
  const shown = target ? plainMessage(target).slice(0, 300) : undefined;
  return error(
    "bad_request",
    `HTTP ${status} from ${where}: the server redirects ${shown ? `to ${shown}` : "elsewhere (no Location given)"}, and a request cannot follow a ${status} without losing its body. ` +
      `Set OPENAI_BASE_URL (or settings.baseURL) to the address it redirects to${shown ? `, without the ${endpointOf(ctx)} at its end` : ""}.`,
    false,
    status,
  );
}

/** An `error` event or a `response.failed` inside a 200 stream. */
export function streamFailure(payload: ApiErrorPayload): ModelErrorEvent {
  const said = detail(payload);
  if (isContextOverflow(payload)) return contextLengthError(payload);
  switch (payload.code) {
    case "context_length_exceeded":
      return contextLengthError(payload);
    case "insufficient_quota":
      return error(
        "quota",
        `The response failed: insufficient_quota (${said}). Add credits or use another key; retrying will not help.`,
        false,
      );
    case "rate_limit_exceeded":
      return error(
        "rate_limit",
        `The response failed: rate_limit_exceeded (${said}). Wait a minute, or send a smaller request, then retry.`,
        true,
      );
    case "server_error":
    case "server_is_overloaded":
    case "slow_down":
      return error("server", `The response failed on the server (${payload.code}: ${said}). Try again shortly.`, true);
    default: {
      const code = payload.code ? `${payload.code}: ` : "";
      return error("failed", `The response failed (${code}${said}). Send the message again or rephrase it.`, false);
    }
  }
}

/** `refused` means nothing listens at the address; other transport failures may be transient. */
export function connectionError(cause: string, refused: boolean, ctx: ErrorContext): ModelErrorEvent {
  const what = refused ? "connection refused" : cause;
  return error(
    "connection",
    `Could not reach ${ctx.baseURL}${retriesNote(ctx)} (${what}). ` +
      "Check that the server is running and that OPENAI_BASE_URL / settings.baseURL point at it.",
    !refused,
  );
}

export function streamCutError(eventsSeen: number, cause: string | undefined, ctx: ErrorContext): ModelErrorEvent {
  const how = cause ? `: ${cause}` : "";
  const terminal = ctx.wire === "chat" ? "no finish_reason" : "no response.completed";
  return error(
    "stream_cut",
    `The response stream from ${ctx.baseURL} ended before the response finished ` +
      `(${eventsSeen} events, ${terminal}${how}). The answer so far is incomplete; send the message again.`,
    true,
  );
}

/**
 * The server answered 200 but not with Server-Sent Events (an HTML page, a JSON body from another
 * API): no event at all arrived and the transport ended cleanly. Retrying the same URL will not help.
 */
export function notResponsesApiError(ctx: ErrorContext): ModelErrorEvent {
  const url = `${ctx.baseURL}${endpointOf(ctx)}`;
  if (ctx.wire === "chat") {
    return error(
      "bad_request",
      `${url} answered, but not with a Chat Completions event stream (no chunks; an HTTP page or another API?). ` +
        "Check OPENAI_BASE_URL / settings.baseURL (usually ending in /v1), or set wireApi back to \"responses\".",
      false,
    );
  }
  return error(
    "bad_request",
    `${url} answered, but not with a Responses API event stream (no events; an HTML page or another API?). ` +
      "It is not an OpenAI Responses API server: check OPENAI_BASE_URL / settings.baseURL (usually ending in /v1).",
    false,
  );
}

export function abortedError(): ModelErrorEvent {
  return error("aborted", "The request was cancelled before the model finished.", false);
}

export function unexpectedError(what: string, ctx: ErrorContext): ModelErrorEvent {
  return error("failed", `The model client failed talking to ${ctx.baseURL}: ${what}.`, false);
}

/** A server's advice to wait longer than valarmind is willing to (e.g. Retry-After: 3600). */
export function waitTooLongError(base: ModelErrorEvent, delayMs: number): ModelErrorEvent {
  // The server's wait replaces the generic advice ("wait a minute" is wrong for a daily limit).
  const message = base.message.replace(/ Wait a minute and send the message again\.$/, "");
  return { ...base, message: `${message} The server asks to wait ${readableWait(delayMs)} before retrying, longer than valarmind waits on its own: send the message again after that.` };
}

/** A wait as a person reads it: 45s, 12 min, 24 h, 3 days. */
export function readableWait(ms: number): string {
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 2 * 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 2 * 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}
