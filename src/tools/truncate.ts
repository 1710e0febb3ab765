/**
 * Central head+tail truncation of what a tool returns to the model. The cap is in tokens; when
 * no exact count is at hand the UTF-8 byte length is used as a strict upper bound (every o200k
 * token covers at least one byte), so the cap always holds. Text is cut by bytes before it is
 * counted, so the work is bounded by the cap, not by the output's size (issue 9).
 */
export type TokenCounter = (text: string) => number | undefined;

export interface Truncation {
  text: string;
  cutBytes: number;
  cutLines: number;
}

const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");

/** Keeps whole lines from the head and tail while their cost fits `budget`. */
function pickLines(lines: string[], budget: number, cost: (line: string) => number): { head: number; tail: number } {
  const half = Math.floor(budget / 2);
  let head = 0;
  let used = 0;
  while (head < lines.length) {
    const c = cost(`${lines[head] ?? ""}\n`);
    if (used + c > half) break;
    used += c;
    head++;
  }
  let tail = 0;
  let tailUsed = 0;
  const tailBudget = budget - used;
  while (tail < lines.length - head) {
    const c = cost(`${lines[lines.length - 1 - tail] ?? ""}\n`);
    if (tailUsed + c > tailBudget) break;
    tailUsed += c;
    tail++;
  }
  return { head, tail };
}

function marker(cutBytes: number, cutLines: number): string {
  return `[… ${cutBytes} bytes (${cutLines} lines) cut from the middle of this output to fit the tool-output cap; narrow the request (a line range, a path, a glob, a pattern) to see them …]`;
}

/** Cuts the middle of a single long line (no line structure to keep). */
function cutChars(text: string, budget: number): Truncation {
  const half = Math.max(0, Math.floor(budget / 2));
  const headBytes = Buffer.from(text, "utf8").subarray(0, half).toString("utf8").replace(/\uFFFD$/, "");
  const tailBuf = Buffer.from(text, "utf8");
  const tailText = tailBuf.subarray(Math.max(headBytes.length, tailBuf.length - half)).toString("utf8").replace(/^\uFFFD/, "");
  const cutBytes = byteLength(text) - byteLength(headBytes) - byteLength(tailText);
  return { text: `${headBytes}\n${marker(cutBytes, 0)}\n${tailText}`, cutBytes, cutLines: 0 };
}

function headTail(text: string, lines: string[], maxTokens: number, cost: (s: string) => number): Truncation {
  // Reserve room for the marker itself (its numbers are at most as long as these).
  const budget = Math.max(0, maxTokens - cost(marker(byteLength(text), lines.length)) - 2);
  const { head, tail } = pickLines(lines, budget, cost);
  if (head + tail === 0) return cutChars(text, budget);
  const kept = [...lines.slice(0, head), ...lines.slice(lines.length - tail)];
  const cutLines = lines.length - head - tail;
  const cutBytes = byteLength(text) - byteLength(kept.join("\n"));
  const out = [...lines.slice(0, head), marker(cutBytes, cutLines), ...lines.slice(lines.length - tail)].join("\n");
  return { text: out, cutBytes, cutLines };
}

/**
 * Strings longer than this many UTF-8 bytes per token of the cap are costed by their bytes, never
 * counted: a 5 MB single line is cut by bytes, then only what is kept is counted. o200k averages
 * ~4 bytes a token, so only sparse text (long runs of one character) is cut harder than it must be.
 */
const COUNTED_BYTES_PER_TOKEN = 8;

/**
 * Returns `text` unchanged when it fits `maxTokens`, else its head and tail with a marker saying
 * how much was cut. `count` gives exact token counts when available (undefined → byte bound).
 */
export function truncateHeadTail(text: string, maxTokens: number, count: TokenCounter = () => undefined): Truncation {
  if (byteLength(text) <= maxTokens) return { text, cutBytes: 0, cutLines: 0 };
  const countLimit = maxTokens * COUNTED_BYTES_PER_TOKEN;
  const cost = (s: string): number => (byteLength(s) > countLimit ? undefined : count(s)) ?? byteLength(s);
  if (cost(text) <= maxTokens) return { text, cutBytes: 0, cutLines: 0 };
  const lines = text.split("\n");
  const byTokens = headTail(text, lines, maxTokens, cost);
  // Per-line counts can differ slightly from the joined text's; fall back to bytes if over.
  if (cost(byTokens.text) <= maxTokens) return byTokens;
  return headTail(text, lines, maxTokens, byteLength);
}
