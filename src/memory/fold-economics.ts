/**
 * When to fold the window, by cost (issue 12, docs/adr/0074-cache-aware-memory.md). Prices follow
 * the provider's prompt cache: a cached input token costs a tenth of a fresh one, so a token that
 * stays in an unchanged prefix costs 0.1 per request, and a token re-sent after the prefix breaks
 * costs 1.
 *
 * Keeping a turn that could fold costs "rent": 0.1 × its tokens on every request. Folding costs
 * once: everything after the fold point that was cached is re-sent (the summary's new lines — or
 * all of it when it is rewritten at its cap —, the state snapshot and the kept turns, at 0.9 more
 * each), plus the fold request itself, which rides the cache (0.1 × its prefix, and its own
 * message at full price), plus the summary the model writes, priced as output (`outputPrice`
 * times a fresh input token: the model's prices when settings have them, else 4, the lowest
 * ratio of current OpenAI models). Nobody knows how long a session
 * will run, so the rule is rent-or-buy: keep paying rent until the rent the foldable turns have
 * paid since they could fold reaches FOLD_RENT_FACTOR times what a fold costs, then fold them —
 * never more than 1 + FOLD_RENT_FACTOR times the cost of the best choice made in hindsight. The
 * most recent `keepTurns` always stay verbatim; a full window (`maxTurns`) folds whatever the
 * sums say.
 *
 * The factor starts at the classic 1 and falls as the session ages. Rent-or-buy guards against a
 * session that ends right after a fold, before the fold pays back; a session's age is evidence
 * against that (the longer it has run, the likelier it runs on, and the rent its window pays now
 * goes on being paid), so the fold is bought sooner: FOLD_RENT_FACTOR up to FOLD_AGE_FROM turns,
 * LATE_FOLD_RENT_FACTOR from FOLD_AGE_TO, on a log scale between (ADR 0088). Earlier factors
 * were above 1 (1.6, then 1.2: ADR 0074, 0087) to keep the cached share of a 40-turn session at
 * 0.90; answers cut to 45 tokens (ADR 0088) made kept turns cheap enough that 1 keeps it there
 * (chat-40 0.504× the full-history baseline at 0.904), and the falling factor brings chat-200 to
 * 0.149× at 0.905 (a constant 1: 0.153× at 0.911; a constant 0.9: chat-40's share 0.8996).
 *
 *   const d = foldDecision({ turns: [{ turn: 3, tokens: 900 }, ...], lastTurn: 14, ... });
 *   if (d.fold > 0) fold the oldest d.fold turns; d.why says why, in one line.
 */

/** Price of a cached input token relative to a fresh one. */
export const CACHED_PRICE = 0.1;
/** Price of an output token relative to a fresh input token, when the model's prices are not set. */
export const DEFAULT_OUTPUT_PRICE = 4;
/** A fold happens once the foldable turns' rent reaches this many times its cost, in a session of up to FOLD_AGE_FROM turns (see above). */
export const FOLD_RENT_FACTOR = 1.0;
/** The factor of a session that has run FOLD_AGE_TO turns or more (see above). */
export const LATE_FOLD_RENT_FACTOR = 0.8;
/** Up to this many turns the factor is FOLD_RENT_FACTOR; it reaches LATE_FOLD_RENT_FACTOR at FOLD_AGE_TO, on a log scale between. */
export const FOLD_AGE_FROM = 40;
export const FOLD_AGE_TO = 80;

/** The factor after `lastTurn` turns: FOLD_RENT_FACTOR up to FOLD_AGE_FROM, falling to LATE_FOLD_RENT_FACTOR at FOLD_AGE_TO. */
export function foldRentFactor(lastTurn: number): number {
  if (lastTurn <= FOLD_AGE_FROM) return FOLD_RENT_FACTOR;
  const t = Math.min(1, Math.log2(lastTurn / FOLD_AGE_FROM) / Math.log2(FOLD_AGE_TO / FOLD_AGE_FROM));
  return FOLD_RENT_FACTOR + (LATE_FOLD_RENT_FACTOR - FOLD_RENT_FACTOR) * t;
}

export interface FoldEconomicsInput {
  /** The window's turns, oldest first: number and tokens as rendered. */
  turns: ReadonlyArray<{ turn: number; tokens: number }>;
  /** The last finished turn. */
  lastTurn: number;
  summaryTokens: number;
  /** Tokens before the summary that a fold leaves cached: tools, instructions. */
  fixedTokens: number;
  /** The state snapshot, re-rendered at a fold (after the summary, so re-sent). */
  stateTokens: number;
  /** Model calls per turn so far in this session (≥ 1). */
  requestsPerTurn: number;
  /** Most recent turns never folded by choice. */
  keepTurns: number;
  /** The window's hard cap in turns (SHORT_BUFFER_TURNS): at it, fold regardless. */
  maxTurns: number;
  /** What the summary grows by per folded turn, its cap, and what a rewrite at the cap makes it. */
  summaryTokensPerTurn: number;
  summaryCapTokens: number;
  summaryRewriteTokens: number;
  /** Price of an output token in fresh input tokens (default DEFAULT_OUTPUT_PRICE). */
  outputPrice?: number;
  /** Tokens of the fold request's own message (rules and task) and of the summary it returns. */
  foldMessageTokens: number;
  /** A fold happens once the rent reaches this many times its cost (default FOLD_RENT_FACTOR). */
  rentFactor?: number;
  /**
   * The last turn request's tokens and the budget. A window whose next turn would not fit (the
   * last request plus a turn the size of the newest) folds now, after the answer, instead of in
   * the next turn's build, where the user would wait for the fold request before the answer.
   */
  headroom?: { requestTokens: number; budgetTokens: number };
}

export interface FoldDecision {
  /** Oldest turns to fold now; 0 = keep the window as it is. */
  fold: number;
  reason: "window_full" | "budget" | "cost" | "none";
  /** Effective tokens the foldable turns have cost since they could fold. */
  rent: number;
  /** Effective tokens a fold costs once (the prefix break and the fold request). */
  cost: number;
  /** One line for the manifest and the transcript. */
  why: string;
}

export function foldDecision(input: FoldEconomicsInput): FoldDecision {
  const n = input.turns.length;
  const candidate = Math.max(0, n - input.keepTurns);
  if (candidate === 0) return { fold: 0, reason: "none", rent: 0, cost: 0, why: `the window holds ${n} turn(s); the last ${input.keepTurns} always stay` };

  const folded = input.turns.slice(0, candidate);
  const kept = input.turns.slice(candidate).reduce((a, t) => a + t.tokens, 0);
  const foldedTokens = folded.reduce((a, t) => a + t.tokens, 0);
  const requests = Math.max(1, input.requestsPerTurn);
  // Requests each foldable turn has been paid for since it could fold (once keepTurns newer turns existed).
  const rent = folded.reduce((a, t) => a + CACHED_PRICE * t.tokens * requests * Math.max(0, input.lastTurn - t.turn - input.keepTurns + 1), 0);
  // Under the cap the summary only grows (its old bytes stay cached); past it, it is rewritten whole.
  const growth = input.summaryTokensPerTurn * candidate;
  const rewrite = input.summaryTokens + growth > input.summaryCapTokens;
  const written = rewrite ? input.summaryRewriteTokens : growth;
  const resent = written + input.stateTokens + kept;
  const cost =
    (1 - CACHED_PRICE) * resent +
    CACHED_PRICE * (input.fixedTokens + input.summaryTokens + input.stateTokens + foldedTokens + kept) +
    input.foldMessageTokens +
    (input.outputPrice ?? DEFAULT_OUTPUT_PRICE) * written;
  const figures = `the ${candidate} oldest turns (${foldedTokens} tokens) have cost ~${Math.round(rent)} in cached re-sends since they could fold; a fold costs ~${Math.round(cost)} once (re-sending ~${Math.round(resent)} tokens after the break, the fold request, and ~${Math.round(written)} tokens of summary ${rewrite ? "rewritten at its cap" : "appended"})`;
  if (n >= input.maxTurns) return { fold: candidate, reason: "window_full", rent, cost, why: `the window is full (${n} turns): ${figures}` };
  const newest = input.turns.at(-1)?.tokens ?? 0;
  if (input.headroom && input.headroom.requestTokens + newest > input.headroom.budgetTokens) {
    const { requestTokens, budgetTokens } = input.headroom;
    return { fold: candidate, reason: "budget", rent, cost, why: `the next turn would not fit the budget (${requestTokens} + ~${newest} > ${budgetTokens} tokens), so the window folds now rather than in that turn: ${figures}` };
  }
  const factor = input.rentFactor ?? foldRentFactor(input.lastTurn);
  if (rent >= factor * cost) return { fold: candidate, reason: "cost", rent, cost, why: figures };
  return { fold: 0, reason: "none", rent, cost, why: `not folding yet: ${figures}; it folds once the rent reaches ${Number(factor.toFixed(2))}× that` };
}
