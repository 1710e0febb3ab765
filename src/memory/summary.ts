/**
 * The rolling summary: what the conversation said before the window. When the window slides (or
 * the budget forces a fold), the evicted block is folded into it through a `Summarizer`.
 * `ExtractiveSummarizer` works offline and deterministically: one line per turn (the request,
 * the tools and files touched, the answer's first sentence); when it outgrows its cap, the
 * oldest lines are merged into one "earlier turns" line listing their files and tools, down to half
 * the cap (so the next folds append again). The
 * agent adds a model-backed summarizer (agent/model-summarizer.ts) whose fold request rides the turn
 * request's cache (prompt/standard-regions.ts `foldRequestRegions`).
 */
import { factsOfRecordedCall } from "../tools/call-facts.ts";
import { finalAnswer, type ToolExchange, type Turn } from "./turn.ts";
import { shortenHeadTail } from "../prompt/shorten.ts";
import { loadTokenizer } from "../tokens/tokenizer.ts";

/**
 * The summary's cap, and what a rewrite at the cap shrinks it to. Below the cap a fold only appends
 * lines, so the summary's bytes stay a prefix and the next request stays cached up to the new
 * lines; at the cap it is rewritten (a prefix break and a longer answer), to half the cap, so
 * that several folds append again before the next rewrite (ADR 0074).
 */
export const SUMMARY_CAP_TOKENS = 1500;
export const SUMMARY_REWRITE_TOKENS = 750;
/** The share of a summary cut to its cap that is kept from its end: its newest lines, the turns that just left the window (shortenHeadTail). */
export const SUMMARY_TAIL_SHARE = 2 / 3;

export interface RollingSummary {
  text: string;
  /** First and last turn the summary covers. */
  fromTurn: number;
  throughTurn: number;
  tokens?: number;
}

export interface Summarizer {
  /** Recorded in the transcript's summary records and the manifest. */
  readonly name: string;
  /** Returns the new summary text: `previousSummary` ("" when none) with `evictedTurns` folded in. */
  summarize(previousSummary: string, evictedTurns: readonly Turn[], signal?: AbortSignal): Promise<string>;
}

/** The prompt closes the summary with its turn range, "(turns 1–16)"; a summarizer that copied it does not keep it. */
export function withoutRangeLines(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^\(turns \d+[–-]\d+\)$/.test(line.trim()))
    .join("\n")
    .trim();
}

/** Folds turns into a summary (a new one when `previous` is undefined). */
export async function foldTurns(
  previous: RollingSummary | undefined,
  turns: readonly Turn[],
  summarizer: Summarizer,
  signal?: AbortSignal,
): Promise<RollingSummary> {
  const first = turns[0];
  const last = turns.at(-1);
  if (!first || !last) throw new RangeError("foldTurns needs at least one turn");
  const text = withoutRangeLines(await summarizer.summarize(previous?.text ?? "", turns, signal));
  return { text, fromTurn: previous?.fromTurn ?? first.turn, throughTurn: last.turn };
}

const EARLIER = /^Turns (\d+)[–-](\d+) \(condensed\): files (.*?); tools (.*)$/;
const TURN_LINE = /^T(\d+) /;

function firstSentence(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const end = flat.search(/(?<=[.!?])\s/);
  const sentence = end > 0 ? flat.slice(0, end) : flat;
  return sentence.length > max ? `${sentence.slice(0, max - 1)}…` : sentence;
}

/** The first path a tool call declares it touches; a call that names none is listed by tool name. */
export function toolTarget(call: ToolExchange): string | undefined {
  return factsOfRecordedCall(call.name, call.arguments)?.locations[0]?.path;
}

function turnLine(turn: Turn): string {
  const parts = [`T${turn.turn} user: ${firstSentence(turn.user, 160)}`];
  const calls = turn.items.filter((item): item is ToolExchange => item.kind === "tool");
  if (calls.length > 0) {
    const shown = calls.slice(0, 6).map((call) => {
      const target = toolTarget(call);
      return `${call.name}${target ? `(${target})` : ""}${call.isError ? "!" : ""}`;
    });
    if (calls.length > shown.length) shown.push(`+${calls.length - shown.length} more`);
    parts.push(`tools: ${shown.join(", ")}`);
  }
  const answer = finalAnswer(turn);
  if (answer) parts.push(`answer: ${firstSentence(answer, 200)}`);
  if (turn.stopReason && turn.stopReason !== "completed") parts.push(`(${turn.stopReason})`);
  return parts.join(" | ");
}

interface Earlier {
  from: number;
  through: number;
  files: Set<string>;
  tools: Map<string, number>;
}

function parseEarlier(line: string): Earlier | undefined {
  const match = EARLIER.exec(line);
  if (!match) return undefined;
  const files = new Set((match[3] ?? "").split(", ").filter((f) => f !== "" && f !== "none"));
  const tools = new Map<string, number>();
  for (const entry of (match[4] ?? "").split(", ")) {
    const m = /^(.+)×(\d+)$/.exec(entry);
    if (m?.[1]) tools.set(m[1], Number(m[2]));
  }
  return { from: Number(match[1]), through: Number(match[2]), files, tools };
}

function renderEarlier(e: Earlier): string {
  const files = [...e.files].slice(0, 12);
  const tools = [...e.tools].map(([name, n]) => `${name}×${n}`);
  return `Turns ${e.from}–${e.through} (condensed): files ${files.length ? files.join(", ") : "none"}; tools ${tools.length ? tools.join(", ") : "none"}`;
}

/** Merges a turn line into the "earlier" aggregate (files and tool counts only). */
function absorb(e: Earlier | undefined, line: string): Earlier {
  const turn = Number(TURN_LINE.exec(line)?.[1] ?? 0);
  const into = e ?? { from: turn, through: turn, files: new Set<string>(), tools: new Map<string, number>() };
  into.from = Math.min(into.from, turn || into.from);
  into.through = Math.max(into.through, turn);
  const tools = /\| tools: (.*?)(?: \| |$)/.exec(line)?.[1] ?? "";
  for (const call of tools.split(", ")) {
    const m = /^([\w.-]+)(?:\((.*)\))?!?$/.exec(call);
    if (!m?.[1]) continue;
    into.tools.set(m[1], (into.tools.get(m[1]) ?? 0) + 1);
    if (m[2]) into.files.add(m[2]);
  }
  return into;
}

export interface ExtractiveOptions {
  /** Cap on the summary's length in characters; default 6000. */
  maxChars?: number;
  /** What a summary past its cap is condensed to, in characters; default half of `maxChars`. */
  rewriteChars?: number;
  /** Cap in tokens, counted (CJK text or hashes run well under 4 characters a token); default SUMMARY_CAP_TOKENS. */
  maxTokens?: number;
}

export class ExtractiveSummarizer implements Summarizer {
  readonly name = "extractive";
  private readonly maxChars: number;
  private readonly rewriteChars: number;
  private readonly maxTokens: number;

  constructor(options: ExtractiveOptions = {}) {
    this.maxChars = options.maxChars ?? SUMMARY_CAP_TOKENS * 4;
    this.rewriteChars = Math.min(this.maxChars, options.rewriteChars ?? Math.floor(this.maxChars / 2));
    this.maxTokens = Math.max(1, options.maxTokens ?? SUMMARY_CAP_TOKENS);
  }

  async summarize(previousSummary: string, evictedTurns: readonly Turn[], signal?: AbortSignal): Promise<string> {
    signal?.throwIfAborted();
    const count = await loadTokenizer();
    const lines = previousSummary.split("\n").filter((line) => line.trim() !== "");
    let earlier: Earlier | undefined;
    const first = lines[0];
    if (first !== undefined) {
      earlier = parseEarlier(first);
      if (earlier) lines.shift();
    }
    lines.push(...evictedTurns.map(turnLine));
    const tokensOf = new Map<string, number>();
    const tokens = (line: string) => tokensOf.get(line) ?? tokensOf.set(line, count(line) + 1).get(line) ?? 0;
    const over = (chars: number, maxTokens: number) => {
      const head = earlier ? renderEarlier(earlier) : "";
      const size = lines.reduce((n, line) => n + line.length + 1, head.length);
      return size > chars || lines.reduce((n, line) => n + tokens(line), head ? tokens(head) : 0) > maxTokens;
    };
    // Under the cap the new lines are only appended; past it, condensed well below it (hysteresis).
    const rewrite = over(this.maxChars, this.maxTokens);
    const [chars, maxTokens] = rewrite ? [this.rewriteChars, Math.floor(this.maxTokens / 2)] : [this.maxChars, this.maxTokens];
    while (lines.length > 1 && over(chars, maxTokens)) {
      const oldest = lines.shift();
      if (oldest !== undefined) earlier = absorb(earlier, oldest);
    }
    const text = [...(earlier ? [renderEarlier(earlier)] : []), ...lines].join("\n");
    // One line can still be over (a turn's long first sentence in CJK, a long list of files): cut, never over the cap.
    return shortenHeadTail(text, this.maxTokens, count, SUMMARY_TAIL_SHARE).text;
  }
}
