/**
 * What is printed again after a resize (ADR 0084): the screen and the scrollback are cleared, and
 * the finished transcript is printed anew at the new width, but only its most recent items, about
 * MAX_REPRINT_LINES lines' worth, an answer that straddles that limit cut to its last lines. A long session's whole transcript would
 * cost seconds of rendering and hundreds of MB for every resize (a 20,000-line answer: 2 s of CPU,
 * keys echoed after 1.5 s, +320 MB), and terminals keep only so much scrollback anyway (tmux:
 * 2,000 lines). A first line says how many items were left out and where the whole session is.
 *
 *   const { items: again, leftOut, cutLines } = reprintWindow(items);
 */
import type { TranscriptItem } from "./transcript-items.ts";

/** Lines of transcript printed again after a resize, about. */
export const MAX_REPRINT_LINES = 2000;

const linesOf = (text: string | undefined) => (text === undefined || text === "" ? 0 : text.split("\n").length);

/** About how many rows an item takes (before wrapping): enough to pick a tail, not to lay it out. */
export function estimatedLines(item: TranscriptItem): number {
  switch (item.kind) {
    case "banner":
      return 2;
    case "user":
      return linesOf(item.text) + 1;
    case "markdown":
      return linesOf(item.source) + (item.gapBefore ? 1 : 0);
    case "tool":
      return 1 + linesOf(item.tool.summary) + linesOf(item.tool.diff);
    case "notice":
      return 1 + (item.hint === undefined ? 0 : 1);
    case "command":
      return 1 + item.output.lines.length;
    case "turn_stop":
      return 1;
  }
}

/** What is printed again: the items from `from` on, the first of them cut to its tail when needed. */
export interface ReprintWindow {
  from: number;
  /** The items there were when it was chosen: later ones follow `items` as they come. */
  through: number;
  /** Items before `from` left out, and lines cut from the front of the first item printed. */
  leftOut: number;
  cutLines: number;
  items: TranscriptItem[];
}

/** The newest items within `maxLines`; an answer that straddles the limit is cut to its last lines. */
export function reprintWindow(items: readonly TranscriptItem[], maxLines = MAX_REPRINT_LINES): ReprintWindow {
  let lines = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (item === undefined) continue;
    const own = estimatedLines(item);
    if (lines + own <= maxLines) {
      lines += own;
      continue;
    }
    const room = maxLines - lines;
    const rest = items.slice(i + 1);
    if (item.kind === "markdown" && room > 0) {
      const tail = markdownTail(item.source, room);
      return { from: i, through: items.length, leftOut: i, cutLines: tail.cut, items: [{ ...item, source: tail.source }, ...rest] };
    }
    // Nothing fits beside the newer items (or this one cannot be cut): at least the newest item.
    const from = rest.length > 0 ? i + 1 : i;
    return { from, through: items.length, leftOut: from, cutLines: 0, items: items.slice(from) };
  }
  return { from: 0, through: items.length, leftOut: 0, cutLines: 0, items: [...items] };
}

const FENCE = /^\s{0,3}(```|~~~)/;

/** The last `lines` lines of a markdown source; reopened as code when the cut falls inside a fenced block. */
export function markdownTail(source: string, lines: number): { source: string; cut: number } {
  const all = source.split("\n");
  const cut = Math.max(0, all.length - lines);
  const dropped = all.slice(0, cut);
  const openFence = dropped.filter((line) => FENCE.test(line)).length % 2 === 1;
  return { source: `${openFence ? "```\n" : ""}${all.slice(cut).join("\n")}`, cut };
}

/** The first line printed again after a resize that left older output out. */
export function leftOutNotice(id: string, window: ReprintWindow, sessionId: string): TranscriptItem {
  const what = [window.leftOut > 0 ? `${window.leftOut} earlier item(s)` : "", window.cutLines > 0 ? `${window.cutLines} line(s) of the answer below` : ""].filter((part) => part !== "").join(" and ");
  return { kind: "notice", id, tone: "info", text: `${what} not printed again after the resize; valarmind sessions show ${sessionId} prints the whole session` };
}
