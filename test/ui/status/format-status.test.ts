import { describe, expect, test } from "bun:test";
import { createElement } from "react";
import { render } from "ink-testing-library";
import { budgetBar, formatTokens, statusFields } from "../../../src/ui/status/format-status.ts";
import { StatusLine } from "../../../src/ui/status/status-line.tsx";
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

  test("the last request's share of the model's context window stands beside the budget's", () => {
    const fields = statusFields({ ...defaultStatus, promptTokens: 12_000, budgetTokens: 24_000, contextWindowTokens: 400_000 });
    expect(fields.prompt).toBe("12k/24k");
    expect(fields.share).toBe(0.5);
    expect(fields.window).toBe("3% of 400k");
    expect(statusFields({ ...defaultStatus, promptTokens: 900, contextWindowTokens: 1_047_576 }).window).toBe("<1% of 1.0M");
    expect(statusFields({ ...defaultStatus, promptTokens: 0, contextWindowTokens: 128_000 }).window).toBe("0% of 128k");
  });

  test("an unknown window (no setting, a model the core does not know) shows only the budget's share", () => {
    const fields = statusFields({ ...defaultStatus, promptTokens: 6000, budgetTokens: 24_000 });
    expect(fields.window).toBeUndefined();
    expect(fields.share).toBe(0.25);
  });

  test("the status line shows the window's share after the budget bar, and nothing for an unknown window", () => {
    const known = render(createElement(StatusLine, { status: { ...defaultStatus, model: "gpt-5", promptTokens: 12_000, budgetTokens: 24_000, contextWindowTokens: 400_000 } }));
    expect(known.lastFrame()).toContain("gpt-5 · prompt 12k/24k ████░░░░ · window 3% of 400k · cached");
    known.unmount();
    const unknown = render(createElement(StatusLine, { status: { ...defaultStatus, promptTokens: 12_000, budgetTokens: 24_000 } }));
    expect(unknown.lastFrame()).toContain("prompt 12k/24k ████░░░░ · cached");
    expect(unknown.lastFrame()).not.toContain("window");
    unknown.unmount();
  });
});
