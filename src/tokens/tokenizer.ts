/**
 * Exact o200k token counts, local, loaded lazily and memoised by content.
 *
 * gpt-tokenizer's o200k module takes ~0.3 s to load under Bun (parsing 200k rank strings and
 * building a Map), too slow for `valarmind compact` (150 ms target). So the ranks are read from a
 * binary table cached per user (~3 ms; built once in ~0.15 s from gpt-tokenizer's own
 * `o200k_base.tiktoken`), and counted with the same split regex and byte-pair merge; the counts
 * equal gpt-tokenizer's (test/tokens/o200k-count.test.ts). See docs/adr/0004-fast-exact-token-counts.md.
 *
 * `tokenUpperBound` (UTF-8 bytes) is a strict upper bound for text not yet counted: every o200k
 * token covers at least one byte.
 */
type CountFn = (text: string) => number;

export interface TokenizerInfo {
  /** `cache`: the rank table was read from the cache; `built`: built and cached now; `built-uncached`: built, cache not writable. */
  origin: "cache" | "built" | "built-uncached";
  cachePath: string;
  cacheError?: string;
  loadMs: number;
}

let loading: Promise<CountFn> | undefined;
let loaded: CountFn | undefined;
let info: TokenizerInfo | undefined;
const memo = new Map<string, number>();
const MEMO_LIMIT = 50_000;

export function loadTokenizer(): Promise<CountFn> {
  loading ??= (async () => {
    const started = performance.now();
    const [{ loadRankTable }, { createO200kCounter }] = await Promise.all([import("./o200k-table.ts"), import("./o200k-count.ts")]);
    const table = await loadRankTable();
    const counter = createO200kCounter(table.table);
    const count: CountFn = (text) => counter.count(text);
    info = {
      origin: table.origin,
      cachePath: table.cachePath,
      ...(table.cacheError !== undefined ? { cacheError: table.cacheError } : {}),
      loadMs: performance.now() - started,
    };
    loaded = count;
    return count;
  })();
  // A failed load (missing dependency data) must not stick: the next call retries and reports again.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

export function isTokenizerLoaded(): boolean {
  return loaded !== undefined;
}

/** Where the ranks came from and how long loading took; undefined until loaded. */
export function tokenizerInfo(): TokenizerInfo | undefined {
  return info;
}

function memoKey(text: string): string {
  // Short strings are their own key; long ones are keyed by a 64-bit hash plus length.
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
  const n = countTokensIfReady(text);
  if (n === undefined) throw new Error("tokenizer loaded but did not count (internal error)");
  return n;
}

/** Seeds the memo with a count known from elsewhere (a transcript, a disk cache). */
export function rememberTokenCount(text: string, tokens: number): void {
  memo.set(memoKey(text), tokens);
}

export function tokenUpperBound(text: string): number {
  return Buffer.byteLength(text, "utf8");
}
