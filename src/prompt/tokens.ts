/**
 * Exact o200k token counts from a local tokenizer (gpt-tokenizer). Loading the ranks costs
 * ~0.4 s under Bun, so the module loads lazily, once, and counts are memoised by content hash.
 * `tokenUpperBound` (UTF-8 bytes) is a strict upper bound for text not yet counted: every o200k
 * token covers at least one byte.
 */
type CountFn = (text: string) => number;

let loading: Promise<CountFn> | undefined;
let loaded: CountFn | undefined;
const memo = new Map<string, number>();
const MEMO_LIMIT = 50_000;

export function loadTokenizer(): Promise<CountFn> {
  loading ??= import("gpt-tokenizer/encoding/o200k_base").then((mod) => {
    const count: CountFn = (text) => mod.countTokens(text);
    loaded = count;
    return count;
  });
  return loading;
}

export function isTokenizerLoaded(): boolean {
  return loaded !== undefined;
}

function memoKey(text: string): string {
  // Short strings are their own key; long ones are keyed by a fast 64-bit hash plus length.
  return text.length <= 64 ? text : `${text.length}:${Bun.hash(text).toString(36)}`;
}

/** Exact count if the tokenizer is loaded or the text was counted before; otherwise undefined. */
export function countTokensIfReady(text: string): number | undefined {
  if (text.length === 0) return 0;
  const key = memoKey(text);
  const hit = memo.get(key);
  if (hit !== undefined) return hit;
  if (!loaded) return undefined;
  const n = loaded(text);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(key, n);
  return n;
}

/** Exact o200k token count (loads the tokenizer on first use). */
export async function countTokens(text: string): Promise<number> {
  const ready = countTokensIfReady(text);
  if (ready !== undefined) return ready;
  await loadTokenizer();
  return countTokensIfReady(text) ?? 0;
}

/** Seeds the memo with a count known from elsewhere (a transcript, a disk cache). */
export function rememberTokenCount(text: string, tokens: number): void {
  memo.set(memoKey(text), tokens);
}

export function tokenUpperBound(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
