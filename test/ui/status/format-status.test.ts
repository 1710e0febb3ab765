import { describe, expect, test } from "bun:test";
import { budgetBar, formatTokens, statusFields } from "../../../src/ui/status/format-status.ts";
import { defaultStatus } from "../../support/fake-controller.ts";

describe("status figures", () => {
  test("token counts are short", () => {
    expect([formatTokens(950), formatTokens(1234), formatTokens(45_600), formatTokens(1_250_000)]).toEqual([
      "950",
      "1.2k",
      "46k",
      "1.3M",
    ]);
  });

  test("the bar shows the share of the budget, clamped", () => {
    expect(budgetBar(50, 100, 8)).toEqual({ filled: "████", empty: "░░░░", share: 0.5 });
    expect(budgetBar(500, 100, 4).filled).toBe("████");
    expect(budgetBar(1, 0, 4).filled).toBe("");
  });

  test("cached share is a dash before any request; an empty goal says how to set one", () => {
    const fields = statusFields({ ...defaultStatus, cachedShare: undefined });
    expect(fields.cached).toBe("–");
    expect(fields.goal).toContain("/goal");
    expect(statusFields({ ...defaultStatus, cachedShare: 0.834 }).cached).toBe("83%");
  });
});
