/**
 * A conversation turn as short-term memory holds it: the user's text and what the model did in
 * answer, in order. In the window, a tool exchange carries the *prompt summary* of its result
 * (the raw result stays in the transcript); in the turn still in progress it carries the output
 * the model saw. (Token counts live in the transcript records; the builder counts what it sends.)
 */
import type { ReasoningItem, Usage } from "../model/types.ts";

export interface AssistantItem {
  kind: "assistant";
  text: string;
}

export interface ToolExchange {
  kind: "tool";
  callId: string;
  name: string;
  /** The raw JSON argument string. */
  arguments: string;
  /** The function output the prompt carries: the summary in the window, the output in the current turn. */
  output: string;
  isError: boolean;
  /**
   * What the model reasoned before this step's tool calls, on the step's first call. The chat
   * wire sends it back as `reasoning_content` (DeepSeek's thinking mode refuses a request
   * without it); the Responses wire does not.
   */
  reasoning?: string;
  /**
   * The step's reasoning items (Responses wire), on its first call: sent back before the call by
   * the turn's later steps only (the API drops a past turn's reasoning anyway). Not recorded.
   */
  reasoningItems?: ReasoningItem[];
}

export type TurnItem = AssistantItem | ToolExchange;

/** What a turn's volatile context showed (volatile-context.ts), so a later turn sends only what changed. */
export interface ContextShown {
  /** "2026-01-31 Sat 12:34 (UTC-03:00)". */
  time?: string;
  /** The git head line and change lines, as shown ("branch main, 2 changed", "M src/a.ts"). */
  git?: { head: string; changes: string[] };
  /** Names of the touched files and symbols it listed: a later turn lists only names not shown yet. */
  files?: string[];
  symbols?: string[];
}

/**
 * The per-turn part of a turn's requests (ADR 0074): the working-state changes and the volatile
 * context, taken at the turn's first request, sent after its message in every step, and kept
 * with the turn in the window — so the next turn's request repeats this one's whole prefix.
 * Both are deltas: what changed since the turns before showed it.
 */
export interface TurnContext {
  /** The `working_state_changes` block as sent, or "". */
  stateChanges: string;
  /** The `volatile_context` block as sent, or "". */
  context: string;
  shown: ContextShown;
}

export interface Turn {
  turn: number;
  user: string;
  items: TurnItem[];
  /** The turn's per-turn part as its requests sent it; absent for turns recorded before it existed. */
  context?: TurnContext;
  stopReason?: "completed" | "incomplete" | "error" | "aborted" | "max_steps";
  usage?: Usage;
}

/** The final answer of a turn: the text of its last assistant item, or "". */
export function finalAnswer(turn: Turn): string {
  for (let i = turn.items.length - 1; i >= 0; i--) {
    const item = turn.items[i];
    if (item?.kind === "assistant" && item.text.trim() !== "") return item.text;
  }
  return "";
}

/** The message a turn's per-turn part is in the prompt: the two blocks joined, as the request assembly merges them; "" when none. */
export function turnContextText(context: TurnContext | undefined): string {
  return context ? context.stateChanges + context.context : "";
}
