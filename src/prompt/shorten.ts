/**
 * Head+tail shortening of long tool outputs: the start (where a file or a log begins) and the end
 * (where errors and results land) are kept, the middle is replaced by a marker saying how much
 * was left out. Cuts fall on line boundaries when the lines allow it.
 *
 * Text longer than WHOLE_UNITS_PER_TOKEN × the cap is never counted whole: only a head and a tail
 * window (WINDOW_UNITS_PER_TOKEN × the cap each) are, so a 5 MB single line costs what 2 × 16k
 * units do. Below that, counts are exact as before (counting is linear, ~0.1 s a MB at worst).
 */
export interface Shortened {
  text: string;
  shortened: boolean;
  /** Tokens before shortening; for text too long to count whole, its UTF-8 bytes (an upper bound). */
  tokens: number;
}

/** o200k averages ~4 UTF-16 units a token on code and prose; 8 leaves room for sparse text. */
const WINDOW_UNITS_PER_TOKEN = 8;
const WHOLE_UNITS_PER_TOKEN = 64;

/**
 * `tailShare`: the part of the cap the tail gets (default a third: a log's errors land at its end,
 * its start says what it is). A rolling summary, oldest first, keeps more of its tail: its newest
 * lines are the turns that just left the window, written nowhere else in the prompt.
 */
export function shortenHeadTail(text: string, maxTokens: number, count: (text: string) => number, tailShare = 1 / 3): Shortened {
  const cap = Math.max(1, maxTokens);
  const window = cap * WINDOW_UNITS_PER_TOKEN;
  const whole = text.length <= cap * WHOLE_UNITS_PER_TOKEN;
  const tokens = whole ? count(text) : Buffer.byteLength(text, "utf8");
  if (whole && tokens <= maxTokens) return { text, shortened: false, tokens };
  // The density of the kept ends is what matters for how much of them fits.
  const sampleTokens = whole ? tokens : count(text.slice(0, window) + text.slice(-window));
  const charsPerToken = (whole ? text.length : 2 * window) / Math.max(1, sampleTokens);
  let budget = maxTokens;
  for (let attempt = 0; attempt < 8; attempt++) {
    const headChars = Math.min(window, Math.floor(budget * (1 - tailShare) * charsPerToken));
    const tailChars = Math.min(window, Math.floor(budget * tailShare * charsPerToken));
    const headEnd = lineCut(text, headChars, "head");
    const tailStart = lineCut(text, text.length - tailChars, "tail");
    if (tailStart <= headEnd) break;
    const middle = text.slice(headEnd, tailStart);
    const lines = middle.split("\n").length - 1;
    const amount = middle.length <= cap * WHOLE_UNITS_PER_TOKEN ? `${count(middle)} tokens` : `${Buffer.byteLength(middle, "utf8")} bytes`;
    const marker = `\n[… ${lines > 0 ? `${lines} lines, ` : ""}${amount} omitted …]\n`;
    const candidate = `${text.slice(0, headEnd).replace(/\n$/, "")}${marker}${text.slice(tailStart).replace(/^\n/, "")}`;
    if (count(candidate) <= maxTokens) return { text: candidate, shortened: true, tokens };
    budget = Math.floor(budget * 0.85);
  }
  const marker = whole ? `[… ${tokens} tokens omitted …]` : `[… ${tokens} bytes omitted …]`;
  return { text: marker, shortened: true, tokens };
}

/** A cut position near `at`, moved to a line boundary if one is within 20% of the text kept. */
function lineCut(text: string, at: number, side: "head" | "tail"): number {
  const pos = Math.max(0, Math.min(text.length, at));
  if (side === "head") {
    const nl = text.lastIndexOf("\n", pos);
    return nl > pos * 0.8 ? nl + 1 : pos;
  }
  const nl = text.indexOf("\n", pos);
  return nl !== -1 && nl - pos < (text.length - pos) * 0.2 ? nl : pos;
}
