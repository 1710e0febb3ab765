/**
 * Maps raw Responses API stream events (parsed SSE `data` JSON) to `ModelStreamEvent`s. Pure and
 * SDK-free, so tests feed it the recorded fixture files directly.
 *
 * Invariants: the `text_delta`s concatenate to `completed.text` (a "\n\n" delta separates two
 * assistant messages; when a server's `*.done` text extends what was streamed, the missing rest is
 * emitted as a delta); each tool call yields `tool_call_start`, argument deltas, then `tool_call`;
 * after a terminal event (`response.completed|incomplete|failed`, `error`) nothing more is emitted.
 * Event kinds it does not know (`keepalive`, `content_part.*`, annotations, future kinds) are ignored.
 */
import { notResponsesApiError, streamCutError, streamFailure, toApiErrorPayload, type ErrorContext } from "./model-errors.ts";
import type { ModelStreamEvent, ReasoningItem, ToolCallRequest, Usage } from "./types.ts";
import { reportedTokens } from "./token-count.ts";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
/** A count (token-count.ts), else 0. */
function num(value: unknown): number {
  return reportedTokens(value) ?? 0;
}

/** `usage` of a response object → valarmind's Usage (missing details count as 0). */
export function mapUsage(value: unknown): Usage | undefined {
  if (!isObject(value)) return undefined;
  const inputDetails = isObject(value.input_tokens_details) ? value.input_tokens_details : {};
  const outputDetails = isObject(value.output_tokens_details) ? value.output_tokens_details : {};
  const input = num(value.input_tokens);
  return {
    input,
    // A server that reports more cached than input tokens: at most all of them were cached.
    cached: Math.min(num(inputDetails.cached_tokens), input),
    output: num(value.output_tokens),
    reasoning: num(outputDetails.reasoning_tokens),
  };
}

interface PendingCall {
  callId: string;
  name: string;
  arguments: string;
  done: boolean;
}

export interface StreamMapper {
  /** Maps one raw event; returns the events to yield (often none). */
  push(raw: unknown): ModelStreamEvent[];
  /** The transport ended: a `stream_cut` error unless a terminal event was seen. */
  end(cause?: string): ModelStreamEvent[];
  /** A terminal event was seen. */
  readonly finished: boolean;
  /** Raw events pushed so far. */
  readonly eventCount: number;
}

export function createStreamMapper(ctx: ErrorContext): StreamMapper {
  let finished = false;
  let eventCount = 0;
  let responseId: string | undefined;
  // Message text per output item, in order of first appearance.
  const messages = new Map<string, string>();
  const calls = new Map<string, PendingCall>(); // by output item key (keyOf)
  const doneCalls: ToolCallRequest[] = [];
  const doneCallIds = new Set<string>();
  // Items are keyed by output_index where the event has one (the final response's output has the
  // same order), else by id; an item with neither gets a key of its own. So an item without an id
  // is one item from output_item.added to the final output, never three.
  const keyById = new Map<string, string>();
  // An item first named by its id alone keeps that key when a later event also gives its position.
  const keyByIndex = new Map<string, string>();
  let anonymous = 0;
  const keyOf = (id: string | undefined, outputIndex: unknown): string => {
    if (typeof outputIndex === "number") {
      const position = `#${outputIndex}`;
      const key = keyByIndex.get(position) ?? (id && (messages.has(id) || calls.has(id)) ? id : position);
      if (key !== position) keyByIndex.set(position, key);
      if (id) keyById.set(id, key);
      return key;
    }
    if (id) return keyById.get(id) ?? id;
    return `anonymous-${anonymous++}`;
  };
  // Text events naming no item (no id, no position: minimal servers, translating proxies) extend
  // the message being written, not a new one per delta.
  let openText: string | undefined;
  const textKeyOf = (id: string | undefined, outputIndex: unknown): string => {
    if (id === undefined && typeof outputIndex !== "number") return (openText ??= keyOf(undefined, undefined));
    openText = keyOf(id, outputIndex);
    return openText;
  };
  /**
   * An item of the final response's output: the streamed item it repeats (by id, then by call_id),
   * else its position (output_index is its position there), else its id.
   */
  const finalKeyOf = (item: Json, position: number, messageOrdinal: number): string => {
    const id = str(item.id);
    const known = id === undefined ? undefined : (keyById.get(id) ?? (calls.has(id) || messages.has(id) ? id : undefined));
    if (known !== undefined) return known;
    const callId = str(item.call_id);
    if (item.type === "function_call" && callId) {
      const streamed = [...calls].find(([, c]) => c.callId === callId)?.[0];
      if (streamed !== undefined) return streamed;
    }
    const at = keyByIndex.get(`#${position}`) ?? `#${position}`;
    if (item.type === "message" ? messages.has(at) : calls.has(at)) return at;
    // A message streamed without id or position: the final output's n-th message is the n-th streamed one.
    if (item.type === "message") {
      const streamed = [...messages.keys()][messageOrdinal];
      if (streamed?.startsWith("anonymous-")) return streamed;
    }
    return id ?? `#${position}`;
  };
  let reasoningKey: string | undefined;
  let reasoningSeen = false;
  const reasoningItems = new Map<string, ReasoningItem>();

  const fullText = (): string => [...messages.values()].filter((t) => t !== "").join("\n\n");

  function appendText(itemId: string, delta: string): ModelStreamEvent[] {
    if (delta === "") return [];
    const out: ModelStreamEvent[] = [];
    const before = messages.get(itemId) ?? "";
    if (before === "" && fullText() !== "") out.push({ type: "text_delta", delta: "\n\n" });
    messages.set(itemId, before + delta);
    out.push({ type: "text_delta", delta });
    return out;
  }

  /** A `done` text: emit what the deltas missed when it extends them; it is authoritative either way. */
  function settleText(itemId: string, text: string): ModelStreamEvent[] {
    const before = messages.get(itemId) ?? "";
    if (text.startsWith(before)) return appendText(itemId, text.slice(before.length));
    messages.set(itemId, text);
    return [];
  }

  function startCall(itemId: string, item: Json): ModelStreamEvent[] {
    if (calls.has(itemId)) return [];
    let callId = str(item.call_id) || str(item.id) || `call_${itemId}`;
    // Another item reusing a call_id (a server or proxy bug) is another call: both run, each paired with its result.
    if ([...calls.values()].some((c) => c.callId === callId)) callId = `${callId}_${calls.size}`;
    const name = str(item.name) ?? "";
    calls.set(itemId, { callId, name, arguments: str(item.arguments) ?? "", done: false });
    return [{ type: "tool_call_start", callId, name }];
  }

  function finishCall(itemId: string, item: Json): ModelStreamEvent[] {
    const out = startCall(itemId, item);
    const pending = calls.get(itemId);
    if (!pending || pending.done) return out;
    // A call the output limit cut (status incomplete or still in progress) is never run.
    if (item.status === "incomplete" || item.status === "in_progress") return out;
    pending.name = str(item.name) || pending.name;
    pending.arguments = str(item.arguments) ?? pending.arguments;
    pending.done = true;
    const call: ToolCallRequest = { callId: pending.callId, name: pending.name, arguments: pending.arguments };
    doneCallIds.add(call.callId);
    doneCalls.push(call);
    out.push({ type: "tool_call", call });
    return out;
  }

  function messageText(item: Json): string {
    const content = Array.isArray(item.content) ? item.content : [];
    return content
      .filter(isObject)
      .filter((part) => part.type === "output_text" || part.type === "refusal")
      .map((part) => str(part.text) ?? str(part.refusal) ?? "")
      .join("");
  }

  /**
   * A reasoning item, kept to be sent back within the turn. Its encrypted content is re-encrypted
   * in every event that carries it; the first whole one (output_item.done) is kept, as Codex
   * does, and the final output's copy only fills in an item not streamed.
   */
  function noteReasoning(item: Json): void {
    const id = str(item.id);
    if (!id || reasoningItems.has(id)) return;
    const summary = (Array.isArray(item.summary) ? item.summary : [])
      .filter(isObject)
      .map((part) => ({ type: "summary_text" as const, text: str(part.text) ?? "" }));
    const encrypted = str(item.encrypted_content);
    reasoningItems.set(id, { id, summary, ...(encrypted !== undefined && { encrypted_content: encrypted }) });
  }

  function outputItemDone(item: Json, outputIndex: unknown, key?: string): ModelStreamEvent[] {
    if (item.type === "reasoning") {
      noteReasoning(item);
      return [];
    }
    const itemId = key ?? keyOf(str(item.id), outputIndex);
    if (item.type === "function_call") return finishCall(itemId, item);
    if (item.type === "message") return settleText(itemId, messageText(item));
    return [];
  }

  function terminal(raw: Json, status: "completed" | "incomplete"): ModelStreamEvent[] {
    const response = isObject(raw.response) ? raw.response : {};
    const out: ModelStreamEvent[] = [];
    // Catch up on output a server put only in the final response (no per-item events).
    const output = Array.isArray(response.output) ? response.output : [];
    let messageOrdinal = 0;
    output.forEach((item, position) => {
      if (!isObject(item)) return;
      out.push(...outputItemDone(item, position, finalKeyOf(item, position, messageOrdinal)));
      if (item.type === "message") messageOrdinal += 1;
    });
    const details = isObject(response.incomplete_details) ? response.incomplete_details : {};
    const reason = str(details.reason);
    finished = true;
    const nameless = doneCalls.find((c) => c.name === "");
    if (nameless) {
      // Nothing can run a call without a name, and the model could not be told which call failed.
      return [...out.filter((e) => e.type !== "tool_call"), streamFailure({ message: `the server sent tool call ${nameless.callId} without a function name` })];
    }
    const dropped = [...calls.values()].filter((c) => !c.done).map((c) => c.name || "(unnamed)");
    out.push({
      type: "completed",
      status,
      ...(status === "incomplete" ? { incompleteReason: reason ?? "unknown" } : {}),
      text: fullText(),
      toolCalls: [...doneCalls],
      ...(dropped.length > 0 ? { droppedToolCalls: dropped } : {}),
      ...(reasoningItems.size > 0 ? { reasoningItems: [...reasoningItems.values()] } : {}),
      usage: mapUsage(response.usage),
      responseId: str(response.id) ?? responseId,
    });
    return out;
  }

  function reasoningDelta(raw: Json): ModelStreamEvent[] {
    const delta = str(raw.delta) ?? "";
    if (delta === "") return [];
    const key = `${str(raw.item_id) ?? ""}/${num(raw.summary_index)}/${num(raw.content_index)}`;
    const out: ModelStreamEvent[] = [];
    if (reasoningSeen && key !== reasoningKey) out.push({ type: "reasoning_delta", delta: "\n\n" });
    reasoningKey = key;
    reasoningSeen = true;
    out.push({ type: "reasoning_delta", delta });
    return out;
  }

  function map(raw: Json): ModelStreamEvent[] {
    const text = raw.type === "response.output_text.delta" || raw.type === "response.refusal.delta" || raw.type === "response.output_text.done";
    const itemId = text ? textKeyOf(str(raw.item_id), raw.output_index) : keyOf(str(raw.item_id), raw.output_index);
    switch (raw.type) {
      case "response.created":
      case "response.in_progress":
        if (isObject(raw.response)) responseId = str(raw.response.id) ?? responseId;
        return [];
      case "response.output_text.delta":
      case "response.refusal.delta":
        return appendText(itemId, str(raw.delta) ?? "");
      case "response.output_text.done":
        // Later content parts of one message are settled by its output_item.done.
        return num(raw.content_index) > 0 ? [] : settleText(itemId, str(raw.text) ?? "");
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        return reasoningDelta(raw);
      case "response.output_item.added":
        if (isObject(raw.item)) {
          const key = keyOf(str(raw.item.id), raw.output_index);
          if (raw.item.type === "function_call") return startCall(key, raw.item);
        }
        return [];
      case "response.function_call_arguments.delta": {
        const pending = calls.get(itemId);
        const delta = str(raw.delta) ?? "";
        if (!pending || delta === "") return [];
        pending.arguments += delta;
        return [{ type: "tool_call_arguments_delta", callId: pending.callId, delta }];
      }
      case "response.function_call_arguments.done": {
        const pending = calls.get(itemId);
        const args = str(raw.arguments);
        if (pending && args !== undefined) pending.arguments = args;
        return [];
      }
      case "response.output_item.done":
        return isObject(raw.item) ? outputItemDone(raw.item, raw.output_index) : [];
      case "response.completed":
        return terminal(raw, "completed");
      case "response.incomplete":
        return terminal(raw, "incomplete");
      case "response.failed": {
        const response = isObject(raw.response) ? raw.response : {};
        finished = true;
        return [streamFailure(toApiErrorPayload(response.error))];
      }
      case "error":
        // Recorded streams nest the payload (`error: {code, message}`); the API reference puts it flat.
        finished = true;
        return [streamFailure(toApiErrorPayload(isObject(raw.error) || typeof raw.error === "string" ? raw.error : raw))];
      default:
        return [];
    }
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
      // Nothing parsed and no transport error: the body was not an event stream at all.
      if (eventCount === 0 && cause === undefined) return [notResponsesApiError(ctx)];
      return [streamCutError(eventCount, cause, ctx)];
    },
    get finished() {
      return finished;
    },
    get eventCount() {
      return eventCount;
    },
  };
}

/** Runs a whole recorded stream (a fixture file's events) through `mapper`, the end-of-stream check included. */
export function mapRecordedStream(mapper: StreamMapper, raws: Iterable<unknown>): ModelStreamEvent[] {
  const out: ModelStreamEvent[] = [];
  for (const raw of raws) out.push(...mapper.push(raw));
  out.push(...mapper.end());
  return out;
}

/** Maps a whole recorded Responses stream including the end-of-stream check. */
export function mapStreamEvents(raws: Iterable<unknown>, ctx: ErrorContext): ModelStreamEvent[] {
  return mapRecordedStream(createStreamMapper(ctx), raws);
}
