import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { SettingsSchema, type Settings } from "../../src/config/settings-schema.ts";
import { exactCounter } from "../../src/prompt/builder.ts";
import { commonPrefixLength, prefixShare } from "../../src/prompt/prefix-share.ts";
import type { InputItem } from "../../src/model/types.ts";
import { toolSpecs } from "../../src/tools/registry.ts";
import { scriptedConversation } from "./support/scripted-conversation.ts";

// The real defaults of the settings schema, so the test follows them when they change.
const DEFAULTS = Value.Default(SettingsSchema, {}) as Settings;

describe("prefix cache friendliness", () => {
  test("commonPrefixLength", () => {
    expect(commonPrefixLength("abcdef", "abcxyz")).toBe(3);
    expect(commonPrefixLength("a".repeat(1000), `${"a".repeat(700)}b`)).toBe(700);
  });

  test("a scripted 40-turn conversation at default settings: between folds each request repeats the previous one through its user message (ADR 0074)", async () => {
    const count = await exactCounter();
    const shares: number[] = [];
    let previous: Parameters<typeof prefixShare>[0] | undefined;
    let folds = 0;
    let appends = 0;
    // The last of the user's own messages (not a data message: those start with one of valarmind's tags).
    const userIndex = (input: readonly InputItem[]) => input.findLastIndex((item) => item.type === "message" && item.role === "user" && !item.content.startsWith("<"));
    for await (const r of scriptedConversation({ turns: 40, settings: DEFAULTS, tools: toolSpecs() })) {
      const folded = r.manifest.memory_events.some((e) => e.type === "window_folded");
      if (folded) folds++;
      if (previous) {
        shares.push(prefixShare(previous, r.request, count).share);
        if (!folded) {
          // Everything the previous request sent up to and including its user message is sent again, unchanged.
          const through = userIndex(previous.input) + 1;
          expect(through).toBeGreaterThan(0);
          expect(r.request.tools).toEqual(previous.tools);
          expect(r.request.instructions).toBe(previous.instructions);
          expect(r.request.input.slice(0, through)).toEqual(previous.input.slice(0, through));
          appends++;
        }
      }
      previous = r.request;
      expect(r.manifest.total_tokens).toBeLessThanOrEqual(DEFAULTS.maxContextTokens);
    }
    expect(shares.length).toBeGreaterThan(80);
    // The window is capped at SHORT_BUFFER_TURNS: a 40-turn session folds; every other request simply appends.
    expect(folds).toBeGreaterThanOrEqual(1);
    expect(appends).toBeGreaterThanOrEqual(shares.length - folds);
  });
});
