/**
 * A conversation turn as short-term memory holds it: the user's text and what the model did in
 * answer, in order. In the window, a tool exchange carries the *prompt summary* of its result
 * (the raw result stays in the transcript); in the turn still in progress it carries the output
 * the model saw. (Token counts live in the transcript records; the builder counts what it sends.)
 */
import type { Usage } from "../model/types.ts";

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
}

export type TurnItem = AssistantItem | ToolExchange;

export interface Turn {
  turn: number;
  user: string;
  items: TurnItem[];
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
