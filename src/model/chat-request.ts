/**
 * A Responses-shaped ModelRequest → a Chat Completions request body (`POST /chat/completions`).
 * Pure and SDK-free: the prompt builder, the manifest and recordings keep the Responses shape, and
 * the chat wire translates at the edge (docs/adr/0075-chat-completions-wire.md).
 *
 * - `instructions` → the first message, role `system` (every chat template knows it; OpenAI treats
 *   it as `developer` for reasoning models).
 * - user and assistant messages pass through; consecutive messages of the same role are joined into
 *   one, because many local chat templates (Mistral/Devstral, Gemma) refuse two user messages in a
 *   row with "Conversation roles must alternate" (HTTP 500 from llama.cpp).
 * - a user message's images (ADR 0079) become content parts: its text as a `text` part, then one
 *   `image_url` part per image (a data URL); joined with a neighbouring user message, the text
 *   parts stay in order.
 * - `function_call` items → `tool_calls` on the assistant message they follow (parallel calls share
 *   one message); `function_call_output` → a `tool` message.
 * - `reasoning_text` (what the model reasoned before a step's tool calls) → `reasoning_content` on
 *   that step's assistant message. DeepSeek's thinking mode wants it back on every assistant
 *   message with tool calls, in every later request, or answers HTTP 400; so once a request has
 *   any, a tool-call message without its own gets `""`. Servers that never stream reasoning never
 *   get the field.
 * - tools → `{type:"function", function:{…}}`; `reasoning.effort` → `reasoning_effort`;
 *   `max_output_tokens` → `max_completion_tokens`. `prompt_cache_key` and `store` are left out:
 *   strict servers (Groq, Mistral) refuse fields they do not know.
 * - Always streamed, with `stream_options.include_usage` so the last chunk carries the usage.
 */
import type { FunctionToolSpec, InputItem, ModelRequest, ReasoningEffort } from "./types.ts";

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatContentPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[]; reasoning_content?: string }
  | { role: "tool"; tool_call_id: string; content: string };

export interface ChatToolSpec {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown>; strict?: boolean };
}

export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  tools?: ChatToolSpec[];
  reasoning_effort?: ReasoningEffort;
  max_completion_tokens?: number;
  stream: true;
  stream_options: { include_usage: true };
}

/** Joins two texts of one role so that they read as paragraphs, not as one run-on line. */
function joinText(before: string, after: string): string {
  if (before === "") return after;
  if (after === "") return before;
  return before.endsWith("\n") ? `${before}\n${after}` : `${before}\n\n${after}`;
}

function userContent(item: Extract<InputItem, { type: "message" }>): string | ChatContentPart[] {
  const images = item.images ?? [];
  if (images.length === 0) return item.content;
  return [...(item.content !== "" ? [{ type: "text" as const, text: item.content }] : []), ...images.map((image) => ({ type: "image_url" as const, image_url: { url: image.image_url } }))];
}

function messageFor(item: Extract<InputItem, { type: "message" }>): ChatMessage {
  if (item.role === "assistant") return { role: "assistant", content: item.content };
  if (item.role === "user") return { role: "user", content: userContent(item) };
  return { role: "system", content: item.content };
}

/** Two user messages' contents as one: plain text joined as paragraphs, or parts in order once either has images. */
function joinUserContent(before: string | ChatContentPart[], after: string | ChatContentPart[]): string | ChatContentPart[] {
  if (typeof before === "string" && typeof after === "string") return joinText(before, after);
  const parts = (content: string | ChatContentPart[]): ChatContentPart[] => (typeof content === "string" ? (content === "" ? [] : [{ type: "text", text: content }]) : content);
  return [...parts(before), ...parts(after)];
}

/** The conversation as chat messages (see the module comment for the rules). */
export function toChatMessages(instructions: string, input: readonly InputItem[]): ChatMessage[] {
  const messages: ChatMessage[] = instructions !== "" ? [{ role: "system", content: instructions }] : [];
  let reasoning = false;
  for (const item of input) {
    const last = messages.at(-1);
    // A Responses reasoning item has no chat form (and its encrypted content no reader here).
    if (item.type === "reasoning") continue;
    if (item.type === "reasoning_text") {
      reasoning = true;
      // The step's text, when it had some, is already the assistant message its calls will join.
      if (last?.role === "assistant" && !last.tool_calls && last.reasoning_content === undefined) last.reasoning_content = item.text;
      else messages.push({ role: "assistant", content: null, reasoning_content: item.text });
      continue;
    }
    if (item.type === "function_call") {
      const call: ChatToolCall = { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } };
      if (last?.role === "assistant") last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
      continue;
    }
    if (item.type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.call_id, content: item.output });
      continue;
    }
    const next = messageFor(item);
    // Text after tool calls starts a new message: appending it would put it before the calls.
    const joinable = last !== undefined && last.role === next.role && !(last.role === "assistant" && last.tool_calls);
    if (joinable && last.role === "user" && next.role === "user") {
      last.content = joinUserContent(last.content, next.content);
      continue;
    }
    if (joinable && (last.role === "system" || last.role === "assistant") && (next.role === "system" || next.role === "assistant")) {
      last.content = joinText(last.content ?? "", next.content ?? "");
      continue;
    }
    messages.push(next);
  }
  if (reasoning) for (const message of messages) if (message.role === "assistant" && message.tool_calls && message.reasoning_content === undefined) message.reasoning_content = "";
  return messages;
}

export function toChatTool(spec: FunctionToolSpec): ChatToolSpec {
  return {
    type: "function",
    function: {
      name: spec.name,
      description: spec.description,
      parameters: spec.parameters,
      ...(spec.strict ? { strict: true } : {}),
    },
  };
}

export function toChatRequest(request: ModelRequest): ChatRequestBody {
  return {
    model: request.model,
    messages: toChatMessages(request.instructions, request.input),
    // An empty `tools` array is refused by OpenAI ("[] is too short"); leave it out instead.
    ...(request.tools.length > 0 ? { tools: request.tools.map(toChatTool) } : {}),
    ...(request.reasoning ? { reasoning_effort: request.reasoning.effort } : {}),
    ...(request.max_output_tokens !== undefined ? { max_completion_tokens: request.max_output_tokens } : {}),
    stream: true,
    stream_options: { include_usage: true },
  };
}
