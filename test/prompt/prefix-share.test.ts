import { describe, expect, test } from "bun:test";
import { exactCounter } from "../../src/prompt/builder.ts";
import { commonPrefixLength, prefixShare } from "../../src/prompt/prefix-share.ts";
import { toolSpecs } from "../../src/tools/registry.ts";
import { scriptedConversation } from "./support/scripted-conversation.ts";

const DEFAULTS = { model: "gpt-5.5", maxContextTokens: 24000, toolOutputTokens: 2000, windowBlockTurns: 8, reasoningEffort: "medium", shortBufferTurns: 24, workingSetTokens: 4000 } as const;

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
    expect(folds).toBe(2); // the window slid twice (turns 25 and 33), a block at a time
    expect(average).toBeGreaterThanOrEqual(0.85);
  });
});
