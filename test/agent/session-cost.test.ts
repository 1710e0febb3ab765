/** The session's cost figures (src/agent/session-cost.ts): /cost, the status line, the json result. */
import { describe, expect, test } from "bun:test";
import { costLines, formatUsd, priceOf, pricesFor, SessionCost } from "../../src/agent/session-cost.ts";

describe("SessionCost", () => {
  test("sums turn and fold requests; effective input prices a cached token at a tenth", () => {
    const cost = new SessionCost();
    cost.add({ input: 2000, cached: 0, output: 100 }, "turn");
    cost.add({ input: 5000, cached: 4096, output: 300 }, "turn");
    cost.add({ input: 5200, cached: 4992, output: 400 }, "fold");
    const f = cost.figures();
    expect(f).toMatchObject({ requests: 3, foldRequests: 1, input: 12200, cached: 9088, output: 800 });
    expect(f.cachedShare).toBeCloseTo(9088 / 12200, 10);
    expect(f.effectiveInput).toBeCloseTo(12200 - 9088 + 908.8, 6);
    expect(f.usd).toBeUndefined();
    // The fold's own part: what the memory itself cost.
    expect(f.fold).toEqual({ input: 5200, cached: 4992, output: 400 });
  });

  test("/cost names what folding the window cost, priced when prices are set", () => {
    const cost = new SessionCost();
    cost.add({ input: 10_000, cached: 8_192, output: 500 }, "turn");
    expect(costLines(cost.figures(), undefined).join("\n")).not.toContain("folding");
    cost.add({ input: 12_000, cached: 11_904, output: 600 }, "fold");
    const lines = costLines(cost.figures(), undefined);
    expect(lines).toContain("of which folding the window (the memory's own cost): 12k input (99% cached), effective 1.3k, 600 output");
    const priced = costLines(cost.figures({ input: 1, output: 4 }), { input: 1, output: 4 });
    // 96 uncached + 11,904 × 0.1 cached at $1/M, 600 output at $4/M.
    expect(priced).toContain(`of which folding the window (the memory's own cost): 12k input (99% cached), effective 1.3k, 600 output, $${((96 + 1190.4 + 2400) / 1e6).toFixed(4)}`);
  });

  test("with prices: USD per million tokens, cached input at its own price or a tenth of input", () => {
    const usage = { input: 1_000_000, cached: 500_000, output: 100_000 };
    expect(priceOf(usage, { input: 2, output: 8 })).toBeCloseTo(0.5 * 2 + 0.5 * 0.2 + 0.1 * 8, 10);
    expect(priceOf(usage, { input: 2, cachedInput: 0.5, output: 8 })).toBeCloseTo(1 + 0.25 + 0.8, 10);
    const cost = new SessionCost();
    cost.add({ input: 1_000_000, cached: 500_000, output: 100_000 }, "turn");
    expect(cost.figures({ input: 2, output: 8 }).usd).toBeCloseTo(1.9, 10);
  });

  test("/cost and the status line say what they show, and how to get a price", () => {
    const cost = new SessionCost();
    expect(costLines(cost.figures(), undefined)).toEqual(["no model call has reported its usage yet in this session (a server that never sends usage shows none)"]);
    expect(costLines(cost.figures(), undefined, { resumed: true })).toEqual(["no model call has reported its usage yet since this session was resumed (earlier runs are not counted)"]);
    cost.add({ input: 10_000, cached: 8_192, output: 500 }, "turn");
    const lines = costLines(cost.figures(), undefined);
    expect(lines.join("\n")).toContain("10k tokens, 8.2k of them cached (82%)");
    expect(lines.join("\n")).toContain("effective input: 2.6k tokens");
    expect(lines.at(-1)).toContain('set "prices"');
    const priced = costLines(cost.figures({ input: 1.25, output: 10 }), { input: 1.25, output: 10 });
    expect(priced.at(-1)).toMatch(/^estimate: \$0\.\d{4} at \$1\.25\/M input/);
    expect(costLines(cost.figures(), undefined, { resumed: true })[0]).toBe("figures since this session was resumed (earlier runs are not counted)");
  });

  test("dollars: four decimals under $1, two above; prices as written (0.4 × 0.1 is $0.04/M)", () => {
    expect([formatUsd(0.0042), formatUsd(0), formatUsd(12.345), formatUsd(Number.POSITIVE_INFINITY)]).toEqual(["$0.0042", "$0.0000", "$12.35", "$?"]);
    const cost = new SessionCost();
    cost.add({ input: 1000, cached: 0, output: 10 }, "turn");
    expect(costLines(cost.figures({ input: 0.4, output: 1.6 }), { input: 0.4, output: 1.6 }).at(-1)).toBe('estimate: $0.0004 at $0.4/M input, $0.04/M cached, $1.6/M output (settings "prices")');
  });

  test("a request is priced when it is made; requests made without prices are priced at the prices known later", () => {
    const cost = new SessionCost();
    cost.add({ input: 1_000_000, cached: 0, output: 0 }, "turn", { input: 2, output: 8 });
    cost.add({ input: 1_000_000, cached: 0, output: 0 }, "turn");
    expect(cost.figures().usd).toBeUndefined();
    expect(cost.figures({ input: 0.5, output: 2 }).usd).toBeCloseTo(2.5, 10);
    expect(pricesFor({ model: "m", prices: { input: 1, output: 1 }, modelPrices: { m: { input: 3, output: 3 } } })).toEqual({ input: 3, output: 3 });
    expect(pricesFor({ model: "toString", prices: { input: 1, output: 1 }, modelPrices: {} })).toEqual({ input: 1, output: 1 });
  });
});
