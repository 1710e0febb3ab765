/** When the window folds, by cost (src/memory/fold-economics.ts, ADR 0074). */
import { describe, expect, test } from "bun:test";
import { foldDecision, type FoldEconomicsInput } from "../../src/memory/fold-economics.ts";

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
    ...overrides,
  };
}

describe("foldDecision", () => {
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
