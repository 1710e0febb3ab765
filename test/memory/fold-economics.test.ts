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
    // Turns 1–5 could fold since turns 4–8 ago: rent 0.1 × 3000 × (5+4+3+2+1) = 4500, more than a fold costs.
    const d = foldDecision(input({ turns: Array.from({ length: 8 }, (_, i) => ({ turn: i + 1, tokens: i < 5 ? 3000 : 400 })) }));
    expect(d).toMatchObject({ fold: 5, reason: "cost" });
    expect(d.rent).toBeCloseTo(4500, 5);
    expect(d.rent).toBeGreaterThanOrEqual(d.cost);
    expect(d.why).toMatch(/the 5 oldest turns \(15000 tokens\) have cost ~4500 .* a fold costs ~\d+ once/);
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
