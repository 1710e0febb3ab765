/**
 * Maps Chat Completions stream chunks (`chat.completion.chunk`, the parsed SSE `data` JSON) to the
 * same `ModelStreamEvent`s the Responses wire yields. Pure and SDK-free, so tests feed it the
 * recorded fixture files in test/fixtures/chat-completions/ directly.
 *
 * - `delta.content` and `delta.refusal` → `text_delta`.
 * - `delta.reasoning_content` (DeepSeek, llama.cpp, xAI, vLLM) or `delta.reasoning` (OpenRouter,
 *   newer vLLM) → `reasoning_delta`; one of the two per chunk, since some servers send both.
 * - `delta.tool_calls[]` are accumulated by `index` (parallel calls interleave; a new id at a used
 *   index is a new call): `tool_call_start` when a call's name is known, then its argument deltas;
 *   each `tool_call` is emitted when the stream ends, in order of first appearance, just before
 *   `completed`.
 * - `usage` may come in the finish chunk (DeepSeek, OpenRouter) or in a last chunk with empty
 *   `choices` (OpenAI with `include_usage`); the last one seen counts. Cached tokens:
 *   `prompt_tokens_details.cached_tokens`, else DeepSeek's `prompt_cache_hit_tokens`, else
 *   llama.cpp's `timings.cache_n`.
 * - A chunk with an `error` object (OpenRouter mid-stream) → `error`, and nothing after it.
 *
 * The stream is complete when a `finish_reason` arrived and the transport ended (the SDK hides
 * `data: [DONE]`); `length` and `content_filter` make it `incomplete`, and their half-written tool
 * calls are dropped. A stream that ends without a finish_reason is `stream_cut`.
 */
import { notResponsesApiError, streamCutError, streamFailure, toApiErrorPayload, type ErrorContext } from "./model-errors.ts";
import { mapRecordedStream, type StreamMapper } from "./stream-events.ts";
import type { ModelStreamEvent, ToolCallRequest, Usage } from "./types.ts";
import { reportedTokens } from "./token-count.ts";
import { createThinkSplitter, type ThinkPiece } from "./think-tags.ts";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
function count(value: unknown): number | undefined {
  return reportedTokens(value);
}

/** A chunk's `usage` (and llama.cpp's `timings`, beside it) → valarmind's Usage. */
export function mapChatUsage(usage: unknown, timings?: unknown): Usage | undefined {
  if (!isObject(usage)) return undefined;
  const prompt = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const completion = isObject(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  const cached =
    count(prompt.cached_tokens) ?? count(usage.prompt_cache_hit_tokens) ?? (isObject(timings) ? count(timings.cache_n) : undefined) ?? 0;
  const input = count(usage.prompt_tokens) ?? 0;
  return {
    input,
    // A server that reports more cached than prompt tokens: at most all of them were cached.
    cached: Math.min(cached, input),
    output: count(usage.completion_tokens) ?? 0,
    reasoning: count(completion.reasoning_tokens) ?? 0,
  };
}

interface PendingCall {
  /** The server's id, when it sent one. */
  serverId: string | undefined;
  callId: string;
  name: string;
  arguments: string;
  started: boolean;
  /** The server id this call repeated at another index (a server or proxy bug): it got an id of its own. */
  duplicateOf?: string;
}

/** finish_reason → the `completed` event's status. */
function statusFor(finishReason: string): { status: "completed" | "incomplete"; incompleteReason?: string } {
  if (finishReason === "length") return { status: "incomplete", incompleteReason: "max_output_tokens" };
  if (finishReason === "content_filter") return { status: "incomplete", incompleteReason: "content_filter" };
  return { status: "completed" };
}

export function createChatStreamMapper(ctx: ErrorContext): StreamMapper {
  const chatCtx: ErrorContext = { ...ctx, wire: "chat" };
  let finished = false;
  let eventCount = 0;
  let text = "";
  let responseId: string | undefined;
  let finishReason: string | undefined;
  let usage: Usage | undefined;
  // Calls in order of first appearance; `slotOfIndex` maps the server's `index` to the current call.
  const calls: PendingCall[] = [];
  const slotOfIndex = new Map<number, number>();

  function newCall(id: string | undefined): number {
    // Some servers omit ids; the call still needs one to pair with its tool message.
    const callId = id ?? `call_${responseId ?? crypto.randomUUID()}_${calls.length}`;
    calls.push({ serverId: id, callId, name: "", arguments: "", started: false });
    return calls.length - 1;
  }

  /** Which call a `tool_calls[]` delta continues, or a new one. */
  function slotFor(delta: Json): number {
    const id = str(delta.id) || undefined;
    const index = typeof delta.index === "number" ? delta.index : undefined;
    if (index !== undefined && id !== undefined) {
      const atIndex = slotOfIndex.get(index);
      const there = atIndex === undefined ? undefined : calls[atIndex];
      if (atIndex !== undefined && there && (there.serverId === id || there.duplicateOf === id)) return atIndex;
    }
    const known = id === undefined ? -1 : calls.findIndex((c) => c.serverId === id);
    if (known >= 0) {
      const knownIndex = [...slotOfIndex].find(([, slot]) => slot === known)?.[0];
      if (index === undefined || knownIndex === undefined || knownIndex === index) return known;
      // The same id at another index is another call: both must run, each paired with its result.
      const slot = newCall(undefined);
      const call = calls[slot];
      if (call) Object.assign(call, { callId: `${id}_${slot}`, duplicateOf: id });
      slotOfIndex.set(index, slot);
      return slot;
    }
    if (typeof delta.index !== "number") return id === undefined && calls.length > 0 ? calls.length - 1 : newCall(id);
    const current = slotOfIndex.get(delta.index);
    const call = current === undefined ? undefined : calls[current];
    if (current !== undefined && call && (id === undefined || call.serverId === undefined)) {
      if (id !== undefined && !call.started) Object.assign(call, { serverId: id, callId: id });
      return current;
    }
    // A new id at a used index is a new call (servers that number every call 0).
    const slot = newCall(id);
    slotOfIndex.set(delta.index, slot);
    return slot;
  }

  function toolCallDelta(delta: Json): ModelStreamEvent[] {
    const pending = calls[slotFor(delta)];
    if (!pending) return [];
    const fn = isObject(delta.function) ? delta.function : {};
    const name = str(fn.name);
    if (name && pending.name === "") pending.name = name;
    // A few servers send the arguments as an object rather than a JSON string.
    const args = typeof fn.arguments === "string" ? fn.arguments : isObject(fn.arguments) ? JSON.stringify(fn.arguments) : "";
    const out: ModelStreamEvent[] = [];
    if (!pending.started && pending.name !== "") {
      pending.started = true;
      out.push({ type: "tool_call_start", callId: pending.callId, name: pending.name });
      if (pending.arguments !== "") out.push({ type: "tool_call_arguments_delta", callId: pending.callId, delta: pending.arguments });
    }
    if (args !== "") {
      pending.arguments += args;
      if (pending.started) out.push({ type: "tool_call_arguments_delta", callId: pending.callId, delta: args });
    }
    return out;
  }

  /** A leading <think> block in `content` is reasoning (think-tags.ts). */
  const think = createThinkSplitter();
  function fromThinkPieces(pieces: readonly ThinkPiece[]): ModelStreamEvent[] {
    return pieces.map((p) => {
      if (p.kind === "reasoning") return { type: "reasoning_delta", delta: p.text };
      text += p.text;
      return { type: "text_delta", delta: p.text };
    });
  }

  function choiceDelta(choice: Json): ModelStreamEvent[] {
    const out: ModelStreamEvent[] = [];
    const delta = isObject(choice.delta) ? choice.delta : {};
    const reasoning = str(delta.reasoning_content) || str(delta.reasoning) || "";
    if (reasoning !== "") {
      out.push({ type: "reasoning_delta", delta: reasoning });
    }
    // Mistral streams content as parts: text parts are the answer, thinking parts reasoning.
    if (Array.isArray(delta.content)) {
      for (const part of delta.content.filter(isObject)) {
        const partText = part.type === "text" ? str(part.text) : undefined;
        if (partText) {
          text += partText;
          out.push({ type: "text_delta", delta: partText });
        } else if (part.type === "thinking") {
          const thought = Array.isArray(part.thinking) ? part.thinking.filter(isObject).map((t) => str(t.text)).join("") : str(part.thinking);
          if (thought) out.push({ type: "reasoning_delta", delta: thought });
        }
      }
    }
    const content = str(delta.content);
    if (content) out.push(...fromThinkPieces(think.push(content)));
    const refusal = str(delta.refusal);
    if (refusal) {
      text += refusal;
      out.push({ type: "text_delta", delta: refusal });
    }
    const toolCalls = Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isObject) : [];
    for (const call of toolCalls) out.push(...toolCallDelta(call));
    const reason = str(choice.finish_reason);
    if (reason && finishReason === undefined) finishReason = reason;
    return out;
  }

  function map(raw: Json): ModelStreamEvent[] {
    // `{"error": {...}}` (vLLM, OpenAI) or `{"error": "text"}` (Ollama, some LM Studio versions).
    if (isObject(raw.error) || typeof raw.error === "string") {
      finished = true;
      return [streamFailure(toApiErrorPayload(raw.error))];
    }
    responseId ??= str(raw.id);
    if (isObject(raw.usage)) usage = mapChatUsage(raw.usage, raw.timings);
    const choices = Array.isArray(raw.choices) ? raw.choices.filter(isObject) : [];
    // valarmind asks for one choice; a server that sends more has its others ignored.
    const first = choices.find((c) => (typeof c.index === "number" ? c.index : 0) === 0);
    return first ? choiceDelta(first) : [];
  }

  function complete(reason: string): ModelStreamEvent[] {
    const { status, incompleteReason } = statusFor(reason);
    const out: ModelStreamEvent[] = fromThinkPieces(think.end());
    const toolCalls: ToolCallRequest[] = [];
    const unnamed = calls.findIndex((c) => c.name === "");
    if (status === "completed" && unnamed >= 0) {
      // Nothing can run a call without a name, and the model could not be told which call failed.
      return [streamFailure({ message: `the server sent tool call #${unnamed + 1} (${calls[unnamed]?.callId}) without a function name; its tool-call parser may be broken` })];
    }
    if (status === "completed") {
      for (const pending of calls) {
        if (!pending.started) out.push({ type: "tool_call_start", callId: pending.callId, name: pending.name });
        // A call without arguments means "no arguments"; "" would not parse as JSON.
        const call = { callId: pending.callId, name: pending.name, arguments: pending.arguments === "" ? "{}" : pending.arguments };
        toolCalls.push(call);
        out.push({ type: "tool_call", call });
      }
    }
    out.push({
      type: "completed",
      status,
      ...(incompleteReason ? { incompleteReason } : {}),
      text,
      toolCalls,
      ...(status === "incomplete" && calls.length > 0 ? { droppedToolCalls: calls.map((c) => c.name || "(unnamed)") } : {}),
      usage,
      responseId,
    });
    return out;
  }

  return {
    push(raw) {
      if (finished || !isObject(raw)) return [];
      eventCount++;
      return map(raw);
    },
    end(cause) {
      if (finished) return [];
      finished = true;
      // After a finish_reason only the usage chunk and [DONE] are left: the answer is whole.
      if (finishReason !== undefined) return complete(finishReason);
      if (eventCount === 0 && cause === undefined) return [notResponsesApiError(chatCtx)];
      return [streamCutError(eventCount, cause, chatCtx)];
    },
    get finished() {
      return finished;
    },
    get eventCount() {
      return eventCount;
    },
  };
}

/** Maps a whole recorded stream (a fixture file's chunks) including the end-of-stream check. */
export function mapChatStreamEvents(raws: Iterable<unknown>, ctx: ErrorContext): ModelStreamEvent[] {
  return mapRecordedStream(createChatStreamMapper(ctx), raws);
}
