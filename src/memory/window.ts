/**
 * The conversation window: at most SHORT_BUFFER_TURNS turns (tool results as their prompt
 * summaries), each unchanged from the moment it enters until it folds into the rolling summary
 * (ADR 0074). When to fold is the session's call (fold-economics.ts: when it pays, keeping the
 * last `windowBlockTurns`); without it — previews, the offline fallback — the window folds all
 * but the last `windowBlockTurns` once finished turns reach `shortBufferTurns`. A fold forced by
 * the budget takes the oldest `budgetFoldTurns` at a time.
 *
 *   const window = new ConversationWindow({ shortBufferTurns: 20, windowBlockTurns: 1 });
 *   window.push(turn);
 *   const block = window.overflowBlock();   // turns to fold now (window full), or []
 *   if (block.length) { summary = await foldTurns(summary, block, summarizer); window.dropThrough(block.at(-1).turn); }
 *
 * `ShortTermMemory.slide` (short-term.ts) does this and writes the transcript records.
 */
import type { Turn } from "./turn.ts";

/**
 * A fold forced by the budget (the cutoff's fold_window, the offline fold after
 * `context_length_exceeded`) takes at least this many of the oldest turns at a time, even when
 * `windowBlockTurns` keeps fewer at a cost fold: a window over budget is over again a turn later,
 * and each fold is a model call (ADR 0074: one turn at a time made chat-40 at
 * MAX_CONTEXT_TOKENS=4500 send 35 fold requests instead of 15, 1.3× the effective input).
 */
export const BUDGET_FOLD_TURNS = 3;

/** How many of the oldest turns a budget fold takes. */
export function budgetFoldTurns(windowBlockTurns: number): number {
  return Math.max(windowBlockTurns, BUDGET_FOLD_TURNS);
}

export interface WindowOptions {
  shortBufferTurns: number;
  windowBlockTurns: number;
}

export class ConversationWindow {
  readonly options: WindowOptions;
  private list: Turn[];

  constructor(options: WindowOptions, turns: readonly Turn[] = []) {
    if (options.windowBlockTurns < 1 || options.windowBlockTurns > options.shortBufferTurns) {
      throw new RangeError(`windowBlockTurns (${options.windowBlockTurns}) must be between 1 and shortBufferTurns (${options.shortBufferTurns})`);
    }
    this.options = options;
    this.list = [...turns];
  }

  /** The call ids of the window's tool exchanges: every request replays them. */
  callIds(): string[] {
    return this.list.flatMap((turn) => turn.items.flatMap((item) => (item.kind === "tool" ? [item.callId] : [])));
  }

  get turns(): readonly Turn[] {
    return this.list;
  }

  get size(): number {
    return this.list.length;
  }

  /** First and last turn numbers held, or undefined when empty. */
  span(): { first: number; last: number } | undefined {
    const first = this.list[0];
    const last = this.list.at(-1);
    return first && last ? { first: first.turn, last: last.turn } : undefined;
  }

  push(turn: Turn): void {
    const last = this.list.at(-1);
    if (last && turn.turn <= last.turn) {
      throw new RangeError(`turn ${turn.turn} pushed after turn ${last.turn}; the window only grows forward`);
    }
    this.list.push(turn);
  }

  /** The oldest block a budget fold takes (up to `budgetFoldTurns` turns), whether or not the window is full. */
  oldestBlock(): Turn[] {
    return this.list.slice(0, budgetFoldTurns(this.options.windowBlockTurns));
  }

  /**
   * The turns to fold when the window is full, else []: once finished turns reach
   * `shortBufferTurns`, all but the last `windowBlockTurns` fold — the same rule as a full window
   * in the cost decision (fold-economics.ts), used when no decision is given (short-term.ts `slide`,
   * the dry-run preview).
   */
  overflowBlock(): Turn[] {
    if (this.list.length < this.options.shortBufferTurns) return [];
    return this.list.slice(0, this.list.length - this.options.windowBlockTurns);
  }

  /** Removes every turn numbered `turn` or lower; returns them. */
  dropThrough(turn: number): Turn[] {
    const index = this.list.findIndex((t) => t.turn > turn);
    const cut = index === -1 ? this.list.length : index;
    return this.list.splice(0, cut);
  }

  clone(): ConversationWindow {
    return new ConversationWindow(this.options, this.list);
  }
}
