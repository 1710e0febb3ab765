/** When the window folds, by cost (src/memory/fold-economics.ts, ADR 0074). */
import { describe, expect, test } from "bun:test";
import { FOLD_AGE_FROM, FOLD_AGE_TO, FOLD_RENT_FACTOR, foldDecision, foldRentFactor, LATE_FOLD_RENT_FACTOR, type FoldEconomicsInput } from "../../src/memory/fold-economics.ts";

function input(overrides: Partial<FoldEconomicsInput> = {}): FoldEconomicsInput {
  const turns = overrides.turns ?? Array.from({ length: 8 }, (_, i) => ({ turn: i + 1, tokens: 400 }));
  return {
    turns,
    lastTurn: turns.at(-1)?.turn ?? 0,
    summaryTokens: 0,
    fixedTokens: 2000,
    stateTokens: 200,
    requestsPerTurn: 1,
    keepTurns: 3,
    maxTurns: 20,
    summaryTokensPerTurn: 40,
    summaryCapTokens: 1500,
    summaryRewriteTokens: 750,
    foldMessageTokens: 700,
    // The sums below are checked with the classic rent-or-buy factor; the default has its own test.
    rentFactor: 1,
    ...overrides,
  };
}

describe("foldDecision", () => {
  test("a window whose next turn would not fit the budget folds now, whatever the rent (not in that turn's build)", () => {
    // Small turns, no rent to speak of: kept while the budget has room for another turn like the newest.
    expect(foldDecision(input({ headroom: { requestTokens: 5000, budgetTokens: 8000 } }))).toMatchObject({ fold: 0, reason: "none" });
    const d = foldDecision(input({ headroom: { requestTokens: 7800, budgetTokens: 8000 } }));
    expect(d).toMatchObject({ fold: 5, reason: "budget" });
    expect(d.why).toStartWith("the next turn would not fit the budget (7800 + ~400 > 8000 tokens)");
  });

  test("never folds the last keepTurns turns", () => {
    const d = foldDecision(input({ turns: [{ turn: 1, tokens: 90_000 }, { turn: 2, tokens: 10 }, { turn: 3, tokens: 10 }] }));
    expect(d).toMatchObject({ fold: 0, reason: "none" });
  });

  test("small turns: the rent paid so far is below one fold's cost, so the window is kept", () => {
    const d = foldDecision(input());
    expect(d.fold).toBe(0);
    expect(d.rent).toBeLessThan(d.cost);
    expect(d.why).toStartWith("not folding yet:");
  });

  test("once the foldable turns have paid as much rent as a fold costs, all but the kept turns fold", () => {
    // Turns 1–5 could fold since turns 4–8 ago: rent 0.1 × 3500 × (5+4+3+2+1) = 5250, more than a fold costs.
    const d = foldDecision(input({ turns: Array.from({ length: 8 }, (_, i) => ({ turn: i + 1, tokens: i < 5 ? 3500 : 400 })) }));
    expect(d).toMatchObject({ fold: 5, reason: "cost" });
    expect(d.rent).toBeCloseTo(5250, 5);
    // Break: 0.9 × (200 new summary + 200 state + 1200 kept) + 0.1 × the fold request's prefix
    // (2000 + 200 + 17500 + 1200) + its 700-token message + 4 × the 200 summary tokens it writes.
    expect(d.cost).toBeCloseTo(1440 + 2090 + 700 + 800, 5);
    expect(d.why).toMatch(/the 5 oldest turns \(17500 tokens\) have cost ~5250 .* a fold costs ~5030 once .* ~200 tokens of summary appended\)$/);
  });

  test(`by default a young session folds once the rent reaches FOLD_RENT_FACTOR (${FOLD_RENT_FACTOR}) times the cost, and says so while it waits`, () => {
    const turns = (tokens: number) => Array.from({ length: 8 }, (_, i) => ({ turn: i + 1, tokens: i < 5 ? tokens : 400 }));
    // 3000-token turns: rent 0.1 × 3000 × 15 = 4500 against a fold of 1440 + 0.1 × 18400 + 700 + 800 = 4780: kept.
    const waiting = foldDecision(input({ turns: turns(3000), rentFactor: undefined }));
    expect(waiting).toMatchObject({ fold: 0, reason: "none" });
    expect(waiting.rent).toBeCloseTo(4500, 5);
    expect(waiting.cost).toBeCloseTo(4780, 5);
    expect(waiting.why).toEndWith(`it folds once the rent reaches ${FOLD_RENT_FACTOR}× that`);
    // 3500-token turns: rent 5250 against 5030.
    const folding = foldDecision(input({ turns: turns(3500), rentFactor: undefined }));
    expect(folding).toMatchObject({ fold: 5, reason: "cost" });
    expect(folding.rent).toBeGreaterThanOrEqual(FOLD_RENT_FACTOR * folding.cost);
  });

  test("the older the session, the sooner a fold pays: the same window that waits at turn 8 folds at turn 108", () => {
    // Turn numbers shifted by 100: the same rent (4500) and cost (4780), but the factor is LATE_FOLD_RENT_FACTOR.
    const turns = (from: number) => Array.from({ length: 8 }, (_, i) => ({ turn: from + i, tokens: i < 5 ? 3000 : 400 }));
    expect(foldDecision(input({ turns: turns(1), rentFactor: undefined })).fold).toBe(0);
    const late = foldDecision(input({ turns: turns(101), rentFactor: undefined }));
    expect(late).toMatchObject({ fold: 5, reason: "cost" });
    expect(late.rent).toBeCloseTo(4500, 5);
    expect(late.rent).toBeLessThan(late.cost);
    expect(late.rent).toBeGreaterThanOrEqual(LATE_FOLD_RENT_FACTOR * late.cost);
  });

  test("the factor: FOLD_RENT_FACTOR up to FOLD_AGE_FROM turns, LATE_FOLD_RENT_FACTOR from FOLD_AGE_TO, halfway at their geometric mean", () => {
    expect(foldRentFactor(1)).toBe(FOLD_RENT_FACTOR);
    expect(foldRentFactor(FOLD_AGE_FROM)).toBe(FOLD_RENT_FACTOR);
    expect(foldRentFactor(Math.sqrt(FOLD_AGE_FROM * FOLD_AGE_TO))).toBeCloseTo((FOLD_RENT_FACTOR + LATE_FOLD_RENT_FACTOR) / 2, 10);
    expect(foldRentFactor(FOLD_AGE_TO)).toBeCloseTo(LATE_FOLD_RENT_FACTOR, 10);
    expect(foldRentFactor(10_000)).toBe(LATE_FOLD_RENT_FACTOR);
    expect(LATE_FOLD_RENT_FACTOR).toBeLessThan(FOLD_RENT_FACTOR);
  });

  test("a summary at its cap is rewritten to half of it: the break and the answer both grow, so the same rent no longer pays", () => {
    const turns = Array.from({ length: 8 }, (_, i) => ({ turn: i + 1, tokens: i < 5 ? 3500 : 400 }));
    const appended = foldDecision(input({ turns, summaryTokens: 1000 }));
    const rewritten = foldDecision(input({ turns, summaryTokens: 1400 }));
    expect(appended.fold).toBe(5);
    expect(rewritten.fold).toBe(0);
    // 750 rewritten instead of 200 appended: 0.9 × 550 more re-sent, 4 × 550 more written, 0.1 × 400 more prefix.
    expect(rewritten.cost - appended.cost).toBeCloseTo(0.9 * 550 + 4 * 550 + 0.1 * 400, 5);
    expect(rewritten.why).toContain("~750 tokens of summary rewritten at its cap");
  });

  test("the model's output price weighs the summary it writes: dearer output postpones the fold", () => {
    const turns = Array.from({ length: 8 }, (_, i) => ({ turn: i + 1, tokens: i < 5 ? 3500 : 400 }));
    expect(foldDecision(input({ turns, outputPrice: 4 })).fold).toBe(5);
    expect(foldDecision(input({ turns, outputPrice: 8 })).fold).toBe(0);
    expect(foldDecision(input({ turns, outputPrice: 8 })).cost - foldDecision(input({ turns, outputPrice: 4 })).cost).toBeCloseTo(4 * 200, 5);
  });

  test("more requests per turn mean more rent: a tool-heavy session folds the same turns sooner", () => {
    const turns = Array.from({ length: 8 }, (_, i) => ({ turn: i + 1, tokens: 900 }));
    expect(foldDecision(input({ turns, requestsPerTurn: 1 })).fold).toBe(0);
    expect(foldDecision(input({ turns, requestsPerTurn: 4 })).fold).toBe(5);
  });

  test("a bigger kept part makes the break dearer, so the same rent no longer pays for it", () => {
    const turns = [...Array.from({ length: 5 }, (_, i) => ({ turn: i + 1, tokens: 3000 })), ...Array.from({ length: 3 }, (_, i) => ({ turn: i + 6, tokens: 6000 }))];
    const d = foldDecision(input({ turns }));
    expect(d.fold).toBe(0);
    expect(d.cost).toBeGreaterThan(d.rent);
  });

  test("a full window folds whatever the sums say", () => {
    const turns = Array.from({ length: 20 }, (_, i) => ({ turn: i + 1, tokens: 5 }));
    expect(foldDecision(input({ turns }))).toMatchObject({ fold: 17, reason: "window_full" });
  });
});
