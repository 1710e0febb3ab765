/**
 * What a session learns from its turn requests to fold its window by cost and to let the fold
 * request ride the cache (ADR 0074): the last request (the next one is compared with it), its
 * manifest figures and requests per turn for the rent-or-buy decision (memory/fold-economics.ts),
 * and the input a fold request repeats (model-summarizer.ts `foldContext`).
 *
 *   planner.noteInput(input);                                 // before each turn request is built
 *   planner.noteBuilt(input, built);                          // after
 *   memory.slide(summarizer, signal, (turns, summary) => planner.decide(turns, summary, memory.lastTurn));
 *   planner.context(memory);                                  // what the fold request repeats
 */
import type { Settings } from "../config/settings-schema.ts";
import { pricesFor } from "./session-cost.ts";
import { foldDecision, type FoldDecision } from "../memory/fold-economics.ts";
import type { ShortTermMemory } from "../memory/short-term.ts";
import { SUMMARY_CAP_TOKENS, SUMMARY_REWRITE_TOKENS, type RollingSummary } from "../memory/summary.ts";
import type { Turn } from "../memory/turn.ts";
import type { BuildInput, BuiltRequest } from "../prompt/builder.ts";
import type { Manifest } from "../prompt/manifest-schema.ts";
import type { PrefixTracker } from "../prompt/prefix-break.ts";
import { windowTurnTokens } from "../prompt/sections/conversation.ts";
import { foldMessageTokens } from "../prompt/standard-regions.ts";
import type { FoldContext } from "./model-summarizer.ts";

/** An output token's price in fresh input tokens, from the model's prices in settings. */
function outputPrice(settings: Settings): number | undefined {
  const prices = pricesFor(settings);
  return prices && prices.input > 0 ? prices.output / prices.input : undefined;
}

/** Regions before the summary that a fold leaves cached. */
const FIXED_REGIONS = ["tools", "core", "user", "agents", "project", "personal"];

export class FoldPlanner {
  /** The last request sent (turn or fold: they share the cache). */
  readonly prefix: PrefixTracker = { previous: undefined };
  private base: Omit<BuildInput, "turn" | "memory" | "task"> | undefined;
  private why: string | undefined;
  private lastItems: Manifest["items"] = [];
  /** The last turn request's tokens and budget: the next turn must fit. */
  private lastTotals: { requestTokens: number; budgetTokens: number } | undefined;
  private turnRequests = 0;
  private turnsRun = 0;
  /** The turn the last turn request was for: its window held the turns before it. */
  private requestTurn = 0;

  constructor(
    private readonly settings: Settings,
    private readonly count: (text: string) => number,
  ) {}

  /** Before a turn request is built from `input` (a budget fold during the build repeats it too). */
  noteInput(input: BuildInput): void {
    this.base = {
      settings: input.settings,
      sessionId: input.sessionId,
      ...(input.now && { now: input.now }),
      ...(input.tools && { tools: input.tools }),
      ...(input.sources && { sources: input.sources }),
    };
    this.requestTurn = input.turn;
  }

  /** After the turn request was built. */
  noteBuilt(input: BuildInput, built: BuiltRequest): void {
    this.prefix.previous = built.prefix;
    this.lastItems = built.manifest.items;
    this.lastTotals = { requestTokens: built.manifest.total_tokens, budgetTokens: built.manifest.budget_tokens };
    this.turnRequests += 1;
    if ((input.step ?? 1) === 1) this.turnsRun += 1;
  }

  /** Whether folding the window now pays (fold-economics.ts), from the last request's manifest figures. */
  decide(turns: readonly Turn[], summary: RollingSummary | undefined, lastTurn: number): FoldDecision {
    const region = (names: string[]) => this.lastItems.filter((i) => names.includes(i.region)).reduce((n, i) => n + i.tokens, 0);
    const covered = summary ? summary.throughTurn - summary.fromTurn + 1 : 0;
    const summaryTokens = summary ? (summary.tokens ?? this.count(summary.text)) : 0;
    const decision = foldDecision({
      turns: turns.map((turn) => ({ turn: turn.turn, tokens: windowTurnTokens(turn, { toolOutputTokens: this.settings.toolOutputTokens, answerTokens: this.settings.windowAnswerTokens, count: this.count, reasoningBack: this.settings.wireApi === "chat" }) })),
      lastTurn,
      summaryTokens,
      fixedTokens: region(FIXED_REGIONS),
      // The working set follows the summary too, but counting it made the tool-heavy bench fold
      // later and cost 7% more (its items largely come from the folding turns); see ADR 0074.
      stateTokens: region(["state"]),
      requestsPerTurn: this.turnsRun > 0 ? this.turnRequests / this.turnsRun : 1,
      keepTurns: this.settings.windowBlockTurns,
      maxTurns: this.settings.shortBufferTurns,
      summaryTokensPerTurn: covered > 0 ? Math.max(20, summaryTokens / covered) : 60,
      summaryCapTokens: SUMMARY_CAP_TOKENS,
      summaryRewriteTokens: SUMMARY_REWRITE_TOKENS,
      ...(outputPrice(this.settings) !== undefined && { outputPrice: outputPrice(this.settings) }),
      foldMessageTokens: foldMessageTokens(this.count),
      ...(this.lastTotals && { headroom: this.lastTotals }),
    });
    this.why = decision.fold > 0 ? decision.why : undefined;
    return decision;
  }

  /** What a fold request repeats of the last turn request, so it rides that request's cache. */
  context(memory: ShortTermMemory): FoldContext | undefined {
    if (!this.base) return undefined;
    return { input: { ...this.base, turn: memory.lastTurn + 1, memory: memory.peek() }, shownBefore: this.requestTurn, ...(this.why && { economics: this.why }) };
  }
}
