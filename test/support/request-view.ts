/**
 * Reading a recorded Responses request body in a responder or an assertion, without casts:
 *
 *   server.setResponder((body) =>
 *     lastInputItem(body)?.type === "function_call_output" ? textStream("done") : toolCallStream([...]));
 */
import { PROMPT_TAGS } from "../../src/prompt/section.ts";

export interface InputItemView {
  type: string;
  role?: string;
  content?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: string;
}

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  // Content given as parts ([{type:"input_text", text}]) is joined.
  if (Array.isArray(value)) {
    return value
      .map((part) => (typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
      .join("");
  }
  return undefined;
}

/** The `input` items of a request body (a plain string input counts as one user message). */
export function inputItems(body: Record<string, unknown>): InputItemView[] {
  const input = body.input;
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  if (!Array.isArray(input)) return [];
  return input
    .filter((item): item is Record<string, unknown> => typeof item === "object" && item !== null)
    .map((item) => ({
      type: typeof item.type === "string" ? item.type : "message",
      role: typeof item.role === "string" ? item.role : undefined,
      content: text(item.content),
      call_id: typeof item.call_id === "string" ? item.call_id : undefined,
      name: typeof item.name === "string" ? item.name : undefined,
      arguments: typeof item.arguments === "string" ? item.arguments : undefined,
      output: typeof item.output === "string" ? item.output : text(item.output),
    }));
}

/**
 * A user-role message valarmind built from data (summary, working state, working set, volatile
 * context): every such message starts with one of its tags. The user's own words do not.
 */
export function isDataMessage(item: InputItemView): boolean {
  return item.type === "message" && item.role === "user" && PROMPT_TAGS.some((tag) => item.content?.startsWith(`<${tag}`) === true);
}

/** The conversation's messages (the user's and the assistant's), without valarmind's data messages. */
export function conversationMessages(body: Record<string, unknown>): InputItemView[] {
  return inputItems(body).filter((item) => item.type === "message" && (item.role === "user" || item.role === "assistant") && !isDataMessage(item));
}

export function lastInputItem(body: Record<string, unknown>): InputItemView | undefined {
  return inputItems(body).at(-1);
}

function isUsersOwnMessage(item: InputItemView): boolean {
  return item.type === "message" && item.role === "user" && !isDataMessage(item);
}

/** Text of the user's last own message in the input (valarmind's data messages after it skipped), or "". */
export function lastUserText(body: Record<string, unknown>): string {
  return inputItems(body).findLast(isUsersOwnMessage)?.content ?? "";
}

/** `function_call_output` items after the user's last own message: the results of this turn's tool calls. */
export function toolOutputsThisTurn(body: Record<string, unknown>): InputItemView[] {
  const items = inputItems(body);
  const lastUser = items.findLastIndex(isUsersOwnMessage);
  return items.slice(lastUser + 1).filter((item) => item.type === "function_call_output");
}

/** Names of the tools the request offers. */
export function toolNames(body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return tools.flatMap((tool) =>
    typeof tool === "object" && tool !== null && typeof (tool as { name?: unknown }).name === "string" ? [(tool as { name: string }).name] : [],
  );
}
