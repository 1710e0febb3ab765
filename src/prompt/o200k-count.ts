/**
 * Exact o200k_base token counts over a RankTable: the same pre-tokenizer regex as gpt-tokenizer
 * (imported from it, so the two cannot drift) and tiktoken's byte-pair merge (lowest rank first,
 * leftmost on ties). Text that spells a special token (`<|endoftext|>`) counts as ordinary text,
 * as the API treats user content. Verified against gpt-tokenizer in test/prompt/o200k-count.test.ts.
 */
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/esm/encodingParams/constants";
import { lookupRank, type RankTable } from "./o200k-table.ts";

const PIECE_CACHE_LIMIT = 20_000;

export interface O200kCounter {
  count(text: string): number;
}

export function createO200kCounter(table: RankTable): O200kCounter {
  const encoder = new TextEncoder();
  let buffer = new Uint8Array(256);
  const pieceCache = new Map<string, number>();
  const split = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, O200K_TOKEN_SPLIT_REGEX.flags);

  function encodePiece(piece: string): number {
    // UTF-8 needs at most 3 bytes per UTF-16 unit.
    if (buffer.length < piece.length * 3) buffer = new Uint8Array(piece.length * 3);
    return encoder.encodeInto(piece, buffer).written;
  }

  /** Number of tokens tiktoken's merge leaves for buffer[0..length). */
  function mergeCount(length: number): number {
    const bytes = buffer;
    const starts: number[] = [];
    const ranks: number[] = [];
    const rankOf = (i: number): number => {
      const from = starts[i];
      const to = starts[i + 2];
      if (from === undefined || to === undefined) return Number.POSITIVE_INFINITY;
      const rank = lookupRank(table, bytes, from, to);
      return rank < 0 ? Number.POSITIVE_INFINITY : rank;
    };
    for (let i = 0; i <= length; i++) starts.push(i);
    for (let i = 0; i <= length; i++) ranks.push(rankOf(i));
    while (starts.length > 1) {
      let lowest = Number.POSITIVE_INFINITY;
      let at = -1;
      for (let i = 0; i < ranks.length - 1; i++) {
        const rank = ranks[i] as number;
        if (rank < lowest) {
          lowest = rank;
          at = i;
        }
      }
      if (at < 0) break;
      starts.splice(at + 1, 1);
      ranks.splice(at, 1);
      ranks[at] = rankOf(at);
      if (at > 0) ranks[at - 1] = rankOf(at - 1);
    }
    return starts.length - 1;
  }

  function countPiece(piece: string): number {
    if (piece.length === 1 && piece.charCodeAt(0) < 128) return 1;
    const cached = pieceCache.get(piece);
    if (cached !== undefined) return cached;
    const length = encodePiece(piece);
    // gpt-tokenizer looks a whole piece up by its string, which a lone surrogate never matches.
    const whole = piece.isWellFormed() ? lookupRank(table, buffer, 0, length) : -1;
    const n = whole >= 0 ? 1 : mergeCount(length);
    if (pieceCache.size >= PIECE_CACHE_LIMIT) pieceCache.clear();
    pieceCache.set(piece, n);
    return n;
  }

  return {
    count(text: string): number {
      let n = 0;
      for (const [piece] of text.matchAll(split)) n += countPiece(piece);
      return n;
    },
  };
}
