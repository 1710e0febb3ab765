/**
 * Splits streaming markdown into blocks that can no longer change and the open tail. Only the tail
 * is re-lexed as deltas arrive, so a long answer does not re-parse the world each frame.
 */
import { lexer } from "marked";

export interface StreamSplit {
  /** Raw source of each finished block, in order. */
  settled: string[];
  /** The source still open (the last block, which the next delta may extend). */
  open: string;
}

/**
 * A block is settled once a later non-blank block has started: a blank line alone does not settle
 * it, because a list may continue after one.
 */
export function splitSettled(source: string): StreamSplit {
  if (source === "") return { settled: [], open: "" };
  const tokens = lexer(source);
  const consumed = tokens.reduce((sum, token) => sum + token.raw.length, 0);
  // The lexer normalises some input (tabs, CRs); when offsets no longer line up, settle nothing.
  if (consumed !== source.length) return { settled: [], open: source };
  let lastContent = -1;
  tokens.forEach((token, index) => {
    if (token.type !== "space") lastContent = index;
  });
  if (lastContent <= 0) return { settled: [], open: source };
  const settled: string[] = [];
  let offset = 0;
  for (let index = 0; index < lastContent; index++) {
    const token = tokens[index];
    if (!token) break;
    if (token.type !== "space" && token.type !== "def") settled.push(token.raw);
    offset += token.raw.length;
  }
  return { settled, open: source.slice(offset) };
}
