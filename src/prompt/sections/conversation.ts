/**
 * Short-term memory sections: the rolling summary and the conversation window. Both change only
 * when turns fold (append-only between folds), so they sit in the cached prefix. Window tool
 * exchanges carry their prompt summaries; any output still over the cap is shortened head+tail.
 */
import type { InputItem } from "../../model/types.ts";
import { turnContextText, type Turn, type TurnItem } from "../../memory/turn.ts";
import { escapeOwnTags, tagged, type Piece, type Section, type SectionContext } from "../section.ts";
import { shortenHeadTail } from "../shorten.ts";
import { ARGUMENT_KEEP_CHARS, condenseToolArguments, CURRENT_ARGUMENT_KEEP_CHARS } from "../../memory/condense.ts";
import { inputItemText } from "../../model/input-item-text.ts";
import { answerGist } from "../../memory/answer-gist.ts";

export const summarySection: Section = {
  id: "summary",
  region: "summary",
  stable: true,
  placement: "message",
  role: "user",
  type: "summary",
  format: "text",
  reason: "rolling_summary",
  render: (ctx) => {
    const summary = ctx.summary;
    if (!summary || summary.text.trim() === "") return "";
    const turns = `${summary.fromTurn}–${summary.throughTurn}`;
    return [
      {
        id: "summary",
        type: "summary",
        format: "text",
        reason: "rolling_summary",
        detail: `summary of turns ${turns}, folded out of the window`,
        placement: "message",
        role: "user",
        // Model-written, from turns that held file contents and tool output: data, in a user message.
        // The turn range closes the block, so a summary that only grew keeps its bytes as a prefix (ADR 0074).
        text: tagged("conversation_summary", `${summary.text}\n(turns ${turns})`, { source: "summary of earlier turns" }),
      },
    ];
  },
};

/** How a window turn's steps are rendered: its number, the answer cap, and the tokens its gists left out (filled in). */
export interface PastTurnForm {
  turn: number;
  answerTokens: number;
  leftOut: number;
}

/**
 * The input items of turn steps; function outputs over the cap are shortened head+tail. Past
 * turns (`past`) also have long tool arguments cut (condense.ts) and long answers as their gist
 * (answer-gist.ts); the current turn's arguments are cut only past CURRENT_ARGUMENT_KEEP_CHARS
 * (a 5 MB old_string would leave no room for the tool's answer).
 */
export function stepItems(items: readonly TurnItem[], ctx: Pick<SectionContext, "toolOutputTokens" | "count" | "reasoningBack">, past?: PastTurnForm): InputItem[] {
  const out: InputItem[] = [];
  const pastTurn = past !== undefined;
  for (const item of items) {
    if (item.kind === "assistant") {
      if (item.text === "") continue;
      // A past turn's long answer is its gist (ADR 0087); this turn's answers stay whole.
      const gist = past ? answerGist(item.text, past.answerTokens, ctx.count, past.turn) : { text: item.text, leftOut: 0 };
      if (past) past.leftOut += gist.leftOut;
      out.push({ type: "message", role: "assistant", content: gist.text });
      continue;
    }
    if (ctx.reasoningBack && item.reasoning !== undefined && item.reasoning !== "") out.push({ type: "reasoning_text", text: item.reasoning });
    // This turn's reasoning items go back to its later steps (Responses wire); a past turn's the API drops.
    if (!ctx.reasoningBack && !pastTurn) for (const reasoning of item.reasoningItems ?? []) out.push({ type: "reasoning", ...reasoning });
    const args = condenseToolArguments(item.arguments, pastTurn ? ARGUMENT_KEEP_CHARS : CURRENT_ARGUMENT_KEEP_CHARS);
    out.push({ type: "function_call", call_id: item.callId, name: item.name, arguments: args });
    // Tool output is data: a valarmind tag inside it (a file that forges one) is escaped like in every data message.
    const output = escapeOwnTags(shortenHeadTail(item.output, ctx.toolOutputTokens, ctx.count).text);
    out.push({ type: "function_call_output", call_id: item.callId, output });
  }
  return out;
}

/**
 * A window turn's items: verbatim but for long past tool arguments and long answers (their gist),
 * with its per-turn part after the message. A turn's form is fixed once it entered the window and
 * every request renders the whole window, so the items (and their tokens) are made once per turn,
 * output cap and answer cap (the cutoff lowers the output cap) instead of on every build.
 */
type FormContext = Pick<SectionContext, "toolOutputTokens" | "answerTokens" | "count" | "reasoningBack">;

interface WindowForm {
  cap: number;
  answerTokens: number;
  reasoning: boolean;
  items: InputItem[];
  /** Tokens of the turn's answers its gists left out. */
  leftOut: number;
  tokens?: number;
}

const windowForms = new WeakMap<Turn, WindowForm>();

function windowForm(turn: Turn, ctx: FormContext): WindowForm {
  let form = windowForms.get(turn);
  const reasoning = ctx.reasoningBack === true;
  if (form?.cap !== ctx.toolOutputTokens || form.reasoning !== reasoning || form.answerTokens !== ctx.answerTokens) {
    // The turn's per-turn part (state changes, volatile context) sits where its requests sent it: after the message, before the steps.
    const context = turnContextText(turn.context);
    const preamble: InputItem[] = context === "" ? [] : [{ type: "message", role: "user", content: context }];
    const past: PastTurnForm = { turn: turn.turn, answerTokens: ctx.answerTokens, leftOut: 0 };
    const items: InputItem[] = [{ type: "message", role: "user", content: turn.user }, ...preamble, ...stepItems(turn.items, ctx, past)];
    form = { cap: ctx.toolOutputTokens, answerTokens: ctx.answerTokens, reasoning, items, leftOut: past.leftOut };
    windowForms.set(turn, form);
  }
  return form;
}

export function turnItems(turn: Turn, ctx: FormContext): InputItem[] {
  return windowForm(turn, ctx).items;
}

/** Tokens a window turn takes in the prompt (its items as rendered). */
export function windowTurnTokens(turn: Turn, ctx: FormContext): number {
  const form = windowForm(turn, ctx);
  form.tokens ??= form.items.reduce((n, item) => n + ctx.count(inputItemText(item)) + 4, 0);
  return form.tokens;
}

function windowTurnDetail(turn: Turn, first: number | undefined, last: number | undefined, leftOut: number): string {
  const gist = leftOut > 0 ? `; its answer as a gist, ${leftOut} tokens left out (recall_turn)` : "";
  return `turn ${turn.turn} of the window (turns ${first}–${last}), as it entered the window${gist}`;
}

/**
 * The window's turns, oldest first, each in the form it took when it entered the window — the
 * user's message verbatim, long answers as their gist, past tool arguments cut, outputs as their
 * prompt summaries — and never rewritten until it folds into the summary (issue 12): every request
 * of the session appends to the previous one, so its whole prefix stays cached between folds.
 */
export const conversationSection: Section = {
  id: "conversation",
  region: "conversation",
  stable: true,
  placement: "items",
  type: "turn",
  format: "items",
  reason: "window_turn",
  render: (ctx) => {
    const first = ctx.turns[0]?.turn;
    const last = ctx.turns.at(-1)?.turn;
    return ctx.turns.map((turn): Piece => {
      const form = windowForm(turn, ctx);
      return {
        id: `turn:${turn.turn}`,
        type: "turn",
        format: "items",
        reason: "window_turn",
        detail: windowTurnDetail(turn, first, last, form.leftOut),
        placement: "items",
        items: form.items,
      };
    });
  },
};
