/**
 * The model-backed Summarizer for the rolling summary. A fold rides the cache (issue 12): its
 * request is the last turn request's prefix — the same tools, instructions, summary, state and
 * window — closed by a `fold_request` message that names the oldest turns to fold, so nearly all
 * of it is cached. When that request cannot be built (no turn request yet, the turns are not the
 * window's oldest, or it would not fit the budget uncut), the fold is sent as a request of its
 * own with only what it needs (summary and promotion rules, the previous summary, the working
 * state, the evicted turns as a transcript). The reply's `<promote>` lines are handed to
 * `promote` (see promotion.ts).
 *
 * A fold never fails the turn (issue 10). When the turns do not fit one request under the budget,
 * they are folded in parts (halves, recursively; each part's manifest has a `split_fold` step);
 * a single turn that still does not fit has its long texts cut head+tail by the builder
 * (`shorten_evicted_turns`). If a request cannot be built at all, or the model call fails, that
 * part folds with the offline extractive summarizer and the fallback is reported.
 */
import type { Settings } from "../config/settings-schema.ts";
import { describeError } from "../errors.ts";
import { describeDelay } from "../model/retry-policy.ts";
import { ExtractiveSummarizer, SUMMARY_CAP_TOKENS, SUMMARY_TAIL_SHARE, withoutRangeLines, type RollingSummary, type Summarizer } from "../memory/summary.ts";
import type { Turn } from "../memory/turn.ts";
import type { ModelClient, Usage } from "../model/types.ts";
import { BudgetExceededError } from "../prompt/budget-error.ts";
import { buildRequest, exactCounter, type BuildInput, type BuiltRequest } from "../prompt/builder.ts";
import type { PrefixTracker } from "../prompt/prefix-break.ts";
import { foldRequestRegions } from "../prompt/standard-regions.ts";
import { writeManifest, recordUsage } from "../prompt/manifest.ts";
import { shortenHeadTail } from "../prompt/shorten.ts";
import type { WorkingState } from "../state/schema.ts";
import { parsePromotions, promotionSummaryRegions, type Promotion } from "../memory/promotion.ts";

export interface ModelSummarizerOptions {
  model: ModelClient;
  settings: Settings;
  sessionId: string;
  /** Where the summary request's manifest goes (the session directory). */
  sessionDir: string;
  currentTurn: () => number;
  /** The rolling summary being extended (its own turn range labels the summary request). */
  currentSummary: () => RollingSummary | undefined;
  readState: () => Promise<WorkingState | undefined>;
  /** Applies what the folded turns settled to the working state. */
  promote: (promotions: Promotion[]) => Promise<void>;
  /** Told when the model call failed and the extractive fallback was used. */
  onFallback: (message: string) => void;
  /** Told when the model's summary had to be cut to its cap. */
  onNotice?: (message: string) => void;
  /** Told the usage of every fold request (the session's cost figures). */
  onUsage?: (usage: Usage) => void;
  /** The session's last request: a fold request is compared with it, and becomes it. */
  prefix?: PrefixTracker;
  /** The last turn request's input (its memory as now), for a fold request that rides its cache. */
  foldContext?: () => Promise<FoldContext | undefined>;
  /** How long one fold request may take, retries included, before the offline summarizer folds instead (default FOLD_DEADLINE_MS). */
  deadlineMs?: number;
}

/**
 * A fold runs after the answer, and the next message waits for it: a server that stalls must not
 * hold the session for the turn requests' own limits (4 attempts × 5 minutes without an event).
 * Two minutes is several times what a 750-token summary takes to write.
 */
export const FOLD_DEADLINE_MS = 120_000;

/** What a cache-riding fold request repeats: the turn request's input, and why the fold happens now. */
export interface FoldContext {
  input: Omit<BuildInput, "task">;
  /**
   * The last turn request was for this turn: its window held the turns before it. The turn that
   * ran since is left out of the fold request when it is not folded, so the request repeats the
   * last one's prefix and adds only its own message (the newest answer would be its first and
   * only uncached copy, sent again after the fold anyway).
   */
  shownBefore?: number;
  economics?: string;
}



interface FoldPart {
  turns: readonly Turn[];
  index: number;
  /** The whole fold, for the `split_fold` step of a part's manifest. */
  whole: { first: number; last: number; tokens: number } | undefined;
}

function span(turns: readonly Turn[]): string {
  return `${turns[0]?.turn}–${turns.at(-1)?.turn}`;
}

export class ModelSummarizer implements Summarizer {
  private readonly fallback = new ExtractiveSummarizer();
  private usedFallback = false;

  /** Read after each fold for its record: "model", or the fallback's name when any part fell back. */
  get name(): string {
    return this.usedFallback ? this.fallback.name : "model";
  }

  constructor(private readonly options: ModelSummarizerOptions) {}

  async summarize(previousSummary: string, evictedTurns: readonly Turn[], signal?: AbortSignal): Promise<string> {
    this.usedFallback = false;
    const state = await this.options.readState();
    const count = await exactCounter();
    // The rules ask for at most SUMMARY_CAP_TOKENS; a longer previous summary is cut head+tail first.
    const previous = shortenHeadTail(previousSummary, this.cap(), count).text;
    return this.foldPart(previous, { turns: evictedTurns, index: 0, whole: undefined }, state, signal);
  }

  /** The summary's cap here: SUMMARY_CAP_TOKENS, or a quarter of a small budget. */
  private cap(): number {
    return Math.min(SUMMARY_CAP_TOKENS, Math.floor(this.options.settings.maxContextTokens / 4));
  }

  /** Folds `part` into `previous`: one request when it fits whole, else its halves in turn. */
  private async foldPart(previous: string, part: FoldPart, state: WorkingState | undefined, signal?: AbortSignal): Promise<string> {
    if (part.index === 0 && !part.whole) {
      const riding = await this.buildRiding(part.turns);
      if (riding) return this.send(riding, previous, part.turns, signal, true);
    }
    let built: BuiltRequest;
    try {
      built = await this.build(previous, part.turns, state);
    } catch (error) {
      if (!(error instanceof BudgetExceededError)) throw error;
      return this.fallBack(previous, part.turns, `the summary request does not fit the budget: ${error.message}`, signal);
    }
    const cutTurns = built.manifest.cutoff_steps.some((s) => s.step === "shorten_evicted_turns");
    if (cutTurns && part.turns.length > 1) {
      const whole = part.whole ?? { first: part.turns[0]?.turn ?? 0, last: part.turns.at(-1)?.turn ?? 0, tokens: built.manifest.cutoff_steps[0]?.tokens_before ?? built.manifest.total_tokens };
      const half = Math.ceil(part.turns.length / 2);
      const first = await this.foldPart(previous, { turns: part.turns.slice(0, half), index: part.index * 2, whole }, state, signal);
      return this.foldPart(first, { turns: part.turns.slice(half), index: part.index * 2 + 1, whole }, state, signal);
    }
    if (part.whole) {
      built.manifest.cutoff_steps.unshift({
        step: "split_fold",
        detail: `turns ${span(part.turns)} of the fold of turns ${part.whole.first}–${part.whole.last}, sent as a request of its own: the whole fold did not fit the budget`,
        tokens_before: part.whole.tokens,
        tokens_after: built.manifest.total_tokens,
      });
    }
    return this.send(built, previous, part.turns, signal);
  }

  /**
   * The fold request on the last turn request's prefix, or undefined when it cannot be: no turn
   * request yet, `turns` are not the window's oldest, or it does not fit the budget uncut.
   */
  private async buildRiding(turns: readonly Turn[]): Promise<BuiltRequest | undefined> {
    const context = await this.options.foldContext?.();
    const first = turns[0];
    const last = turns.at(-1);
    const whole = context?.input.memory?.turns ?? [];
    const shown = context?.shownBefore === undefined ? whole : whole.filter((turn) => turn.turn < (context.shownBefore ?? 0));
    const window = last && shown.some((turn) => turn.turn === last.turn) ? shown : whole;
    if (!context?.input.memory || !first || !last || window[0]?.turn !== first.turn || window[turns.length - 1]?.turn !== last.turn) return undefined;
    // The budget is per request, fold requests included (a small local model may allow no more).
    const budget = this.options.settings.maxContextTokens;
    try {
      const built = await buildRequest({
        ...context.input,
        memory: { ...context.input.memory, turns: window },
        turn: this.options.currentTurn(),
        purpose: "summary",
        regions: foldRequestRegions(),
        budgetTokens: budget,
        fold: { first: first.turn, last: last.turn, count: turns.length, ...(context.economics && { economics: context.economics }) },
        ...(this.options.prefix && { previous: this.options.prefix.previous }),
      });
      // A cut request no longer repeats the turn request's prefix: fold the plain way instead.
      return built.manifest.cutoff_steps.length === 0 ? built : undefined;
    } catch (error) {
      if (error instanceof BudgetExceededError) return undefined;
      throw error;
    }
  }

  private async build(previousSummary: string, turns: readonly Turn[], state: WorkingState | undefined): Promise<BuiltRequest> {
    const { settings, sessionId } = this.options;
    const first = turns[0];
    const known = this.options.currentSummary();
    const previous =
      previousSummary === "" || !first
        ? undefined
        : { text: previousSummary, fromTurn: known?.fromTurn ?? first.turn, throughTurn: first.turn - 1 };
    return buildRequest({
      settings,
      sessionId,
      turn: this.options.currentTurn(),
      purpose: "summary",
      regions: promotionSummaryRegions(),
      sources: state ? { state } : {},
      memory: { summary: previous, turns: [], workingSet: [], overflowPolicy: "fifo", touchedFiles: [], touchedSymbols: [], events: [] },
      evictedTurns: turns,
    });
  }

  private async send(built: BuiltRequest, previousSummary: string, turns: readonly Turn[], signal?: AbortSignal, riding = false): Promise<string> {
    const manifestPath = await writeManifest(this.options.sessionDir, built.manifest);
    // The next turn request is compared with the last request on the same prefix.
    if (riding && this.options.prefix) this.options.prefix.previous = built.prefix;
    let text = "";
    let failure: string | undefined;
    let toolCall: string | undefined;
    const deadlineMs = this.options.deadlineMs ?? FOLD_DEADLINE_MS;
    const deadline = AbortSignal.timeout(deadlineMs);
    let completed = false;
    for await (const event of this.options.model.stream(built.request, signal ? AbortSignal.any([signal, deadline]) : deadline)) {
      if (event.type === "text_delta") text += event.delta;
      // A fold request offers no way to run a tool: an answer that calls one did not write the summary.
      else if (event.type === "tool_call") toolCall ??= event.call.name;
      else if (event.type === "completed") {
        completed = true;
        text = event.text || text;
        // An answer cut short (an output limit, a filter) lost its last lines: the newest turns'.
        if (event.status === "incomplete") failure = `the answer was cut short${event.incompleteReason ? ` (${event.incompleteReason})` : ""}`;
        if (event.usage) {
          // Counted first: the request was paid for whether or not its manifest can take the figure.
          this.options.onUsage?.(event.usage);
          await recordUsage(manifestPath, event.usage).catch((error: unknown) =>
            this.options.onNotice?.(`the usage of the summary request was not added to its manifest ${manifestPath}: ${describeError(error)}`),
          );
        }
      } else if (event.type === "error") failure = event.message;
    }
    // Cancelled: the fold is not made (nor made offline), and nothing is told as a failure.
    signal?.throwIfAborted();
    if (deadline.aborted && !completed) failure = `no summary within ${describeDelay(deadlineMs)}`;
    const parsed = parsePromotions(text);
    // A copy of the block's own "(turns a–b)" line is not a summary.
    let summary = withoutRangeLines(parsed.summary);
    if (failure !== undefined || toolCall !== undefined || summary === "") {
      const why = failure ?? (toolCall !== undefined ? `the model called ${JSON.stringify(toolCall.slice(0, 60))} instead of writing the summary` : "empty answer");
      return this.fallBack(previousSummary, turns, `the summary request failed (${why})`, signal);
    }
    const count = await exactCounter();
    const cap = this.cap();
    const tokens = count(summary);
    if (tokens > cap) {
      // The rules ask for at most the cap, and past it a rewrite to half of it. Cut to that half,
      // as a rewrite would: cut to the cap itself, every later fold would be over it and cut again.
      const target = Math.floor(cap / 2);
      summary = shortenHeadTail(summary, target, count, SUMMARY_TAIL_SHARE).text;
      this.options.onNotice?.(`the summary the model wrote for turns ${span(turns)} was ${tokens} tokens, over its cap of ${cap}: its head and tail were kept, ${target} tokens`);
    }
    if (parsed.promotions.length > 0) await this.options.promote(parsed.promotions);
    return summary;
  }

  private fallBack(previousSummary: string, turns: readonly Turn[], why: string, signal?: AbortSignal): Promise<string> {
    this.usedFallback = true;
    this.options.onFallback(`${why}; folded turns ${span(turns)} with the offline summarizer instead`);
    return this.fallback.summarize(previousSummary, turns, signal);
  }
}
