/**
 * The model seam. Only `src/model/openai-client.ts` imports `openai`; everything else speaks
 * these types. Request bodies are plain data so they can be inspected and recorded unsent.
 */

/**
 * An image attached to the turn's user message (`@shot.png`, `chat -p --image`), as a base64 data
 * URL. Inside valarmind a message's text stays a string and its images ride beside it; the wire
 * turns them into content parts (`input_image` here, `image_url` on the chat wire), see
 * `responsesInput` and chat-request.ts (docs/adr/0079-agents-md-and-attachments.md).
 */
export interface InputImage {
  image_url: string;
  detail: "auto";
}

/** One input item of a Responses API request (the subset valarmind sends). */
export type InputItem =
  | { type: "message"; role: "user" | "assistant" | "developer" | "system"; content: string; images?: InputImage[] }
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: string }
  /**
   * What the model reasoned before a step's tool calls, as it streamed it. Sent back only on the
   * chat wire, as the `reasoning_content` of the assistant message with those calls: DeepSeek's
   * thinking mode refuses a request without it (HTTP 400). The Responses wire leaves it out.
   */
  | { type: "reasoning_text"; text: string }
  /**
   * A reasoning item of this turn's earlier step, sent back before that step's calls (Responses
   * wire, stateless requests): without it a reasoning model starts its reasoning over at every
   * tool step. The chat wire leaves it out.
   */
  | { type: "reasoning"; id: string; summary: Array<{ type: "summary_text"; text: string }>; encrypted_content?: string; /** Not sent: the reasoning tokens it stands for, for the builder's count. */ tokens?: number };

/** A reasoning item as the Responses API returned it (output_item.done), with its reasoning tokens when known. */
export interface ReasoningItem {
  id: string;
  summary: Array<{ type: "summary_text"; text: string }>;
  encrypted_content?: string;
  /** The step's reasoning tokens (usage), for the builder's count: the encrypted content says nothing of them. */
  tokens?: number;
}

export interface FunctionToolSpec {
  type: "function";
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: boolean;
}

export type ReasoningEffort = "minimal" | "low" | "medium" | "high";

/**
 * Which HTTP API the client speaks: the Responses API (`POST /responses`, the default) or Chat
 * Completions (`POST /chat/completions`, for servers without /responses such as llama.cpp).
 * The ModelRequest is the same either way; the chat wire translates it (chat-request.ts).
 */
export type WireApi = "responses" | "chat";

/** A complete Responses API request body, as valarmind builds it (stateless, store:false). */
export interface ModelRequest {
  model: string;
  instructions: string;
  input: InputItem[];
  tools: FunctionToolSpec[];
  prompt_cache_key: string;
  store: false;
  reasoning?: { effort: ReasoningEffort; summary?: "auto" | "concise" | "detailed" };
  /** With reasoning: ask for each reasoning item's encrypted content, to send it back within the turn (store is false). */
  include?: Array<"reasoning.encrypted_content">;
  max_output_tokens?: number;
}

export interface Usage {
  input: number;
  cached: number;
  output: number;
  reasoning: number;
}

export interface ToolCallRequest {
  callId: string;
  name: string;
  /** The raw JSON argument string as the model produced it (validated later by the registry). */
  arguments: string;
}

export type ModelErrorKind =
  | "no_api_key"
  | "auth" // 401/403
  | "rate_limit" // 429 after retries
  | "quota" // 429 insufficient_quota
  | "server" // 5xx
  | "connection" // refused, DNS, reset
  | "stream_cut" // stream ended before a terminal event
  | "context_length_exceeded"
  | "bad_request" // other 4xx
  | "failed" // response.failed / error event without a more specific kind
  | "aborted";

/** Events a model stream yields, in order. Failures are data, never thrown. */
export type ModelStreamEvent =
  | { type: "text_delta"; delta: string }
  | { type: "reasoning_delta"; delta: string }
  | { type: "tool_call_start"; callId: string; name: string }
  | { type: "tool_call_arguments_delta"; callId: string; delta: string }
  | { type: "tool_call"; call: ToolCallRequest }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  | {
      type: "completed";
      status: "completed" | "incomplete";
      incompleteReason?: string;
      text: string;
      toolCalls: ToolCallRequest[];
      /** Names of tool calls the model had begun when the response stopped early (incomplete): not run. */
      droppedToolCalls?: string[];
      /** The response's reasoning items (Responses wire), in output order. */
      reasoningItems?: ReasoningItem[];
      usage: Usage | undefined;
      responseId: string | undefined;
    }
  | { type: "error"; kind: ModelErrorKind; message: string; status?: number; retryable: boolean };

export interface ModelClient {
  /** Streams one response. Must not throw: every failure arrives as an `error` event, then the iterator ends. */
  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelStreamEvent>;
  /** `POST /responses/input_tokens`, for `valarmind prompt --tokens api`. */
  countInputTokens(request: ModelRequest, signal?: AbortSignal): Promise<number>;
}
