/**
 * Short-term memory sections: the rolling summary and the conversation window. The summary and
 * the window's settled blocks are stable (append-only between folds), so they sit in the cached
 * prefix; settled turns are condensed, recent turns verbatim (memory/condense.ts). Window tool
 * exchanges carry their prompt summaries; any output still over the cap is shortened head+tail.
 */
import type { InputItem } from "../../model/types.ts";
import type { Turn, TurnItem } from "../../memory/turn.ts";
import { tagged, type Piece, type Section, type SectionContext } from "../section.ts";
import { shortenHeadTail } from "../shorten.ts";
import { condensedTurnText, condenseToolArguments } from "../../memory/condense.ts";

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
        text: tagged("conversation_summary", summary.text, { turns, source: "summary of earlier turns" }),
      },
    ];
  },
};

/**
 * The input items of turn steps; function outputs over the cap are shortened head+tail. Past
 * turns (`pastTurn`) also have long tool arguments cut (condense.ts); the current turn's are whole.
 */
export function stepItems(items: readonly TurnItem[], ctx: SectionContext, pastTurn = false): InputItem[] {
  const out: InputItem[] = [];
  for (const item of items) {
    if (item.kind === "assistant") {
      if (item.text !== "") out.push({ type: "message", role: "assistant", content: item.text });
      continue;
    }
    const args = pastTurn ? condenseToolArguments(item.arguments) : item.arguments;
    out.push({ type: "function_call", call_id: item.callId, name: item.name, arguments: args });
    const output = shortenHeadTail(item.output, ctx.toolOutputTokens, ctx.count).text;
    out.push({ type: "function_call_output", call_id: item.callId, output });
  }
  return out;
}

/** A recent window turn, verbatim but for long past tool arguments. */
export function turnItems(turn: Turn, ctx: SectionContext): InputItem[] {
  return [{ type: "message", role: "user", content: turn.user }, ...stepItems(turn.items, ctx, true)];
}

/** A settled window turn, condensed (condense.ts); memoised because it renders on every request. */
const condensed = new WeakMap<Turn, InputItem[]>();
export function settledTurnItems(turn: Turn): InputItem[] {
  let items = condensed.get(turn);
  if (!items) {
    const text = condensedTurnText(turn);
    items = [
      { type: "message", role: "user", content: text.user },
      { type: "message", role: "assistant", content: text.assistant },
    ];
    condensed.set(turn, items);
  }
  return items;
}

/**
 * The window splits at its last block boundary: settled turns (whole blocks, counted from the
 * window's start, which folds keep aligned) sit in the stable prefix; the turns since the
 * boundary sit after the working set and state, so a new turn, a state edit or a new
 * working-set item invalidates only what follows it, and the settled part moves once per block.
 */
export function settledCount(turns: number, blockTurns: number): number {
  return Math.floor(turns / Math.max(1, blockTurns)) * Math.max(1, blockTurns);
}

function turnPieces(ctx: SectionContext, part: "settled" | "recent"): Piece[] {
  const cut = settledCount(ctx.turns.length, ctx.windowBlockTurns);
  const turns = part === "settled" ? ctx.turns.slice(0, cut) : ctx.turns.slice(cut);
  const first = ctx.turns[0]?.turn;
  const last = ctx.turns.at(-1)?.turn;
  return turns.map(
    (turn): Piece => ({
      id: `turn:${turn.turn}`,
      type: "turn",
      format: "items",
      reason: part === "settled" ? "window_turn" : "recent_turn",
      detail: `turn ${turn.turn} of the window (turns ${first}–${last}), ${part === "settled" ? "in a settled block, condensed" : "since the last block boundary, verbatim"}`,
      placement: "items",
      items: part === "settled" ? settledTurnItems(turn) : turnItems(turn, ctx),
    }),
  );
}

export const conversationSection: Section = {
  id: "conversation",
  region: "conversation",
  stable: true,
  placement: "items",
  type: "turn",
  format: "items",
  reason: "window_turn",
  render: (ctx) => turnPieces(ctx, "settled"),
};

export const recentTurnsSection: Section = {
  id: "recent_turns",
  region: "recent",
  stable: false,
  placement: "items",
  type: "turn",
  format: "items",
  reason: "recent_turn",
  render: (ctx) => turnPieces(ctx, "recent"),
};
