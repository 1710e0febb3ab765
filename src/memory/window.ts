/**
 * The conversation window: the last SHORT_BUFFER_TURNS turns (tool results as their prompt
 * summaries). It slides in blocks of `windowBlockTurns`: once finished turns reach
 * `shortBufferTurns`, its older half (whole blocks) is folded into the rolling summary in one
 * step, so the cached prompt prefix breaks once per fold rather than on every turn.
 *
 *   const window = new ConversationWindow({ shortBufferTurns: 20, windowBlockTurns: 5 });
 *   window.push(turn);
 *   const block = window.overflowBlock();   // turns to fold now, or []
 *   if (block.length) { summary = await foldTurns(summary, block, summarizer); window.dropThrough(block.at(-1).turn); }
 *
 * `ShortTermMemory` (short-term.ts) does exactly this and writes the transcript records.
 */
import type { Turn } from "./turn.ts";

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

  /** True when the window holds whole blocks only: the newest block has just settled. */
  atBlockBoundary(): boolean {
    return this.list.length % this.options.windowBlockTurns === 0;
  }

  /** The oldest block (up to `windowBlockTurns` turns), whether or not the window is full. */
  oldestBlock(): Turn[] {
    return this.list.slice(0, this.options.windowBlockTurns);
  }

  /**
   * The turns to fold now, else []. The window holds SHORT_BUFFER_TURNS turns counting the one
   * being answered, so once finished turns reach `shortBufferTurns` its older half folds, in whole
   * blocks. With a block size that divides it, that happens at the turn where the newest block
   * settles: the summary and the settled part change together and the prefix breaks once.
   */
  overflowBlock(): Turn[] {
    if (this.list.length < this.options.shortBufferTurns) return [];
    // Fold the older half of the window (whole blocks): half as many folds as one block at a
    // time, each breaking the cached prefix once, and a smaller window on average.
    const block = this.options.windowBlockTurns;
    const blocks = Math.max(1, Math.floor(this.options.shortBufferTurns / 2 / block));
    return this.list.slice(0, blocks * block);
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
