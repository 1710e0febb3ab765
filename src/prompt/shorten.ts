/**
 * Head+tail shortening of long tool outputs: the start (where a file or a log begins) and the end
 * (where errors and results land) are kept, the middle is replaced by a marker saying how much
 * was left out. Cuts fall on line boundaries when the lines allow it.
 */
export interface Shortened {
  text: string;
  shortened: boolean;
  /** Tokens before shortening. */
  tokens: number;
}

export function shortenHeadTail(text: string, maxTokens: number, count: (text: string) => number): Shortened {
  const tokens = count(text);
  if (tokens <= maxTokens) return { text, shortened: false, tokens };
  const charsPerToken = text.length / Math.max(1, tokens);
  let budget = maxTokens;
  for (let attempt = 0; attempt < 8; attempt++) {
    const headChars = Math.floor(((budget * 2) / 3) * charsPerToken);
    const tailChars = Math.floor((budget / 3) * charsPerToken);
    const headEnd = lineCut(text, headChars, "head");
    const tailStart = lineCut(text, text.length - tailChars, "tail");
    if (tailStart <= headEnd) break;
    const middle = text.slice(headEnd, tailStart);
    const lines = middle.split("\n").length - 1;
    const marker = `\n[… ${lines > 0 ? `${lines} lines, ` : ""}${count(middle)} tokens omitted …]\n`;
    const candidate = `${text.slice(0, headEnd).replace(/\n$/, "")}${marker}${text.slice(tailStart).replace(/^\n/, "")}`;
    if (count(candidate) <= maxTokens) return { text: candidate, shortened: true, tokens };
    budget = Math.floor(budget * 0.85);
  }
  const marker = `[… ${tokens} tokens omitted …]`;
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
