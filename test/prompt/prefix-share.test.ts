import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { SettingsSchema, type Settings } from "../../src/config/settings-schema.ts";
import { exactCounter } from "../../src/prompt/builder.ts";
import { commonPrefixLength, prefixShare } from "../../src/prompt/prefix-share.ts";
import { toolSpecs } from "../../src/tools/registry.ts";
import { scriptedConversation } from "./support/scripted-conversation.ts";

// The real defaults of the settings schema, so the test follows them when they change.
const DEFAULTS = Value.Default(SettingsSchema, {}) as Settings;

describe("prefix cache friendliness", () => {
  test("commonPrefixLength", () => {
    expect(commonPrefixLength("abcdef", "abcxyz")).toBe(3);
    expect(commonPrefixLength("a".repeat(1000), `${"a".repeat(700)}b`)).toBe(700);
  });

  test("a scripted 40-turn conversation at default settings keeps ≥ 0.85 of each request as an unchanged prefix on average", async () => {
    const count = await exactCounter();
    const shares: number[] = [];
    let previous: Parameters<typeof prefixShare>[0] | undefined;
    let folds = 0;
    for await (const r of scriptedConversation({ turns: 40, settings: DEFAULTS, tools: toolSpecs() })) {
      if (previous) shares.push(prefixShare(previous, r.request, count).share);
      if (r.manifest.memory_events.some((e) => e.type === "window_folded")) folds++;
      previous = r.request;
      expect(r.manifest.total_tokens).toBeLessThanOrEqual(DEFAULTS.maxContextTokens);
    }
    const average = shares.reduce((a, b) => a + b, 0) / shares.length;
    expect(shares.length).toBeGreaterThan(80);
    // The window holds SHORT_BUFFER_TURNS turns counting the current one; from then on it folds a block at a time.
    // Folds at the ends of turns 1–39 show in the next request (the fold after turn 40 has no next request).
    const foldSize = Math.max(1, Math.floor(DEFAULTS.shortBufferTurns / 2 / DEFAULTS.windowBlockTurns)) * DEFAULTS.windowBlockTurns;
    const expectedFolds = Math.floor((39 - DEFAULTS.shortBufferTurns) / foldSize) + 1;
    expect(folds).toBe(expectedFolds);
    expect(average).toBeGreaterThanOrEqual(0.85);
  });
});
