import { describe, expect, test } from "bun:test";
import { shortenHeadTail } from "../../src/prompt/shorten.ts";

// A stand-in for o200k: one token per 4 UTF-16 units, rounded up.
const fourPerToken = (s: string): number => Math.ceil(s.length / 4);

describe("shortenHeadTail", () => {
  test("leaves text within the cap untouched and reports its exact count", () => {
    expect(shortenHeadTail("short text", 100, fourPerToken)).toEqual({ text: "short text", shortened: false, tokens: 3 });
  });

  test("keeps the head and tail of many lines, cut at line boundaries, with the omitted tokens in the marker", () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join("\n");
    const out = shortenHeadTail(text, 200, fourPerToken);
    expect(out.shortened).toBe(true);
    expect(out.tokens).toBe(fourPerToken(text));
    expect(fourPerToken(out.text)).toBeLessThanOrEqual(200);
    expect(out.text.startsWith("line 1\nline 2\n")).toBe(true);
    expect(out.text.endsWith("line 1000")).toBe(true);
    expect(out.text).toMatch(/\[… \d+ lines, \d+ tokens omitted …\]/);
  });

  test("a 5 MB single line is cut before counting: only its head and tail windows are counted (issue 9)", () => {
    const text = `${"h".repeat(2_500_000)}${"t".repeat(2_500_000)}`;
    let longest = 0;
    const count = (s: string): number => {
      longest = Math.max(longest, s.length);
      return fourPerToken(s);
    };
    const out = shortenHeadTail(text, 2000, count);
    expect(longest).toBeLessThanOrEqual(2 * 2000 * 8 + 200);
    expect(out.shortened).toBe(true);
    expect(fourPerToken(out.text)).toBeLessThanOrEqual(2000);
    expect(out.text.startsWith("hhh")).toBe(true);
    expect(out.text.endsWith("ttt")).toBe(true);
    // Too long to count whole: the marker and `tokens` give bytes, an upper bound, not a token count.
    expect(out.text).toMatch(/\[… \d+ bytes omitted …\]/);
    expect(out.tokens).toBe(5_000_000);
  });
});
