/**
 * Exact o200k_base token counts over a RankTable: the same pre-tokenizer regex as gpt-tokenizer
 * (imported from it, so the two cannot drift) and tiktoken's byte-pair merge (lowest rank first,
 * leftmost on ties). Text that spells a special token (`<|endoftext|>`) counts as ordinary text,
 * as the API treats user content. Verified against gpt-tokenizer in test/tokens/o200k-count.test.ts.
 * Linear in the text: the merge is a heap (O(n log n) per piece) and giant pieces are chunked.
 */
import { O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/esm/encodingParams/constants";
import { lookupRank, type RankTable } from "./o200k-table.ts";

const PIECE_CACHE_LIMIT = 20_000;
/** Pieces longer than this go to a small cache of their own, so caching cannot hold megabytes. */
const SHORT_PIECE = 256;
const LONG_PIECE_CACHE_LIMIT = 256;
/**
 * Pre-tokens longer than this many UTF-16 units are counted in chunks of this size. The merge is
 * exact at any length (mergeCountHeap), but under the interpreter-only JIT (ADR 0065) it runs at
 * ~6 µs a byte, so a 1 MB word would take seconds; chunks let a repetitive giant piece (a run of
 * `=`, spaces, one long word) hit the cache. The chunked count can differ from the exact one by
 * about one token per chunk boundary (usually above it: a merge across a boundary is lost).
 * Ordinary text never has such pieces (the longest in this repository's source and docs is 59 units), so its
 * counts stay exact; test/tokens/o200k-count.test.ts checks both.
 */
export const CHUNK_UNITS = 4096;

const NONE = -1;
/** Heap keys are rank * 2^32 + position: lowest rank first, leftmost on ties, as tiktoken. */
const POSITION_SPAN = 0x1_0000_0000;

/** Typed arrays reused across pieces, grown to the longest piece seen. */
export class MergeScratch {
  next = new Int32Array(0);
  prev = new Int32Array(0);
  /** rank[i]: rank of the part starting at byte i merged with the part after it, or NONE. */
  rank = new Int32Array(0);
  heap = new Float64Array(0);

  ensure(length: number): void {
    if (this.next.length > length) return;
    const size = Math.max(length + 1, this.next.length * 2);
    this.next = new Int32Array(size);
    this.prev = new Int32Array(size);
    this.rank = new Int32Array(size);
  }
}

/**
 * tiktoken's byte-pair merge (repeatedly merge the adjacent pair of lowest rank, leftmost on
 * ties), with the pairs in a binary min-heap and the parts in a linked list: O(n log n) where the
 * array scan-and-splice form is O(n²), so one 1 MB word no longer takes minutes. The counts are
 * exact, not approximate: the heap yields the same pair the scan would. Stale heap entries are
 * skipped lazily: an entry is live while its part starts there and still has that pair rank (a
 * part's pair only grows, and ranks are unique per byte string, so a rank cannot come back).
 */
export function mergeCountHeap(table: RankTable, bytes: Uint8Array, length: number, scratch: MergeScratch): number {
  if (length <= 1) return length;
  scratch.ensure(length);
  const { next, prev, rank } = scratch;
  let heap = scratch.heap;
  let size = 0;
  const pairRank = (at: number): number => {
    const after = next[at] as number;
    if (after === NONE) return NONE;
    const end = next[after] as number;
    return lookupRank(table, bytes, at, end === NONE ? length : end);
  };
  const push = (key: number): void => {
    if (size === heap.length) {
      const grown = new Float64Array(Math.max(64, heap.length * 2));
      grown.set(heap);
      heap = grown;
      scratch.heap = grown;
    }
    let i = size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = heap[parent] as number;
      if (above <= key) break;
      heap[i] = above;
      i = parent;
    }
    heap[i] = key;
  };
  const pop = (): number => {
    const top = heap[0] as number;
    const last = heap[--size] as number;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      const right = child + 1;
      if (right < size && (heap[right] as number) < (heap[child] as number)) child = right;
      const below = heap[child] as number;
      if (below >= last) break;
      heap[i] = below;
      i = child;
    }
    heap[i] = last;
    return top;
  };

  for (let i = 0; i < length; i++) {
    next[i] = i + 1 < length ? i + 1 : NONE;
    prev[i] = i - 1;
  }
  for (let i = 0; i < length - 1; i++) {
    const r = pairRank(i);
    rank[i] = r;
    if (r !== NONE) push(r * POSITION_SPAN + i);
  }
  rank[length - 1] = NONE;
  let parts = length;
  while (size > 0) {
    const key = pop();
    const at = key % POSITION_SPAN;
    const r = (key - at) / POSITION_SPAN;
    // Merged-away parts have rank NONE, so this also skips entries for parts that no longer exist.
    if (rank[at] !== r) continue;
    const gone = next[at] as number;
    const after = next[gone] as number;
    next[at] = after;
    if (after !== NONE) prev[after] = at;
    rank[gone] = NONE;
    parts--;
    const own = pairRank(at);
    rank[at] = own;
    if (own !== NONE) push(own * POSITION_SPAN + at);
    const before = prev[at] as number;
    if (before >= 0) {
      const left = pairRank(before);
      rank[before] = left;
      if (left !== NONE) push(left * POSITION_SPAN + before);
    }
  }
  return parts;
}

export interface O200kCounter {
  count(text: string): number;
}

export function createO200kCounter(table: RankTable): O200kCounter {
  const encoder = new TextEncoder();
  let buffer = new Uint8Array(256);
  const pieceCache = new Map<string, number>();
  const longPieceCache = new Map<string, number>();
  const scratch = new MergeScratch();
  const split = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, O200K_TOKEN_SPLIT_REGEX.flags);

  function encodePiece(piece: string): number {
    // UTF-8 needs at most 3 bytes per UTF-16 unit.
    if (buffer.length < piece.length * 3) buffer = new Uint8Array(piece.length * 3);
    return encoder.encodeInto(piece, buffer).written;
  }

  const mergeCount = (length: number): number => mergeCountHeap(table, buffer, length, scratch);

  function countPiece(piece: string): number {
    if (piece.length === 1 && piece.charCodeAt(0) < 128) return 1;
    const cache = piece.length <= SHORT_PIECE ? pieceCache : longPieceCache;
    const cached = cache.get(piece);
    if (cached !== undefined) return cached;
    const length = encodePiece(piece);
    // gpt-tokenizer looks a whole piece up by its string, which a lone surrogate never matches.
    const whole = piece.isWellFormed() ? lookupRank(table, buffer, 0, length) : -1;
    const n = whole >= 0 ? 1 : mergeCount(length);
    if (cache.size >= (cache === pieceCache ? PIECE_CACHE_LIMIT : LONG_PIECE_CACHE_LIMIT)) cache.clear();
    cache.set(piece, n);
    return n;
  }

  /** A piece longer than CHUNK_UNITS is counted in chunks (see the note at CHUNK_UNITS). */
  function countLongPiece(piece: string): number {
    let n = 0;
    for (let from = 0; from < piece.length; ) {
      let to = Math.min(piece.length, from + CHUNK_UNITS);
      // Never split a surrogate pair.
      const last = piece.charCodeAt(to - 1);
      if (to < piece.length && last >= 0xd800 && last <= 0xdbff) to++;
      n += countPiece(piece.slice(from, to));
      from = to;
    }
    return n;
  }

  return {
    count(text: string): number {
      let n = 0;
      for (const [piece] of text.matchAll(split)) n += piece.length > CHUNK_UNITS ? countLongPiece(piece) : countPiece(piece);
      return n;
    },
  };
}
